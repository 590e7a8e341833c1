"""One worker's side of the lease protocol: renew, take, steal, fence, release.

A :class:`LeaseCoordinator` owns two threads, each with a stop signal and a join:

- the renewer, every ``failover_time_s / 3``: bumps the counter of each held lease with a
  conditional write. A lease whose write loses (another worker took it) is lost at once;
  a lease not renewed within ``failover_time_s`` by this worker's own clock is given up
  (self-fencing), because other workers may already judge it expired.
- the taker, every ``2 x failover_time_s``: scans the table, judges expiry by observing
  counters (never by comparing clocks), takes expired or unowned leases up to its fair
  share and steals at most ``max_leases_to_steal`` a pass from the most-loaded worker;
  every ``shard_sync_interval_s`` it first runs the shard sync.

Renewals and checkpoints of one lease both move its counter, so they are serialized by a
per-lease lock. Listeners hear at once when a lease is gained or lost. :meth:`stop`
releases held leases (removes the owner with a conditional write) so other workers take
them on their next pass instead of after a failover period.
"""

from __future__ import annotations

import logging
import random
import socket
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Callable, Optional

from ..errors import CheckpointError, LeaseLostError
from ..esn import ESN_SHARD_END, ExtendedSequenceNumber
from .dynamodb import LeaseTable
from .lease import Lease
from .shard_sync import ShardSync
from .taker import LeaseObserver, leases_to_take

log = logging.getLogger(__name__)

DEFAULT_FAILOVER_TIME_S = 10.0
DEFAULT_SHARD_SYNC_INTERVAL_S = 60.0
#: The KCL adds this to the failover time for its taker interval.
_EPSILON_S = 0.025


@dataclass
class _Held:
    """A held lease. Fields change under the coordinator's lock; writes to DynamoDB for
    this lease (renewal, checkpoint, release) go one at a time under ``write_lock``."""

    lease: Lease
    renewed_at: float  # monotonic time the last successful renewal (or take) was sent
    write_lock: threading.Lock = field(default_factory=threading.Lock)
    ready: bool = False  # every parent lease is absent or finished


def default_worker_id() -> str:
    return f"{socket.gethostname()}:{uuid.uuid4()}"


