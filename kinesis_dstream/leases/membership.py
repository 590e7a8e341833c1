"""One worker's part in a KCL 3.x fleet: the fleet's mode, its worker metrics, each
lease's throughput, and graceful handoffs as the old owner.

A KCL 3.x leader moves a lease from worker A to B gracefully: it sets ``leaseOwner = B``
and ``checkpointOwner = A`` without bumping the counter. A's next write fails (a
renewal, or the application's checkpoint when it comes first); A (us) reads the lease
once, sees the handoff (:func:`~.lease_writes.handed_off_lease`, one rule for every write;
a release then transfers), and keeps the lease HANDING_OFF: renewed and checkpointed with
``checkpointOwner`` as the guard, not read any more, checkpointed one last time by the
application (the kcl daemon's child gets ``shutdownRequested``, then ``leaseLost``);
then :meth:`FleetMembership.hand_off` transfers it (``leaseOwner = B``, ``checkpointOwner``
removed, counter + 1: the KCL's ``assignLease``). A handoff not finished within
``handoff_timeout_s`` (the KCL's ``gracefulLeaseHandoffTimeoutMillis``, 30 s) is
transferred anyway, as the KCL's ``LeaseGracefulShutdownHandler`` does.
"""

from __future__ import annotations

import logging
from typing import Any, Callable, Optional

from .fleet import FleetWatch, LeaseThroughput
from .held import HeldLease, HeldLeases, LeaseState
from .refresher import LeaseRefresher
from .timing import DEFAULT_HANDOFF_TIMEOUT_S

log = logging.getLogger(__name__)


class FleetMembership:
    """The KCL 3.x side of a coordinator; with no ``fleet``, a KCL 2.x worker."""

    def __init__(
        self,
        table: LeaseRefresher,
        held: HeldLeases,
        fleet: Optional[FleetWatch],
        *,
        on_handoff: Optional[Callable[[str, str], None]],
        tell_lost: Callable[[str, str], None],
        clock: Callable[[], float],
        failover_time_s: float,
        handoff_timeout_s: float = DEFAULT_HANDOFF_TIMEOUT_S,
    ) -> None:
        self.table = table
        self._held = held
        self.fleet = fleet
        self._on_handoff = on_handoff
        self._tell_lost = tell_lost
        self._clock = clock
        self._failover_time_s = failover_time_s
        self.handoff_timeout_s = handoff_timeout_s
        #: Bytes read per lease (the application notes them), for ``throughputKBps``.
        self.throughput = LeaseThroughput(clock)

    @property
    def takes(self) -> bool:
        """Our taker takes and steals; False in a KCL 3.x fleet with a live leader."""
        return self.fleet is None or self.fleet.mode.takes

    def poll(self) -> None:
        if self.fleet is not None:
            self.fleet.poll()

    def tick(self, adopt: Callable[[Optional[list]], list], wake_taker: Callable[[], None]) -> None:
        """Every renewal interval: read the fleet's mode; as a follower, hold what the
        leader assigned to us (found by the owner index, else by a scan); when the
        leader is gone, wake the taker at once instead of at its next pass."""
        if self.fleet is None:
            return
        was_taking = self.fleet.mode.takes
        self.fleet.poll()
        if self.fleet.mode.takes:
            if not was_taking:
                wake_taker()
            return
        self.adopt_assigned(adopt)

    def adopt_assigned(self, adopt: Callable[[Optional[list]], list]) -> list:
        """As a follower: hold what the leader assigned to us, by the owner index (else a
        scan); the one way a follower gains leases (the fleet tick, and a start)."""
        assert self.fleet is not None
        return adopt(self.fleet.assigned_keys())

    def publish_metrics(self) -> None:
        if self.fleet is not None:
            self.fleet.publish_metrics()

    def throughput_kbps(self, key: str) -> Optional[float]:
        """The lease's KB/s since its last renewal; None where no leader reads it."""
        rate = self.throughput.rate_kbps(key)
        if self.fleet is None or not self.fleet.mode.publishes_metrics:
            return None
        return rate

    def handoff_started(self, entry: HeldLease) -> None:
        """The renewer found a handoff: let the application finish (the listener), or
        transfer at once when nobody needs to (createStream re-reads from the checkpoint)."""
        new_owner = entry.lease.lease_owner or "?"
        log.info("lease %s: the KCL 3.x leader hands it to %s", entry.key, new_owner)
        if self._on_handoff is None:
            self.hand_off(entry.key)
            return
        try:
            self._on_handoff(entry.key, new_owner)
        except Exception:
            log.exception("lease-handoff listener failed for %s: transferring now", entry.key)
            self.hand_off(entry.key)

    def hand_off(self, shard_id: str, wait_s: Optional[float] = None) -> bool:
        """Transfer a HANDING_OFF lease to the owner the leader named. False if it was not
        handing off, had moved (the leader's own fallback assigned it meanwhile), or
        another write to it held it past ``wait_s`` (None: the failover time)."""
        entry = self._held.get(shard_id)
        if entry is None or entry.state is not LeaseState.HANDING_OFF:
            return False
        wait = self._failover_time_s if wait_s is None else wait_s
        if not entry.write_lock.acquire(timeout=wait):
            return False  # another write is stuck: the timeout or the leader finishes it
        try:
            done = self.table.transfer(entry.lease) is not None
        except Exception as exc:
            log.warning("could not transfer lease %s: %s; retried at the timeout", shard_id, exc)
            return False
        finally:
            entry.write_lock.release()
        if self._held.remove(entry, lost=not done, handed_off=done):
            reason = f"handed off to {entry.lease.lease_owner}" if done else "moved meanwhile"
            log.info("lease %s: %s", shard_id, reason)
            self._tell_lost(shard_id, reason)
        return done

    def expire_handoffs(self, run: Optional[Callable[..., Any]] = None) -> None:
        """Transfer the handoffs older than ``handoff_timeout_s`` (after each renewal pass).

        Each transfer goes to ``run`` (the worker's pool: the renewal thread never waits
        on a lease another write holds, nor on the transfer's call); it does not wait
        for the lease's write lock, so a lease another write holds is tried again at
        the next pass. Without ``run``, here."""
        now = self._clock()
        for entry in self._held.entries(LeaseState.HANDING_OFF):
            since = entry.handoff_since
            if since is not None and now - since > self.handoff_timeout_s:
                log.warning(
                    "lease %s: the handoff to %s did not finish within %.0fs: transferring it",
                    entry.key,
                    entry.lease.lease_owner,
                    self.handoff_timeout_s,
                )
                if run is None:
                    self.hand_off(entry.key, 0.0)
                    continue
                try:
                    run(self.hand_off, entry.key, 0.0)
                except RuntimeError:  # the pool is shutting down: so is the worker
                    return
