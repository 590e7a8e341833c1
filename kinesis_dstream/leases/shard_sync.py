"""Shard sync: keep one lease per shard that needs reading, in parent-before-child order.

- An empty table gets a lease for every shard open at the initial position: the open
  shards for LATEST; every shard still in the stream for TRIM_HORIZON and AT_TIMESTAMP
  (closed ones included, so nothing retained is skipped), each with its parents.
- Later syncs find new shards (after a split or merge). A new shard whose parent has a
  lease, or is an ancestor of one, starts at TRIM_HORIZON, so no record between parent
  and child is skipped; other new shards start at the initial position. An AT_TIMESTAMP
  application gives such descendants AT_TIMESTAMP instead, as the KCL's
  ``HierarchicalShardSyncer`` does: the reader then starts at the application's
  timestamp, which is the shard's first record for any child younger than it, and never
  delivers a record older than the timestamp the user asked for.
- :meth:`ShardSync.create_child_leases` (at a parent's shard end) follows the same rule,
  so a child starts at the same position whichever path creates its lease first. (The
  KCL's shard-end path, ``newKCLLeaseForChildShard``, writes TRIM_HORIZON whatever the
  initial position; its periodic sync rarely races it, ours runs every minute.)
- A shard with a leased descendant gets no lease again (its lease was finished and
  deleted, or it predates the application).
- A finished (SHARD_END) lease is deleted once every child lease has started, that is,
  checkpointed past its starting sentinel.

A worker runs its sync through a :class:`PeriodicShardSync`: at start, then from its taker
passes every ``shard_sync_interval_s``, and a finished shard's children at once (the
KCL keeps this outside its lease coordinator too: ``PeriodicShardSyncManager``, and the
shard consumer's ``ShutdownTask``).
"""

from __future__ import annotations

import logging
from typing import Any, Callable, Optional

from ..esn import (
    AT_TIMESTAMP,
    ESN_AT_TIMESTAMP,
    ESN_LATEST,
    ESN_TRIM_HORIZON,
    LATEST,
    TRIM_HORIZON,
    ExtendedSequenceNumber,
)
from ..retrieval.streams import list_shards
from .lease import Lease
from .refresher import LeaseRefresher

log = logging.getLogger(__name__)

INITIAL_POSITIONS = {
    LATEST: ESN_LATEST,
    TRIM_HORIZON: ESN_TRIM_HORIZON,
    AT_TIMESTAMP: ESN_AT_TIMESTAMP,
}


def descendant_checkpoint(initial_position: str) -> ExtendedSequenceNumber:
    """Where a new child of a leased shard starts (HierarchicalShardSyncer's rule)."""
    return ESN_AT_TIMESTAMP if initial_position == AT_TIMESTAMP else ESN_TRIM_HORIZON


def parents_of(shard: dict) -> frozenset:
    return frozenset(
        p for p in (shard.get("ParentShardId"), shard.get("AdjacentParentShardId")) if p
    )


def lease_for_shard(shard: dict, checkpoint: ExtendedSequenceNumber) -> Lease:
    keys = shard.get("HashKeyRange", {})
    return Lease(
        lease_key=shard["ShardId"],
        checkpoint=checkpoint,
        parent_shard_ids=parents_of(shard),
        starting_hash_key=keys.get("StartingHashKey"),
        ending_hash_key=keys.get("EndingHashKey"),
    )


def has_started(lease: Optional[Lease]) -> bool:
    """The lease's shard was read: checkpointed at a sequence number or at its end."""
    return lease is not None and (not lease.checkpoint.is_sentinel or lease.is_finished)


