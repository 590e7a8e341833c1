"""Renewal passes (every held lease's counter bumped in parallel on a bounded pool)
and releases.

One pass submits one renewal per held lease to the coordinator's
:class:`~.thread_pool.ThreadPool` (the KCL renews on 20 threads) and waits at most
``renewal_timeout_s`` for them. Each lease is isolated from the others:

- a renewal still queued or running from an earlier pass (a hung call) is not queued
  again; only that lease misses renewals, and it is fenced if it misses them for a
  whole failover period;
- a renewal never waits for the lease's write lock: if a checkpoint or release is
  writing the lease, that write moves the counter itself, so the renewal is skipped;
- a failed call is logged and retried by the next pass; a lost condition (another
  worker took the lease) drops only that lease.

- a write that raised (a timeout) may still have landed, so the next write to that lease
  (renewal, checkpoint or release) first reads it back once
  (:func:`~.lease_writes.settle_unanswered`),
  as the KCL's ``renewLease`` does after a lost condition: a lease holding what our
  unanswered write wrote is still ours, counted as renewed when that write was sent.

No other read happens here: parent readiness and Kinesis calls are the coordinator's other
threads' work, so nothing but the renewal write (and that one read) can slow a pass.

A release (at stop, or of a lease the application cannot read) removes our ownership
with a conditional write, under the same write lock, waiting for it until a deadline.
"""

from __future__ import annotations

import collections
import logging
import threading
import time
from concurrent.futures import wait
from dataclasses import dataclass
from typing import Callable, Optional

from .held import HeldLease, HeldLeases
from .lease_writes import Settled, handed_off_lease, handoff_begun, settle_unanswered, unsure_write
from .refresher import LeaseRefresher
from .thread_pool import ThreadPool
from .timing import LeaseTimings

log = logging.getLogger(__name__)

_PASS_HISTORY = 10_000


@dataclass(frozen=True)
class RenewalStats:
    """What the renewer did since start (for metrics, tests and benchmarks)."""

    passes: int
    #: Durations of completed passes with at least one lease: start to last call's return.
    pass_times_s: tuple
    renewals: int  # successful renewal writes
    failures: int  # renewal calls that raised
    skipped: int  # leases not renewed in a pass: still in flight, or another write ran
    #: The longest time between two successful writes of one lease (fenced beyond F).
    max_gap_s: float


class _Pass:
    """Counts one pass's calls down; when the last returns, records the pass time and
    logs its failures in one line (a thousand leases must not mean a thousand lines)."""

    def __init__(self, started: float, calls: int, record: Callable[[float], None]) -> None:
        self.started = started
        self._calls = self._remaining = calls
        self._last = started
        self._record = record
        self._failures = 0
        self._first_failure = ""
        self._lock = threading.Lock()

    def call_failed(self, key: str, exc: Exception) -> None:
        with self._lock:
            self._failures += 1
            self._first_failure = self._first_failure or f"lease {key}: {exc}"

    def call_returned(self, at: float) -> None:
        with self._lock:
            self._remaining -= 1
            self._last = max(self._last, at)
            finished = self._remaining == 0
        if not finished:
            return
        self._record(self._last - self.started)
        if self._failures:
            log.warning(
                "%d of %d lease renewals failed this pass (first: %s); each is retried next "
                "pass and given up if not renewed within the failover time",
                self._failures,
                self._calls,
                self._first_failure,
            )


