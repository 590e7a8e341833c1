"""The source's offset: what Spark stores in its offset log, as plain JSON.

Spark compares offsets by their JSON text, so every dict here is built in one fixed key
order and sequence numbers are strings. An offset is::

    {"v": 1, "stream": "<name>", "query": "<salt>", "gen": <n>,
     "shards": {"<shardId>": <entry>, ...}}          # shard ids sorted

and a shard's entry is either

- ``{"pos": <position>}``: every record up to the position is in earlier batches
  (positions: :mod:`.positions`); or
- ``{"range": {"from": <position>, "limit": <n>, "cutoff": <ISO or null>}}``: this
  batch reads up to ``limit`` records after ``from`` (none that arrived after ``cutoff``).
  Where the range really ended is fixed by the first executor that read it, in the end
  store, under :func:`range_key` -- so a replay reads exactly the same records.

``gen`` counts the offsets a query has produced; with ``query`` (a random salt drawn when
the query first starts) it makes every range's key unique, so a range that read nothing
can be tried again from the same position.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Optional

from .positions import SHARD_END, Position

VERSION = 1


@dataclass(frozen=True)
class ShardRange:
    """One shard's range of one micro-batch, read in one go (as createStream's
    :class:`~..dstream.executor_read.ShardRange`), before its end is known; where it
    ended is its :class:`RangeEnd`."""

    start: Position
    limit: int
    cutoff: Optional[str] = None

    def to_json(self) -> dict:
        return {"from": self.start, "limit": self.limit, "cutoff": self.cutoff}

    @classmethod
    def from_json(cls, value: dict) -> ShardRange:
        return cls(value["from"], int(value["limit"]), value.get("cutoff"))


@dataclass(frozen=True)
class Offset:
    stream: str
    query: str
    gen: int
    #: shard id -> a position (str/dict) or a ShardRange
    shards: tuple

    @property
    def entries(self) -> dict:
        return dict(self.shards)

    def ranges(self) -> dict:
        return {s: e for s, e in self.shards if isinstance(e, ShardRange)}

    def to_json(self) -> dict:
        shards = {}
        for shard_id, entry in sorted(self.shards):
            if isinstance(entry, ShardRange):
                shards[shard_id] = {"range": entry.to_json()}
            else:
                shards[shard_id] = {"pos": entry}
        return {
            "v": VERSION,
            "stream": self.stream,
            "query": self.query,
            "gen": self.gen,
            "shards": shards,
        }

    @classmethod
    def from_json(cls, value: dict) -> Offset:
        if not isinstance(value, dict) or value.get("v") != VERSION:
            raise ValueError(
                f"not a kinesis_dstream offset (version {VERSION}): {json.dumps(value)[:200]}"
            )
        shards = []
        for shard_id, entry in value["shards"].items():
            if "range" in entry:
                shards.append((shard_id, ShardRange.from_json(entry["range"])))
            else:
                shards.append((shard_id, entry["pos"]))
        return cls(value["stream"], value["query"], int(value["gen"]), tuple(sorted(shards)))

    def finished(self) -> frozenset:
        return frozenset(s for s, e in self.shards if e == SHARD_END)


def make_offset(stream: str, query: str, gen: int, entries: dict) -> Offset:
    return Offset(stream, query, gen, tuple(sorted(entries.items())))


def range_key(offset: Offset, shard_id: str, shard_range: ShardRange) -> str:
    """The end store's key of one range: a function of the offset that holds it."""
    text = json.dumps(
        [VERSION, offset.stream, offset.query, offset.gen, shard_id, shard_range.to_json()],
        separators=(",", ":"),
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:40]


@dataclass(frozen=True)
class RangeEnd:
    """Where a range really ended, as the first executor that read it recorded it.

    ``next`` is the shard's position after the range (``from`` when nothing was read);
    ``last`` the extended sequence number of the last record included, or None.
    """

    count: int
    next: Position
    last: Optional[dict] = None
    shard_end: bool = False
    children: tuple = ()
    millis_behind_latest: Optional[int] = None
    throttled: bool = False
    stopped_at_cutoff: bool = False
    #: The read reached the shard's tip (MillisBehindLatest 0) before any bound.
    caught_up: bool = False
    #: KPL user records outside the shard's hash range (delivered unless dropped), and
    #: what the KCL's rule dropped when asked for (``dropAggregatesOutsideShard``).
    outside_shard: int = 0
    aggregates_dropped: int = 0
    user_records_dropped: int = 0
    #: KPL aggregates that did not parse, passed through as plain records.
    malformed_aggregates: int = 0
    #: Now minus the oldest arrival time read, when the range was read (Glue's lag).
    max_consumer_lag_ms: Optional[int] = None
    #: Fan-out: the executor's wall-clock time of the range's last successful
    #: SubscribeToShard (the shard's next range waits 5 s from it).
    subscribed_at: Optional[float] = None
    #: Polling: the shard iterator the read stopped at, when it is exactly at ``next``
    #: (the last page was consumed whole): the driver's next peek may go on from it instead
    #: of asking GetShardIterator. A hint (Kinesis keeps it 5 minutes), not part of the end.
    next_iterator: Optional[str] = field(default=None, compare=False)
    #: The range's start iterator (the peek's, with the partition) was refused on its first
    #: page and the read made its own from the start instead (counted in the progress).
    start_iterator_refused: bool = field(default=False, compare=False)

    def to_json(self) -> dict:
        return {
            "v": VERSION,
            "count": self.count,
            "next": self.next,
            "last": self.last,
            "shardEnd": self.shard_end,
            "children": list(self.children),
            "millisBehindLatest": self.millis_behind_latest,
            "throttled": self.throttled,
            "stoppedAtCutoff": self.stopped_at_cutoff,
            "caughtUp": self.caught_up,
            "outsideShard": self.outside_shard,
            "aggregatesDropped": self.aggregates_dropped,
            "userRecordsDropped": self.user_records_dropped,
            "malformedAggregates": self.malformed_aggregates,
            "maxConsumerLagMs": self.max_consumer_lag_ms,
            "subscribedAt": self.subscribed_at,
            "nextIterator": self.next_iterator,
            "startIteratorRefused": self.start_iterator_refused,
        }

    @classmethod
    def from_json(cls, value: dict) -> RangeEnd:
        return cls(
            count=int(value["count"]),
            next=value["next"],
            last=value.get("last"),
            shard_end=bool(value.get("shardEnd")),
            children=tuple(value.get("children") or ()),
            millis_behind_latest=value.get("millisBehindLatest"),
            throttled=bool(value.get("throttled")),
            stopped_at_cutoff=bool(value.get("stoppedAtCutoff")),
            caught_up=bool(value.get("caughtUp")),
            outside_shard=int(value.get("outsideShard") or 0),
            aggregates_dropped=int(value.get("aggregatesDropped") or 0),
            user_records_dropped=int(value.get("userRecordsDropped") or 0),
            malformed_aggregates=int(value.get("malformedAggregates") or 0),
            max_consumer_lag_ms=value.get("maxConsumerLagMs"),
            subscribed_at=value.get("subscribedAt"),
            next_iterator=value.get("nextIterator"),
            start_iterator_refused=bool(value.get("startIteratorRefused")),
        )
