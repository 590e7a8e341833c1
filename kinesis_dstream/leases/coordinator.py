"""One worker's side of the lease protocol: renew, take, steal, fence, release.

A :class:`LeaseCoordinator` owns a :class:`~.thread_pool.ThreadPool` for lease writes and
three threads, each with the one stop signal and a bounded join:

- the renewer, every ``failover / 3``: a :class:`~.renewer.LeaseRenewer` pass, each
  lease's renewal in parallel on the pool, then self-fencing of any lease not renewed
  within the failover time by this worker's own clock;
- the taker, every ``2 x failover``: the shard sync (every ``shard_sync_interval_s``:
  :class:`~.shard_sync.PeriodicShardSync`), then a scan that judges expiry by observing
  counters (never by comparing clocks), takes expired or unowned leases up to the fair
  share and steals at most ``max_leases_to_steal`` a pass from the most-loaded worker
  (:mod:`.take_rules`), the writes in parallel on the pool; then it tells the
  lease-gained listener, on its own thread;
- the parent checker, every half second and when woken: reads the parents of held
  leases that wait for them (:mod:`.parents`), so a failed read delays one child shard
  and never a renewal.

A shard finished here (:meth:`~LeaseCoordinator.shard_ended`) creates its children's
leases and wakes the taker, which takes them at once within the fair share (stealing no
sooner than a regular pass: :meth:`~.take_pass.LeaseAcquirer.steal_due`).

A lease whose gained listener raises is released and not taken again for three taker
passes. :meth:`stop` releases held leases in parallel, each bounded. In a KCL 3.x fleet
with a live leader the taker only holds what the leader assigned (:mod:`.membership`).
Its settings are grouped as the KCL groups them: a :class:`~.timing.LeaseManagementConfig`
(timings and limits) and the owner's :class:`~.listeners.LeaseListeners`.
"""

from __future__ import annotations

import logging
import random
import socket
import threading
import time
import uuid
from typing import Callable, Optional

from ..esn import ESN_SHARD_END, ExtendedSequenceNumber
from ..periodic import PeriodicLoops, time_left
from .fleet import METRICS_INTERVAL_S, FleetWatch
from .held import HeldLease, HeldLeases, LeaseState
from .lease import Lease
from .lease_writes import checkpoint_held
from .listeners import LeaseListeners
from .membership import FleetMembership
from .parents import check_parents
from .refresher import LeaseRefresher
from .renewer import LeaseRenewer, RenewalStats
from .shard_sync import PeriodicShardSync, ShardSync
from .take_pass import LeaseAcquirer
from .thread_pool import ThreadPool
from .timing import LeaseManagementConfig, renewal_pool_width

log = logging.getLogger(__name__)

__all__ = ["LeaseCoordinator"]


def default_worker_id() -> str:
    return f"{socket.gethostname()}:{uuid.uuid4()}"


