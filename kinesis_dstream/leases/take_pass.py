"""A taker pass's I/O: scan, choose (the pure rules of :mod:`.take_rules`), take, announce.

The takes run in parallel on the coordinator's pool, so a worker taking hundreds of
leases at start holds the first ones long before the last is written. A lease is held
(and so renewed) the moment its take lands, before anything else can fail; its
readiness is known from the scan or else left to the parent checker. The lease-gained
listener is told afterwards, on the taker's own thread, never on a pool thread: it may
call Kinesis. If the listener raises, the application cannot read that lease (say it is
at AT_TIMESTAMP and no timestamp was configured): renewing it unread would starve the
shard forever, so it is released with a conditional write and not taken again by this
worker for ``rejected_retry_s``.
"""

from __future__ import annotations

import logging
import queue
import random
import threading
import time
from concurrent.futures import wait
from typing import Callable, Optional

from ..errors import LeaseTableError
from .held import HeldLease, HeldLeases, LeaseState
from .lease import Lease
from .parents import parents_finished, ready_from_scan
from .refresher import LeaseRefresher
from .renewer import LeaseRenewer
from .take_rules import LeaseObserver, leases_to_take
from .thread_pool import ThreadPool
from .timing import LeaseTimings

log = logging.getLogger(__name__)


