"""A receiver's background threads: the checkpointer's and the metrics' loops.

Each loop runs its pass every interval until the receiver stops; the checkpointer's also
runs as soon as it is woken (a batch completed a shard's last range, so the shard's end
and its children's leases are written now, not an interval later). A failed pass is
retried at the next one, and failures are reported at a bounded rate
(:class:`~..backoff.RetryLog`: the first with its traceback), not a traceback a pass
through an outage. The receiver owns a :class:`ReceiverLoops`: started once with the
receiver, stopped by :meth:`ReceiverLoops.stop` (one stop signal, then a bounded join).
"""

from __future__ import annotations

import logging
import threading
from typing import Callable, Optional

from ..backoff import RetryLog

log = logging.getLogger(__name__)


class ReceiverLoops:
    """The checkpointer and metrics threads of one receiver (stream ``stream_id``)."""

    def __init__(
        self,
        stream_name: str,
        stream_id: str,
        checkpoint: tuple,
        metrics: tuple,
        join_timeout_s: float,
    ) -> None:
        """``checkpoint`` and ``metrics``: (interval in seconds, the pass to run)."""
        self._stream_name = stream_name
        self._stream_id = stream_id
        self._checkpoint_interval_s, self._checkpoint_pass = checkpoint
        self._metrics_interval_s, self._metrics_pass = metrics
        self._join_timeout_s = join_timeout_s
        self._stopping = threading.Event()
        self._wake_checkpointer = threading.Event()
        self._threads: list = []

    def start(self) -> None:
        """Start both threads (once, when the receiver starts)."""
        loops = [
            (
                "checkpointer",
                "checkpointing",
                self._checkpoint_interval_s,
                self._checkpoint_pass,
                self._wake_checkpointer,
            ),
            ("metrics", "metrics", self._metrics_interval_s, self._metrics_pass, None),
        ]
        for name, what, interval_s, work, wake in loops:
            thread = threading.Thread(
                target=self._loop,
                args=(what, interval_s, work, wake),
                name=f"kinesis-{name}-{self._stream_id}",
                daemon=True,
            )
            thread.start()
            self._threads.append(thread)

    def wake_checkpointer(self) -> None:
        """Run a checkpoint pass now (a shard's end may be written)."""
        self._wake_checkpointer.set()

    def stop(self) -> None:
        """Signal both loops and join each, at most ``join_timeout_s``; a thread still in
        its pass is reported and ends after it."""
        self._stopping.set()
        self._wake_checkpointer.set()
        for thread in self._threads:
            thread.join(timeout=self._join_timeout_s)
            if thread.is_alive():
                log.error(
                    "receiver thread %s did not stop in %.0fs", thread.name, self._join_timeout_s
                )

    def _loop(
        self,
        what: str,
        interval_s: float,
        work: Callable[[], object],
        wake: Optional[threading.Event],
    ) -> None:
        """Run ``work`` every ``interval_s`` (and when ``wake`` is set) until the stop."""
        failures = RetryLog(
            log, f"{what} of stream {self._stream_name}", level=logging.ERROR, traceback=True
        )
        signal = wake if wake is not None else self._stopping
        while True:
            signal.wait(interval_s)
            if self._stopping.is_set():
                return
            if wake is not None:
                wake.clear()
            try:
                work()
            except Exception as exc:  # retried next pass; never kill the loop
                failures.failed(exc)
            else:
                failures.succeeded()
