"""Pure planning logic of the source runner: no Spark, no AWS, tested in milliseconds.

- :func:`initial_positions`: the shards a new query starts with, as the KCL's shard sync
  does for an empty lease table.
- :func:`merge_shard_list`: fold a fresh ListShards into the positions: new children
  start at TRIM_HORIZON (nothing between parent and child is skipped); a shard that
  expired before it was finished is reported as lost.
- :func:`ready_shards`: a shard is read only once every parent is at SHARD_END, which
  keeps per-partition-key order across splits and merges.
- :func:`split_limit`: share a batch's row limit among the shards that have data.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Optional

from ..positions import LATEST, SHARD_END, TRIM_HORIZON, Position, ts_position


@dataclass(frozen=True)
class ShardInfo:
    """What ListShards says about a shard that matters here."""

    shard_id: str
    parents: frozenset = frozenset()
    hash_key_range: Optional[tuple] = None
    closed: bool = False

    @classmethod
    def from_list_shards(cls, shard: dict) -> ShardInfo:
        parents = frozenset(
            p for p in (shard.get("ParentShardId"), shard.get("AdjacentParentShardId")) if p
        )
        keys = shard.get("HashKeyRange") or {}
        hash_range = (
            (keys["StartingHashKey"], keys["EndingHashKey"]) if "StartingHashKey" in keys else None
        )
        closed = "EndingSequenceNumber" in (shard.get("SequenceNumberRange") or {})
        return cls(shard["ShardId"], parents, hash_range, closed)


def initial_positions(shards: dict, initial: Position, now: datetime) -> dict:
    """shard id -> position for a query's first offset.

    LATEST starts every open shard AT_TIMESTAMP ``now`` (the query's start, pinned: a
    closed shard holds nothing newer);
    TRIM_HORIZON and AT_TIMESTAMP start every shard still in the stream, closed ones
    included, so nothing retained is skipped (children wait for their parents).
    """
    if initial == LATEST:
        pinned = ts_position(now)
        return {s: pinned for s, info in shards.items() if not info.closed}
    return {s: initial for s in shards}


def _ancestors(shard_id: str, shards: dict) -> set:
    seen: set = set()
    pending = list(shards[shard_id].parents) if shard_id in shards else []
    while pending:
        parent = pending.pop()
        if parent not in seen:
            seen.add(parent)
            if parent in shards:
                pending.extend(shards[parent].parents)
    return seen


def merge_shard_list(positions: dict, shards: dict) -> tuple:
    """(new positions, shards lost): fold a ListShards answer into ``positions``.

    New shards that no known shard descends from start at TRIM_HORIZON. A finished shard
    that left the listing (expired) is dropped from the offset; an unfinished one that
    left it is *lost*: its remaining records can no longer be read.
    """
    merged = dict(positions)
    covered: set = set()
    for shard_id in positions:
        covered |= _ancestors(shard_id, shards)
    for shard_id in sorted(shards):
        if shard_id not in merged and shard_id not in covered:
            merged[shard_id] = TRIM_HORIZON
    lost = []
    for shard_id, position in positions.items():
        if shard_id in shards:
            continue
        if position != SHARD_END:
            lost.append(shard_id)
        if not any(shard_id in info.parents for info in shards.values()):
            del merged[shard_id]  # expired and no child remembers it: forget it
        elif position != SHARD_END:
            merged[shard_id] = SHARD_END  # lost: its children may go on
    return merged, sorted(lost)


def ready_shards(positions: dict, shards: dict) -> list:
    """Unfinished shards whose parents (those the query tracks) are all finished."""
    ready = []
    for shard_id, position in sorted(positions.items()):
        if position == SHARD_END:
            continue
        parents = shards[shard_id].parents if shard_id in shards else frozenset()
        if all(positions.get(p, SHARD_END) == SHARD_END for p in parents):
            ready.append(shard_id)
    return ready


def split_limit(shard_ids: list, per_shard: int, max_rows: Optional[int], gen: int) -> dict:
    """shard id -> records it may read this batch; shards given 0 wait for a later batch.

    Every shard gets at most ``per_shard``; the total is at most ``max_rows`` when given.
    The remainder rotates with ``gen`` so no shard is always the one left out.
    """
    if not shard_ids:
        return {}
    if max_rows is None or max_rows >= per_shard * len(shard_ids):
        return {s: per_shard for s in shard_ids}
    count = len(shard_ids)
    base, extra = divmod(max_rows, count)
    rotation = gen % count
    order = shard_ids[rotation:] + shard_ids[:rotation]
    limits = {}
    for index, shard_id in enumerate(order):
        limits[shard_id] = min(per_shard, base + (1 if index < extra else 0))
    return {s: n for s, n in limits.items() if n > 0}
