"""Periodic threads with one owner, one stop signal and a bounded join.

A lease worker's renewer, taker, shard sync and parent checker, and a receiver's
checkpointer and metrics threads are each such a loop. Each runs its work at a fixed rate
until stopped; a loop given a wake event also runs as soon as it is set (the parent
checker when a shard ends, the checkpointer when a batch completes a shard's last range).
A failed pass is retried at the next interval: one bad pass never kills a loop. Failures
are counted and reported at a bounded rate (:class:`~.backoff.RetryLog`: the first at once
with its traceback, then one line per 30 s with the count), so an outage of DynamoDB is
not a traceback every renewal interval.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Callable, Optional

from .backoff import RetryLog

log = logging.getLogger(__name__)


def time_left(deadline: float) -> float:
    """Seconds until ``deadline`` (monotonic), never negative."""
    return max(0.0, deadline - time.monotonic())


class PeriodicLoops:
    """The threads of one owner; :meth:`stop` sets the one stop signal and joins them.

    A loop ``name``'s thread is ``{kind}-{name}-{owner}``; its failures are reported as
    ``{kind} {name} pass of {subject}`` on ``logger`` (the owner's module's).
    """

    def __init__(
        self,
        kind: str,
        owner: str,
        subject: str,
        logger: logging.Logger = log,
    ) -> None:
        self.kind = kind
        self.owner = owner
        self.subject = subject
        self.log = logger
        self.stopping = threading.Event()
        self._threads: list = []

    def reopen(self) -> None:
        """Clear the stop signal before a (re)start."""
        self.stopping.clear()

    def spawn(
        self,
        name: str,
        interval_s: float,
        work: Callable[[], object],
        wake: Optional[threading.Event] = None,
    ) -> None:
        """Run ``work`` every ``interval_s`` (and whenever ``wake`` is set) until stopped."""
        thread = threading.Thread(
            target=self._loop,
            args=(name, interval_s, work, wake),
            name=f"{self.kind}-{name}-{self.owner}",
            daemon=True,
        )
        thread.start()
        self._threads.append(thread)

    def _loop(
        self,
        name: str,
        interval_s: float,
        work: Callable[[], object],
        wake: Optional[threading.Event],
    ) -> None:
        signal = wake if wake is not None else self.stopping
        what = f"{self.kind} {name} pass of {self.subject}"
        failures = RetryLog(self.log, what, level=logging.ERROR, traceback=True)
        next_at = time.monotonic() + interval_s
        while True:
            woken = signal.wait(time_left(next_at))
            if self.stopping.is_set():
                return
            now = time.monotonic()
            if wake is not None and woken:
                wake.clear()
                next_at = now + interval_s  # a woken pass restarts the interval from now
            else:
                next_at = max(next_at + interval_s, now + interval_s / 2)
            try:
                work()
            except Exception as exc:  # a failed pass is retried next interval; never kill the loop
                failures.failed(exc)
            else:
                failures.succeeded()

    def stop(self, join_by: float, *wakes: threading.Event) -> None:
        """Signal every loop (and set ``wakes``, so woken loops see it), join each by
        ``join_by``; a thread still in its call is reported and ends after it."""
        self.stopping.set()
        for wake in wakes:
            wake.set()
        for thread in self._threads:
            thread.join(timeout=time_left(join_by))
            if thread.is_alive():
                self.log.error(
                    "thread %s did not stop in time; it ends after its call", thread.name
                )
        self._threads = []