class ShardSync:
    """Creates and cleans up leases for one stream in one application's table."""

    def __init__(
        self,
        kinesis: Any,
        stream_name: str,
        table: LeaseRefresher,
        initial_position: str = LATEST,
    ) -> None:
        if initial_position not in INITIAL_POSITIONS:
            raise ValueError(
                f"initial position must be one of {', '.join(INITIAL_POSITIONS)}, "
                f"got {initial_position!r}"
            )
        self.kinesis = kinesis
        self.stream_name = stream_name
        self.table = table
        self.initial_position = initial_position

    def sync(self) -> list:
        """One pass: create missing leases, delete finished parents. Returns keys created."""
        shards = list_shards(self.kinesis, self.stream_name)
        leases = {lease.lease_key: lease for lease in self.table.list_leases()}
        created = self._create_missing(shards, leases)
        self._delete_finished_parents(leases)
        return created

    def _create_missing(self, shards: list, leases: dict) -> list:
        by_id = {s["ShardId"]: s for s in shards}
        covered = set()  # shards with a leased descendant: never leased again
        for key in leases:
            pending = list(parents_of(by_id.get(key, {})))
            while pending:
                parent = pending.pop()
                if parent not in covered:
                    covered.add(parent)
                    pending += parents_of(by_id.get(parent, {}))
        empty_table = not leases
        initial = INITIAL_POSITIONS[self.initial_position]
        created = []
        for shard in _parents_first(shards):
            shard_id = shard["ShardId"]
            if shard_id in leases or shard_id in covered:
                continue
            closed = "EndingSequenceNumber" in shard.get("SequenceNumberRange", {})
            parent_leased = any(p in leases or p in covered for p in parents_of(shard))
            if parent_leased:  # from its first record (or the app's timestamp)
                checkpoint = descendant_checkpoint(self.initial_position)
            elif closed and self.initial_position == LATEST:
                continue  # a closed shard holds nothing after "now"
            else:
                checkpoint = initial
            lease = lease_for_shard(shard, checkpoint)
            if self.table.create_lease(lease):
                created.append(shard_id)
                log.info(
                    "created lease %s at %s (parents %s)%s",
                    shard_id,
                    checkpoint,
                    sorted(lease.parent_shard_ids),
                    " in an empty table" if empty_table else "",
                )
            leases[shard_id] = lease
        return created

    def create_child_leases(self, child_shard_ids: list) -> list:
        """At a parent's shard end: child leases (see :func:`descendant_checkpoint`)."""
        wanted = set(child_shard_ids)
        checkpoint = descendant_checkpoint(self.initial_position)
        created = []
        for shard in list_shards(self.kinesis, self.stream_name):
            if shard["ShardId"] in wanted and self.table.create_lease(
                lease_for_shard(shard, checkpoint)
            ):
                created.append(shard["ShardId"])
        return created

    def _delete_finished_parents(self, leases: dict) -> None:
        for lease in list(leases.values()):
            if not lease.is_finished or not lease.child_shard_ids:
                continue
            children_started = all(has_started(leases.get(c)) for c in lease.child_shard_ids)
            if children_started and self.table.delete(lease):
                log.info("deleted finished lease %s: its children have started", lease.lease_key)
                del leases[lease.lease_key]


class PeriodicShardSync:
    """One worker's use of a (possibly shared) :class:`ShardSync`: :meth:`sync_if_due`
    from its taker, :meth:`create_children` at a shard's end. With no sync, nothing."""

    def __init__(
        self, sync: Optional[ShardSync], interval_s: float, clock: Callable[[], float]
    ) -> None:
        self.sync = sync
        self.interval_s = interval_s
        self._clock = clock
        self._last_sync: Optional[float] = None

    def sync_if_due(self) -> None:
        """Sync if this worker has not within ``interval_s`` (the first call always)."""
        if self.sync is None:
            return
        now = self._clock()
        if self._last_sync is None or now - self._last_sync >= self.interval_s:
            self._last_sync = now
            self.sync.sync()

    def create_children(self, shard_id: str, child_shard_ids: list) -> None:
        """Create the leases of ``shard_id``'s children now; if that fails, the periodic
        sync creates them (the parent stays leased until then), so it is logged only."""
        if self.sync is None or not child_shard_ids:
            return
        try:
            self.sync.create_child_leases(child_shard_ids)
        except Exception as exc:
            log.warning(
                "could not create the child leases %s of shard %s now: %s; the next "
                "shard sync will",
                child_shard_ids,
                shard_id,
                exc,
            )


def _parents_first(shards: list) -> list:
    """Shards ordered so that each comes after its parents (ids sort by creation)."""
    return sorted(shards, key=lambda s: s["ShardId"])