class LeaseRenewer:
    """Renews a worker's held leases; tells ``on_lost`` of each lease another worker took."""

    def __init__(
        self,
        table: LeaseRefresher,
        held: HeldLeases,
        timings: LeaseTimings,
        clock: Callable[[], float],
        on_lost: Callable[[HeldLease, str], None],
        on_handoff: Optional[Callable[[HeldLease], None]] = None,
        throughput_kbps: Optional[Callable[[str], Optional[float]]] = None,
    ) -> None:
        self.table = table
        self._held = held
        self._timings = timings
        self._clock = clock
        self._on_lost = on_lost
        #: Told when a KCL 3.x leader hands a lease we hold to another worker.
        self._on_handoff = on_handoff
        #: The lease's KB/s to write with a renewal (None: not in a KCL 3.x fleet).
        self._throughput_kbps = throughput_kbps or (lambda key: None)
        self._lock = threading.Lock()  # guards the statistics below
        self._passes = 0
        self._pass_times: collections.deque = collections.deque(maxlen=_PASS_HISTORY)
        self._renewals = 0
        self._failures = 0
        self._skipped = 0
        self._max_gap_s = 0.0

    def renew_all(self, pool: ThreadPool) -> None:
        """One pass; returns when every call returned or after ``renewal_timeout_s``."""
        started = self._clock()
        claimed, in_flight = self._held.claim_for_renewal()
        if in_flight:
            log.warning(
                "%d lease renewal(s) from an earlier pass still in flight: not renewed again "
                "this pass",
                in_flight,
            )
        with self._lock:
            self._passes += 1
            self._skipped += in_flight
        if not claimed:
            return
        tracker = _Pass(started, len(claimed), self._record_pass)
        futures = []
        for entry in claimed:
            try:
                futures.append(pool.submit(self._renew, entry, tracker))
            except RuntimeError:  # the pool is shutting down: so is the coordinator
                self._held.renewal_done(entry)
        wait(futures, timeout=self._timings.renewal_timeout_s)

    def _renew(self, entry: HeldLease, tracker: _Pass) -> None:
        lost = handoff = False
        try:
            if not entry.write_lock.acquire(blocking=False):
                self._count(skipped=1)  # a checkpoint or release is moving the counter
                return
            try:
                if not self._held.is_current(entry):
                    return
                try:
                    settled = settle_unanswered(self.table, self._held, entry)
                    if settled is not Settled.OURS:
                        # (a handoff read back goes on as one found by a renewal)
                        handoff = settled is Settled.HANDED_OFF and self._on_handoff is not None
                        lost = not handoff
                        return
                    sent_at = self._clock()
                    kbps = self._throughput_kbps(entry.key)
                    renewed = unsure_write(entry, sent_at, self.table.renew, entry.lease, kbps)
                    if renewed is None:
                        handoff = self._handoff_started(entry, sent_at)
                except Exception as exc:  # retried by the next pass; fenced if it persists
                    self._count(failures=1)
                    tracker.call_failed(entry.key, exc)
                    log.debug("could not renew lease %s: %s", entry.key, exc)
                    return
                if renewed is None:
                    lost = not handoff
                    return
                previous = entry.renewed_at
                if self._held.written(entry, renewed, sent_at):
                    self._count(renewals=1, gap_s=sent_at - previous)
            finally:
                entry.write_lock.release()
        finally:
            self._held.renewal_done(entry)
            tracker.call_returned(self._clock())
            if lost:  # listeners are told outside the lease's write lock
                self._on_lost(entry, "another worker took it")
            elif handoff and self._on_handoff is not None:
                self._on_handoff(entry)

    def _handoff_started(self, entry: HeldLease, sent_at: float) -> bool:
        if self._on_handoff is None:
            return False
        return handoff_begun(self.table, self._held, entry, sent_at)

    def _count(
        self, *, renewals: int = 0, failures: int = 0, skipped: int = 0, gap_s: float = 0.0
    ) -> None:
        with self._lock:
            self._renewals += renewals
            self._failures += failures
            self._skipped += skipped
            self._max_gap_s = max(self._max_gap_s, gap_s)

    def _record_pass(self, duration_s: float) -> None:
        with self._lock:
            self._pass_times.append(duration_s)
        if duration_s > self._timings.renewal_interval_s:
            log.warning(
                "a renewal pass took %.2fs, longer than the renewal interval %.2fs",
                duration_s,
                self._timings.renewal_interval_s,
            )

    def release(self, entry: HeldLease, deadline: float) -> bool:
        """Evict ``entry``'s lease (conditional), waiting until ``deadline`` (monotonic) at most."""
        if not entry.write_lock.acquire(timeout=max(0.0, deadline - time.monotonic())):
            log.warning("lease %s not released: another write to it is still running", entry.key)
            return False
        try:
            if settle_unanswered(self.table, self._held, entry) is Settled.LOST:
                return False  # no longer ours: nothing to release
            # A lease we hand off goes to the owner the leader named; any other is freed.
            give = self.table.transfer if entry.lease.checkpoint_owner else self.table.evict
            released = unsure_write(entry, self._clock(), give, entry.lease)
            handing = None if released is not None else handed_off_lease(self.table, entry)
            if handing is not None:  # a handoff began since our last write: finish it
                log.info("lease %s: handed off at release to %s", entry.key, handing.lease_owner)
                released = unsure_write(entry, self._clock(), self.table.transfer, handing)
        except Exception as exc:
            log.warning("could not release lease %s: %s; it expires instead", entry.key, exc)
            return False
        finally:
            entry.write_lock.release()
        if released is None:
            log.warning("lease %s was not released (it moved); it will expire", entry.key)
        return released is not None

    def release_all(self, pool: ThreadPool, entries: list, deadline: float) -> None:
        """Release ``entries`` in parallel on ``pool``, waiting until ``deadline`` at most
        (a later release is moot: the lease has expired for everyone)."""
        futures = []
        for entry in entries:
            try:
                futures.append(pool.submit(self.release, entry, deadline))
            except RuntimeError:
                break
        _, late = wait(futures, timeout=max(0.0, deadline - time.monotonic()))
        if late:
            log.warning("%d lease(s) not released within the failover time; they expire", len(late))

    def stats(self) -> RenewalStats:
        with self._lock:
            return RenewalStats(
                passes=self._passes,
                pass_times_s=tuple(self._pass_times),
                renewals=self._renewals,
                failures=self._failures,
                skipped=self._skipped,
                max_gap_s=self._max_gap_s,
            )
