"""Where batch ``t`` is cut: the rounds recorded by ``t``, and the round running at ``t``.

The round pacer (:mod:`.pacing`) times a batch's closing round to end just before the
batch time, from the lengths of recent rounds; a round that takes longer (a busy shard's
full page, a wave of tasks waiting for a core, other work on the machine) would end just
after it, and its records would wait a whole batch interval for the next batch. So when
Spark asks for batch ``t`` while a round that started before ``t`` is still running, the
batch waits for that round to be recorded, at most :func:`cut_wait_s` (half a batch
interval, at most one fetch interval): the batch then holds the round's records, and
comes out late by the wait instead of a batch interval. A round that started at or after
``t`` is never waited for, nor one expected (from the recent rounds' lengths) to end
after the wait's bound: when rounds run as long as the interval (an overloaded machine),
every batch would otherwise wait the whole bound for nothing. Batch ``t`` is still cut
once, when Spark first asks for it (asked again, it is the same batch), so determinism
and the ledger are unchanged.

:class:`RoundInFlight` is the round thread's mark of the round it is running;
:class:`BatchCuts` gives every stream's cut of one batch time one deadline. Pure
threading, no Spark, no AWS.
"""

from __future__ import annotations

import threading
import time
from typing import Callable, Optional


def cut_wait_s(batch_interval_s: Optional[float], fetch_interval_s: float) -> float:
    """The longest a batch waits for the round running at its time: half a batch interval
    (the round's records would otherwise wait a whole one), at most one fetch interval
    (with several rounds a batch, the earlier rounds' records wait too). Without a known
    batch interval, half a fetch interval."""
    return min(fetch_interval_s, (batch_interval_s or fetch_interval_s) / 2)


class RoundInFlight:
    """The round running now (its start, wall-clock seconds), for a batch cut to wait for.

    The round thread calls :meth:`started` and :meth:`ended` (also when the round fails);
    :meth:`close` (the receiver stops) wakes every waiter for good. Thread-safe.
    """

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self._clock = clock  # the wait's deadline (never moved by a wall-clock step)
        self._wall_clock = wall_clock  # the rounds' starts and the batch times
        self._changed = threading.Condition()
        self._started_at: Optional[float] = None
        self._expected_end: Optional[float] = None
        self._closed = False

    def started(self, at_s: float, expected_s: Optional[float] = None) -> None:
        """A round started at wall-clock time ``at_s``, expected to take ``expected_s``
        (None: unknown, as long as any wait allows)."""
        with self._changed:
            self._started_at = at_s
            self._expected_end = None if expected_s is None else at_s + expected_s

    def ended(self) -> None:
        """The round is recorded (or failed): waiters go on."""
        with self._changed:
            self._started_at = None
            self._changed.notify_all()

    def close(self) -> None:
        """No more rounds: every wait returns now and later ones do not wait."""
        with self._changed:
            self._closed = True
            self._changed.notify_all()

    def wait_before(self, cut_s: float, timeout_s: float, since: Optional[float] = None) -> bool:
        """Wait while a round that started before wall-clock time ``cut_s`` runs, until
        ``timeout_s`` after ``since`` (a time of the monotonic clock, at most now; default
        now). True when none runs (any more); False when the wait ran out, or was not even
        begun: the round is expected to end after the wait's deadline.

        The deadline and the expected end are compared from one reference: a batch cut
        late (Spark's job generator behind) waits ``timeout_s`` from its cut, so a round
        expected to end within that is waited for; a cut asked before its time, likewise,
        does not begin a wait that cannot reach the round's end."""
        now = self._clock()
        reference = now if since is None else min(since, now)
        deadline = reference + timeout_s
        deadline_wall = self._wall_clock() - (now - reference) + timeout_s
        with self._changed:
            running = self._started_at is not None and self._started_at < cut_s
            expected = self._expected_end
            if running and expected is not None and expected > deadline_wall:
                return False  # it would run past the deadline anyway: cut without it
            while not self._closed and self._started_at is not None and self._started_at < cut_s:
                remaining = deadline - self._clock()
                if remaining <= 0:
                    return False
                self._changed.wait(remaining)
            return True


class BatchCuts:
    """When each batch time was first cut in this process: the one start of its wait.

    Spark cuts batch ``t`` of every input stream in turn, on its job generator thread.
    Several ``createStream`` calls in one application would each wait their own bound
    one after another (N streams: up to N bounds a batch); measured from the first cut of
    ``t``, they share one deadline, and a stream cut after it does not wait at all (its
    round goes to the next batch, as any round past the bound does). A few recent batch
    times are kept (cuts of one time come together). Thread-safe.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic, keep: int = 8) -> None:
        self._clock = clock
        self._keep = keep
        self._lock = threading.Lock()
        self._first: dict = {}  # batch time (ms) -> its first cut (monotonic s)

    def wait(self, in_flight: RoundInFlight, batch_ms: int, timeout_s: float) -> bool:
        """``in_flight.wait_before`` for batch ``batch_ms``, bounded from its first cut."""
        with self._lock:
            since = self._first.setdefault(batch_ms, self._clock())
            while len(self._first) > self._keep:
                del self._first[min(self._first)]
        return in_flight.wait_before(batch_ms / 1000, timeout_s, since)


#: The cuts of this process (every receiver's round thread).
BATCH_CUTS = BatchCuts()