class LeaseAcquirer:
    """Takes and steals leases for one worker; announces them to the gained listener."""

    def __init__(
        self,
        table: LeaseRefresher,
        worker_id: str,
        held: HeldLeases,
        renewer: LeaseRenewer,
        timings: LeaseTimings,
        *,
        max_leases_for_worker: Optional[int],
        max_leases_to_steal: int,
        on_gained: Optional[Callable[[Lease], None]],
        on_rejected: Callable[[str, str], None],
        wake_parents: Callable[[], None],
        clock: Callable[[], float],
        rng: random.Random,
    ) -> None:
        self.table = table
        self.worker_id = worker_id
        self._held = held
        self._renewer = renewer
        self._timings = timings
        self._max_leases_for_worker = max_leases_for_worker
        self._max_leases_to_steal = max_leases_to_steal
        #: Assigned keys whose items cannot be read, warned about once (:meth:`_assigned`).
        self._unreadable: set = set()
        self._unreadable_lock = threading.Lock()
        self._on_gained = on_gained
        self._on_rejected = on_rejected
        self._wake_parents = wake_parents
        self._clock = clock
        self._rng = rng
        self._observer = LeaseObserver(timings.failover_time_s, clock)
        self._gained: queue.SimpleQueue[HeldLease] = queue.SimpleQueue()  # to announce
        self._last_steal_pass: Optional[float] = None  # the taker thread's (steal_due)
        self._rejected: dict = {}  # lease key -> clock time it may be taken again

    def take_leases(self, pool: ThreadPool, steal: bool = True) -> list:
        """One pass: scan, judge expiry, take or (with ``steal``) steal, announce. Returns
        the keys taken."""
        scanned = self.table.list_leases()
        by_key = {lease.lease_key: lease for lease in scanned}
        ready_from_scan(self._held, by_key)
        now = self._clock()
        self._rejected = {k: until for k, until in self._rejected.items() if until > now}
        leases = [
            lease
            for lease in scanned
            if not lease.is_finished and lease.lease_key not in self._rejected
        ]
        self._observer.observe(leases)
        mine = self._held.keys()
        # Our own leases count as ours whatever the scan's timing says.
        expired = {
            lease.lease_key
            for lease in leases
            if lease.lease_key not in mine and self._observer.is_expired(lease)
        }
        chosen = leases_to_take(
            leases,
            expired,
            self.worker_id,
            max_leases_for_worker=self._max_leases_for_worker,
            max_leases_to_steal=self._max_leases_to_steal if steal else 0,
            rng=self._rng,
        )
        futures = []
        for lease in chosen:
            if lease.lease_key in mine:
                continue
            steal = lease.lease_key not in expired
            try:
                futures.append(
                    pool.submit(self._take, lease, steal, parents_finished(lease, by_key))
                )
            except RuntimeError:  # the pool is shutting down: so is the coordinator
                break
        wait(futures, timeout=self._timings.taker_interval_s)
        held = [f.result() for f in futures if f.done() and not f.cancelled()]
        self.announce()  # a take that returns later is announced by the next pass
        return [entry.key for entry in held if entry is not None]

    def steal_due(self) -> bool:
        """The taker thread's pass may steal: none that could began within (nine tenths
        of) a taker interval, so a worker steals at most ``max_leases_to_steal`` a taker
        interval however often it is woken early. Regular passes are a taker interval
        apart; the tenth of slack absorbs scans of different lengths."""
        now = self._clock()
        last = self._last_steal_pass
        if last is not None and now - last < 0.9 * self._timings.taker_interval_s:
            return False
        self._last_steal_pass = now
        return True

    def _assigned(self, key: str) -> Optional[Lease]:
        """An assigned lease read again; None, warned once a key, for an item this library
        cannot read (one such item must not stop every other adoption)."""
        try:
            return self.table.get_lease(key)
        except LeaseTableError as exc:
            with self._unreadable_lock:  # the fleet tick and the taker both adopt
                first = key not in self._unreadable
                self._unreadable.add(key)
            if first:
                log.warning("%s; not adopted until its item is mended", exc)
            return None

    def adopt_assigned(self, keys: Optional[list] = None) -> list:
        """A KCL 3.x follower's pass: hold the leases the leader assigned to us (owner is
        us, no ``checkpointOwner``: a handoff to us is not finished), as the KCL's
        ``DynamoDBLeaseDiscoverer`` does: ``keys`` (from the owner index) each read again,
        else a scan. Nothing is written (the renewer's first write confirms it); never
        takes or steals. Returns the keys adopted."""
        mine = self._held.keys()
        found: list = (
            self.table.list_leases()
            if keys is None
            else [self._assigned(k) for k in keys if k not in mine]
        )
        scanned = [lease for lease in found if lease is not None]
        by_key = {lease.lease_key: lease for lease in scanned}
        if keys is None:
            ready_from_scan(self._held, by_key)
        adopted = []
        for lease in scanned:
            if (
                lease.lease_owner != self.worker_id
                or lease.checkpoint_owner is not None
                or lease.is_finished
                or lease.lease_key in mine
                or lease.lease_key in self._rejected
            ):
                continue
            entry = HeldLease(lease, self._clock(), parents_done=parents_finished(lease, by_key))
            if not self._held.add(entry, stolen=False, assigned=True):
                break  # stopping
            log.info("worker %s: the leader assigned it lease %s", self.worker_id, lease.lease_key)
            self._gained.put(entry)
            adopted.append(lease.lease_key)
        self.announce()
        return adopted

    def _take(self, lease: Lease, steal: bool, parents_done: bool) -> Optional[HeldLease]:
        """Take (or steal) one lease on a pool thread; hold it at once, announce later."""
        try:
            if steal:
                # Its owner renews every failover/3, so the scanned counter is likely
                # stale; read it again right before the write (as the KCL does).
                fresh = self.table.get_lease(lease.lease_key)
                if fresh is None or fresh.lease_owner != lease.lease_owner:
                    return None
                lease = fresh
            sent_at = self._clock()
            won = self.table.take(lease, self.worker_id)
        except Exception as exc:
            log.warning("could not take lease %s: %s", lease.lease_key, exc)
            return None
        if won is None:
            return None  # another worker moved it first
        entry = HeldLease(won, sent_at, parents_done=parents_done)
        if not self._held.add(entry, stolen=steal):
            self._renewer.release(entry, time.monotonic() + self._timings.renewal_timeout_s)
            return None  # landed while stopping: given straight back
        log.info(
            "worker %s %s lease %s%s",
            self.worker_id,
            "stole" if steal else "took",
            lease.lease_key,
            f" from {lease.lease_owner}" if lease.lease_owner else "",
        )
        self._gained.put(entry)
        return entry

    def announce(self) -> None:
        """Tell the gained listener of each lease taken, then let it be read or wait."""
        while True:
            try:
                entry = self._gained.get_nowait()
            except queue.Empty:
                return
            if not self._held.is_current(entry):
                continue  # lost or fenced before it was announced
            if self._on_gained is not None:
                try:
                    self._on_gained(entry.lease)
                except Exception as exc:
                    self._reject(entry, exc)
                    continue
            if entry.parents_done:
                self._held.move(entry, LeaseState.READY)
            elif self._held.move(entry, LeaseState.WAITING_ON_PARENTS):
                self._wake_parents()

    def forget_unannounced(self) -> None:
        """Drop the leases taken but not announced (at stop: they are released anyway)."""
        while not self._gained.empty():
            self._gained.get_nowait()

    def _reject(self, entry: HeldLease, exc: Exception) -> None:
        retry_s = self._timings.rejected_retry_s
        self._rejected[entry.key] = self._clock() + retry_s
        log.error(
            "releasing lease %s (checkpoint %s): the lease-gained listener failed: %s: %s; "
            "worker %s will not take it again for %.0fs",
            entry.key,
            entry.lease.checkpoint,
            type(exc).__name__,
            exc,
            self.worker_id,
            retry_s,
        )
        if self._held.remove(entry, lost=False):
            self._renewer.release(entry, time.monotonic() + self._timings.renewal_timeout_s)
            self._on_rejected(entry.key, f"released: the lease-gained listener failed: {exc}")