class LeaseCoordinator:
    """Holds and balances one worker's leases in an application's lease table.

    ``config`` (default: the KCL's, a 10 s failover) sets every interval, bound and
    limit; ``listeners`` are told of leases gained, lost and handed off;
    ``shard_sync`` (optional) creates the stream's leases every
    ``config.shard_sync_interval_s``; ``fleet`` (optional) reads a KCL 3.x fleet's mode.
    ``clock`` (monotonic seconds) and ``rng`` are injectable so the protocol is tested in
    milliseconds. ``start(background=False)`` starts only the pool, for tests that drive
    :meth:`renew_leases`, :meth:`take_leases` and :meth:`check_parents` themselves.
    """

    def __init__(
        self,
        table: LeaseRefresher,
        worker_id: Optional[str] = None,
        config: Optional[LeaseManagementConfig] = None,
        *,
        listeners: Optional[LeaseListeners] = None,
        shard_sync: Optional[ShardSync] = None,
        fleet: Optional[FleetWatch] = None,
        clock: Callable[[], float] = time.monotonic,
        rng: Optional[random.Random] = None,
    ) -> None:
        config = config or LeaseManagementConfig()
        timings = config.timings
        self.table = table
        self.worker_id = worker_id or default_worker_id()
        self.config = config
        self.timings = timings
        self.failover_time_s = timings.failover_time_s
        self.renewal_interval_s = timings.renewal_interval_s
        self.taker_interval_s = timings.taker_interval_s
        self.renewal_threads = config.renewal_threads or renewal_pool_width(table.max_concurrency)
        self.max_leases_for_worker = config.max_leases_for_worker
        self.max_leases_to_steal = config.max_leases_to_steal
        self.shard_sync = shard_sync
        self.shard_sync_interval_s = config.shard_sync_interval_s
        self._shard_sync = PeriodicShardSync(shard_sync, config.shard_sync_interval_s, clock)
        self.listeners = listeners = listeners or LeaseListeners()
        self._clock = clock
        self._held = HeldLeases(self.failover_time_s, clock)
        #: The KCL fleet's mode (None: always KCL 2.x, no state read).
        self.membership = FleetMembership(
            table,
            self._held,
            fleet,
            on_handoff=listeners.on_lease_handoff,
            tell_lost=listeners.tell_lost,
            clock=clock,
            failover_time_s=self.failover_time_s,
            handoff_timeout_s=config.handoff_timeout_s,
        )
        self._renewer = LeaseRenewer(
            table,
            self._held,
            timings,
            clock,
            self._drop,
            on_handoff=self.membership.handoff_started,
            throughput_kbps=self.membership.throughput_kbps,
        )
        self._loops = PeriodicLoops("lease", self.worker_id, f"worker {self.worker_id}", log)
        self._wake_parents = threading.Event()
        #: The leader of a KCL 3.x fleet is gone, or a shard finished here has children.
        self._wake_taker = threading.Event()
        self._acquirer = LeaseAcquirer(
            table,
            self.worker_id,
            self._held,
            self._renewer,
            timings,
            max_leases_for_worker=config.max_leases_for_worker,
            max_leases_to_steal=config.max_leases_to_steal,
            on_gained=listeners.on_lease_gained,
            on_rejected=listeners.tell_lost,
            wake_parents=self._wake_parents.set,
            clock=clock,
            rng=rng or random.Random(),
        )
        self._pool: Optional[ThreadPool] = None

    # -- lifecycle ------------------------------------------------------------------------

    def start(self, *, background: bool = True) -> LeaseCoordinator:
        """Start the pool and renewer, sync shards, take leases once, start the taker.

        The renewer runs before the first take, so a worker taking many leases at start
        renews the first ones on time. A failure stops what was started and is raised.
        """
        if self._pool is not None:
            raise RuntimeError(f"lease coordinator {self.worker_id} is already started")
        self._loops.reopen()
        self._wake_parents.clear()
        self._wake_taker.clear()
        self._held.reopen()
        self._pool = ThreadPool(f"lease-writer-{self.worker_id}", self.renewal_threads).start()
        try:
            if background:
                self._loops.spawn("renewer", self.renewal_interval_s, self.renew_leases)
                self._loops.spawn(
                    "parents",
                    self.timings.parent_poll_interval_s,
                    self._check_due_parents,
                    self._wake_parents,
                )
            self._shard_sync.sync_if_due()
            self.membership.poll()
            self.membership.publish_metrics()  # a KCL 3.x leader counts us from now on
            self.take_leases(steal=self._acquirer.steal_due())  # the first regular pass
            if background:
                self._loops.spawn(
                    "taker", self.taker_interval_s, self._taker_pass, self._wake_taker
                )
                if self.membership.fleet is not None:
                    self._loops.spawn("fleet", self.renewal_interval_s, self._fleet_tick)
                    self._loops.spawn(
                        "worker-metrics", METRICS_INTERVAL_S, self.membership.publish_metrics
                    )
        except BaseException:
            self.stop(release=True)
            raise
        return self

    def stop(self, release: bool = True) -> None:
        """Stop every thread; with ``release``, give held leases back for others to take.

        Returns within ``release_timeout_s + join_timeout_s`` (failover + failover / 2)
        even when the store is unreachable: threads are joined within ``join_timeout_s``;
        releases run in parallel on the pool, each bounded, until ``release_timeout_s``
        (a later release is moot: the lease has expired for everyone); then the pool's
        threads are joined within what is left.
        """
        started = time.monotonic()
        join_by = started + self.timings.join_timeout_s
        release_by = started + self.timings.release_timeout_s
        stop_by = release_by + self.timings.join_timeout_s
        self._loops.stop(join_by, self._wake_parents, self._wake_taker)
        entries = self._held.close()
        pool, self._pool = self._pool, None
        if release and entries and pool is not None:
            self._renewer.release_all(pool, entries, release_by)
        if pool is not None:
            pool.shutdown(time_left(stop_by))
        self._acquirer.forget_unannounced()
        for entry in entries:
            self.listeners.tell_lost(entry.key, "released at stop" if release else "stopped")

    def __enter__(self) -> LeaseCoordinator:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- what this worker holds -------------------------------------------------------------

    def held_leases(self) -> dict:
        """Lease key -> Lease for every lease held and renewed within the failover time."""
        self._fence()
        return self._held.leases()

    def holds(self, key: str) -> bool:
        """Whether ``key`` is among :meth:`held_leases`, looking at that lease alone (a
        reader's loop asks this of its own shard; copying every held lease there cost
        a 1,024-shard daemon most of its CPU)."""
        if self._held.holds(key):
            return True
        self._fence()  # past the failover time: given up, and the listener told
        return False

    def ready_leases(self) -> dict:
        """Held leases whose parents are absent or finished: the shards to read now."""
        self._fence()
        return self._held.leases(LeaseState.READY)

    @property
    def held_version(self) -> int:
        """Changes whenever a lease is gained, lost or changes state (see
        :attr:`.held.HeldLeases.version`)."""
        return self._held.version

    def counts(self) -> dict:
        """Leases taken, stolen and lost since start (for metrics)."""
        return self._held.counts()

    #: Taker passes run by the taker thread (failed ones too): the protocol's unit of time.
    taker_passes = 0
    #: Taker passes begun: one more than ``taker_passes`` while a pass (its takes) runs.
    taker_passes_begun = 0

    def renewal_stats(self) -> RenewalStats:
        return self._renewer.stats()

    def _fence(self) -> None:
        for entry in self._held.fence():
            log.warning(
                "lease %s not renewed within %.1fs: giving it up (self-fencing)",
                entry.key,
                self.failover_time_s,
            )
            self.listeners.tell_lost(entry.key, "not renewed within the failover time")

    def _drop(self, entry: HeldLease, reason: str) -> None:
        if self._held.remove(entry, lost=True):
            log.info("lost lease %s: %s", entry.key, reason)
            self.listeners.tell_lost(entry.key, reason)

    # -- renewing -------------------------------------------------------------------------

    def renew_leases(self) -> None:
        """One renewal pass over every held lease, then self-fencing (the renewer's work),
        then handoffs past their timeout are transferred anyway (as the KCL's
        ``LeaseGracefulShutdownHandler``)."""
        pool = self._pool
        if pool is not None:
            self._renewer.renew_all(pool)
        self._fence()
        self.membership.expire_handoffs(pool.submit if pool is not None else None)

    def _fleet_tick(self) -> None:
        self.membership.tick(self._acquirer.adopt_assigned, self._wake_taker.set)

    def hand_off(self, shard_id: str) -> bool:
        """Finish a KCL 3.x graceful handoff of ``shard_id`` (after its last checkpoint);
        see :meth:`.membership.FleetMembership.hand_off`."""
        return self.membership.hand_off(shard_id)

    # -- parents ----------------------------------------------------------------------------

    def check_parents(self) -> None:
        """Read the parents of every lease waiting for them."""
        check_parents(self.table, self._held, self._held.parent_reads_due())

    def _check_due_parents(self) -> None:
        """The parent checker's pass: the waiting leases due a read (all of them after a
        parent finished here)."""
        due = self._held.parent_reads_due(self.timings.parent_read_interval_s)
        if due:
            check_parents(self.table, self._held, due)

    # -- taking -----------------------------------------------------------------------------

    def _taker_pass(self) -> None:
        self.taker_passes_begun += 1
        try:
            try:
                self._shard_sync.sync_if_due()
            except Exception:  # a failed sync must not cost the take
                log.exception("shard sync failed for worker %s", self.worker_id)
            if self.membership.takes:  # a follower gains leases in the fleet tick
                # A pass woken early (children of a shard finished here) takes them but
                # steals no sooner than a regular pass would.
                self.take_leases(steal=self._acquirer.steal_due())
        finally:
            self.taker_passes += 1

    def take_leases(self, steal: bool = True) -> list:
        """One taker pass: scan, judge expiry, take or (with ``steal``) steal; in a KCL
        3.x fleet with a live leader, only hold what it assigned to us. Returns the keys
        gained."""
        if self._pool is None:
            raise RuntimeError(f"lease coordinator {self.worker_id} is not started")
        if not self.membership.takes:
            return self.membership.adopt_assigned(self._acquirer.adopt_assigned)
        return self._acquirer.take_leases(self._pool, steal)

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
        stops renewing the lease (the shard needs no reader any more). A successful
        write moves the counter, so it counts as a renewal. A write that finds a KCL 3.x
        handoff begun is written as the checkpoint owner and the handoff goes on as when
        the renewer finds it (:func:`~.lease_writes.write_checkpoint`).
        """
        self._fence()
        entry = self._held.get(shard_id)
        written, handoff = checkpoint_held(
            self.table,
            self._held,
            entry,
            esn,
            child_shard_ids,
            self._clock,
            shard_id=shard_id,
            worker_id=self.worker_id,
            lock_timeout_s=self.failover_time_s,
            on_taken=self._drop,
        )
        assert entry is not None  # checkpoint_held raised otherwise
        if handoff:  # found here before the renewer: on as from the renewer
            self.membership.handoff_started(entry)
        if esn == ESN_SHARD_END and entry.state is not LeaseState.HANDING_OFF:
            self._held.remove(entry, lost=False)  # (a handoff's transfer removes it)
            self._held.parents_due_now()  # its children may be ready now
            self._wake_parents.set()
        return written

    def shard_ended(self, shard_id: str, child_shard_ids: list) -> Lease:
        """At a shard's end: checkpoint SHARD_END with the children, create their leases
        and wake the taker, so that the children are read at once, not at its next pass."""
        written = self.checkpoint(shard_id, ESN_SHARD_END, child_shard_ids)
        log.info("shard %s finished; children %s", shard_id, child_shard_ids)
        self._shard_sync.create_children(shard_id, child_shard_ids)
        if child_shard_ids:
            self._wake_taker.set()
        return written