class LeaseCoordinator:
    """Holds and balances one worker's leases in an application's lease table."""

    def __init__(
        self,
        table: LeaseTable,
        worker_id: Optional[str] = None,
        *,
        failover_time_s: float = DEFAULT_FAILOVER_TIME_S,
        max_leases_for_worker: Optional[int] = None,
        max_leases_to_steal: int = 1,
        shard_sync: Optional[ShardSync] = None,
        shard_sync_interval_s: float = DEFAULT_SHARD_SYNC_INTERVAL_S,
        on_lease_gained: Optional[Callable[[Lease], None]] = None,
        on_lease_lost: Optional[Callable[[str, str], None]] = None,
        clock: Callable[[], float] = time.monotonic,
        rng: Optional[random.Random] = None,
    ) -> None:
        if failover_time_s <= 0:
            raise ValueError(f"failover_time_s must be > 0, got {failover_time_s}")
        if max_leases_for_worker is not None and max_leases_for_worker < 1:
            raise ValueError(f"max_leases_for_worker must be >= 1, got {max_leases_for_worker}")
        if max_leases_to_steal < 0:
            raise ValueError(f"max_leases_to_steal must be >= 0, got {max_leases_to_steal}")
        self.table = table
        self.worker_id = worker_id or default_worker_id()
        self.failover_time_s = failover_time_s
        self.renewal_interval_s = failover_time_s / 3
        self.taker_interval_s = (failover_time_s + _EPSILON_S) * 2
        self.max_leases_for_worker = max_leases_for_worker
        self.max_leases_to_steal = max_leases_to_steal
        self.shard_sync = shard_sync
        self.shard_sync_interval_s = shard_sync_interval_s
        self._on_gained = on_lease_gained
        self._on_lost = on_lease_lost
        self._clock = clock
        self._rng = rng or random.Random()
        self._observer = LeaseObserver(failover_time_s, clock)
        self._lock = threading.Lock()  # guards _held and _counts
        self._held: dict = {}  # lease key -> _Held
        self._counts = {"taken": 0, "stolen": 0, "lost": 0}
        self._stop = threading.Event()
        self._threads: list = []
        self._last_sync: Optional[float] = None

    # -- lifecycle ------------------------------------------------------------------------

    def start(self) -> LeaseCoordinator:
        """Sync shards, run one taker pass, then start the renewer and taker threads."""
        if self._threads:
            raise RuntimeError(f"lease coordinator {self.worker_id} is already started")
        self._stop.clear()
        self._maybe_sync()
        self.take_leases()
        for name, interval, work in (
            ("renewer", self.renewal_interval_s, self.renew_leases),
            ("taker", self.taker_interval_s, self._taker_pass),
        ):
            thread = threading.Thread(
                target=self._loop,
                args=(interval, work),
                name=f"lease-{name}-{self.worker_id}",
                daemon=True,
            )
            thread.start()
            self._threads.append(thread)
        return self

    def stop(self, release: bool = True) -> None:
        """Stop both threads; with ``release``, give held leases back for others to take."""
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=self.failover_time_s + 30)
            if thread.is_alive():
                log.error("lease thread %s did not stop in time", thread.name)
        self._threads = []
        with self._lock:
            held, self._held = self._held, {}
        for key, entry in held.items():
            if release:
                with entry.write_lock:
                    try:
                        released = self.table.evict(entry.lease)
                    except Exception:
                        log.exception("could not release lease %s", key)
                        released = None
                if released is None:
                    log.warning("lease %s was not released (it moved); it will expire", key)
            self._tell_lost(key, "released at stop" if release else "stopped")

    def __enter__(self) -> LeaseCoordinator:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _loop(self, interval_s: float, work: Callable[[], object]) -> None:
        while not self._stop.wait(interval_s):
            try:
                work()
            except Exception:  # a failed pass is retried next interval; never kill the loop
                log.exception("lease %s pass failed for worker %s", work.__name__, self.worker_id)

    # -- what this worker holds -------------------------------------------------------------

    def held_leases(self) -> dict:
        """Lease key -> Lease for every lease held and renewed within the failover time."""
        self._fence()
        with self._lock:
            return {key: entry.lease for key, entry in self._held.items()}

    def ready_leases(self) -> dict:
        """Held leases whose parents are absent or finished: the shards to read now."""
        self._fence()
        with self._lock:
            return {key: entry.lease for key, entry in self._held.items() if entry.ready}

    def _fence(self) -> None:
        now = self._clock()
        with self._lock:
            stale = [
                key
                for key, entry in self._held.items()
                if now - entry.renewed_at > self.failover_time_s
            ]
            for key in stale:
                del self._held[key]
            self._counts["lost"] += len(stale)
        for key in stale:
            log.warning(
                "lease %s not renewed within %.1fs: giving it up (self-fencing)",
                key,
                self.failover_time_s,
            )
            self._tell_lost(key, "not renewed within the failover time")

    def counts(self) -> dict:
        """Leases taken, stolen and lost since start (for metrics)."""
        with self._lock:
            return dict(self._counts)

    # -- renewing ---------------------------------------------------------------------------

    def renew_leases(self) -> None:
        """One renewal pass over every held lease (the renewer thread calls this)."""
        with self._lock:
            entries = list(self._held.items())
        for key, entry in entries:
            with entry.write_lock:
                sent_at = self._clock()
                try:
                    renewed = self.table.renew(entry.lease)
                except Exception as exc:
                    log.warning("could not renew lease %s: %s", key, exc)
                    continue  # fenced by _fence once the failover time has passed
                if renewed is None:
                    self._drop(key, entry, "another worker took it")
                    continue
                with self._lock:
                    entry.lease, entry.renewed_at = renewed, sent_at
            if not entry.ready and self._parents_done(renewed):
                with self._lock:
                    entry.ready = True
        self._fence()

    def _parents_done(self, lease: Lease) -> bool:
        for parent in lease.parent_shard_ids:
            parent_lease = self.table.get_lease(parent)
            if parent_lease is not None and not parent_lease.is_finished:
                return False
        return True

    def _drop(self, key: str, entry: _Held, reason: str) -> None:
        with self._lock:
            if self._held.get(key) is entry:
                del self._held[key]
                self._counts["lost"] += 1
            else:
                return
        log.info("lost lease %s: %s", key, reason)
        self._tell_lost(key, reason)

    # -- taking -----------------------------------------------------------------------------

    def _taker_pass(self) -> None:
        self._maybe_sync()
        self.take_leases()

    def _maybe_sync(self) -> None:
        if self.shard_sync is None:
            return
        now = self._clock()
        if self._last_sync is None or now - self._last_sync >= self.shard_sync_interval_s:
            self._last_sync = now
            self.shard_sync.sync()

    def take_leases(self) -> list:
        """One taker pass: scan, judge expiry, take or steal. Returns the keys taken."""
        leases = [lease for lease in self.table.list_leases() if not lease.is_finished]
        self._observer.observe(leases)
        with self._lock:
            mine = set(self._held)
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
            max_leases_for_worker=self.max_leases_for_worker,
            max_leases_to_steal=self.max_leases_to_steal,
            rng=self._rng,
        )
        taken = []
        for lease in chosen:
            if lease.lease_key in mine:
                continue
            sent_at = self._clock()
            try:
                if lease.lease_key not in expired:
                    # A steal: its owner renews every failover/3, so the scanned counter is
                    # likely stale; read it again right before the write (as the KCL does).
                    fresh = self.table.get_lease(lease.lease_key)
                    if fresh is None or fresh.lease_owner != lease.lease_owner:
                        continue
                    lease = fresh
                won = self.table.take(lease, self.worker_id)
            except Exception as exc:
                log.warning("could not take lease %s: %s", lease.lease_key, exc)
                continue
            if won is None:
                continue  # another worker moved it first
            entry = _Held(won, sent_at)
            entry.ready = self._parents_done(won)
            stolen = won.lease_key not in expired
            with self._lock:
                self._held[won.lease_key] = entry
                self._counts["stolen" if stolen else "taken"] += 1
            taken.append(won.lease_key)
            log.info(
                "worker %s %s lease %s%s",
                self.worker_id,
                "stole" if stolen else "took",
                lease.lease_key,
                f" from {lease.lease_owner}" if lease.lease_owner else "",
            )
            self._tell_gained(won)
        return taken

    # -- checkpointing ----------------------------------------------------------------------

    def checkpoint(
        self,
        shard_id: str,
        esn: ExtendedSequenceNumber,
        child_shard_ids: Optional[list] = None,
    ) -> Lease:
        """Write ``esn`` as the shard's checkpoint; returns the lease as written.

        Refuses, writing nothing, a position lower than the current checkpoint
        (:class:`CheckpointError`) or a lease this worker no longer holds
        (:class:`~.errors.LeaseLostError`). ``SHARD_END`` also records the children and
        stops renewing the lease (the shard needs no reader any more).
        """
        self._fence()
        with self._lock:
            entry = self._held.get(shard_id)
        if entry is None:
            raise LeaseLostError(
                f"cannot checkpoint shard {shard_id} at {esn}: worker {self.worker_id} "
                "does not hold its lease"
            )
        with entry.write_lock:
            current = entry.lease.checkpoint
            if esn < current:
                raise CheckpointError(
                    f"cannot checkpoint shard {shard_id} at {esn}: it is before the current "
                    f"checkpoint {current}"
                )
            written = self.table.checkpoint(
                entry.lease, esn, frozenset(child_shard_ids) if child_shard_ids else None
            )
            if written is None:
                self._drop(shard_id, entry, "its counter moved: another worker took it")
                raise LeaseLostError(
                    f"cannot checkpoint shard {shard_id} at {esn}: the lease was taken by "
                    "another worker; nothing was written"
                )
            with self._lock:
                entry.lease = written
        if esn == ESN_SHARD_END:
            with self._lock:
                if self._held.get(shard_id) is entry:
                    del self._held[shard_id]
        return written

    def shard_ended(self, shard_id: str, child_shard_ids: list) -> Lease:
        """At a shard's end: checkpoint SHARD_END with the children, create their leases."""
        written = self.checkpoint(shard_id, ESN_SHARD_END, child_shard_ids)
        if self.shard_sync is not None and child_shard_ids:
            self.shard_sync.create_child_leases(child_shard_ids)
        return written

    # -- listeners --------------------------------------------------------------------------

    def _tell_gained(self, lease: Lease) -> None:
        if self._on_gained is not None:
            try:
                self._on_gained(lease)
            except Exception:
                log.exception("lease-gained listener failed for %s", lease.lease_key)

    def _tell_lost(self, key: str, reason: str) -> None:
        if self._on_lost is not None:
            try:
                self._on_lost(key, reason)
            except Exception:
                log.exception("lease-lost listener failed for %s", key)
