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

Both come back from outside the process (Spark's offset log, an end store's files), so
reading one checks every field: what is not an offset or a range end as written here is
one :class:`CorruptOffsetError` naming where it was read and what was wrong.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Optional, Union

from .. import json_text
from ..errors import KinesisDStreamError, shown
from .positions import SHARD_END, Position, position_problem

VERSION = 1
#: How Spark's offset log is named in errors: the source is handed its JSON, not its path.
SPARK_OFFSET_LOG = "Spark's offset log (<checkpointLocation>/offsets/<batch id>)"
#: A range end's JSON is under 1 KiB; a stored one larger than this is not one.
MAX_END_BYTES = 64 * 1024


class CorruptOffsetError(KinesisDStreamError, ValueError):
    """Stored JSON that is not a kinesis_dstream offset or range end: names where it was
    read (Spark's offset log, an end store's file, object or item) and what was wrong.
    Trying again cannot heal it: restore the file, or start a new checkpointLocation."""


class _Problem(ValueError):
    """What is wrong with one field (turned into a CorruptOffsetError naming where)."""


def _require(ok: bool, problem: str) -> None:
    if not ok:
        raise _Problem(problem)


def _integer(value: Any, name: str, low: int) -> int:
    ok = isinstance(value, int) and not isinstance(value, bool) and value >= low
    _require(ok, f"{name!r} is {shown(value)}, not an integer >= {low}")
    return value


def _position(value: Any, name: str) -> Position:
    problem = position_problem(value)
    _require(problem is None, f"{name}: {problem}")
    return value


def _corrupt(what: str, where: str, value: Any, problem: Exception) -> CorruptOffsetError:
    text = shown(json.dumps(value))
    return CorruptOffsetError(
        f"{where}: not a kinesis_dstream {what} (version {VERSION}): {problem}; read {text}"
    )


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
    def from_json(cls, value: Any) -> ShardRange:
        """Raises ``_Problem`` (see :meth:`Offset.from_json`)."""
        _require(isinstance(value, dict), f"a range is {shown(value)}, not an object")
        cutoff = value.get("cutoff")
        ok = cutoff is None or position_problem({"ts": cutoff}) is None
        _require(ok, f"'cutoff' is {shown(cutoff)}, not a UTC timestamp nor null")
        return cls(
            _position(value.get("from"), "'from'"), _integer(value.get("limit"), "limit", 0), cutoff
        )


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
    def from_json(cls, value: Any, where: str = SPARK_OFFSET_LOG) -> Offset:
        """The offset ``value`` (JSON, as :meth:`to_json` writes it) read from ``where``;
        :class:`CorruptOffsetError` naming ``where`` and what was wrong when it is not one."""
        try:
            _require(isinstance(value, dict), "not an object")
            _require(value.get("v") == VERSION, f"'v' is {shown(value.get('v'))}")
            for name in ("stream", "query"):
                _require(isinstance(value.get(name), str), f"{name!r} is not a string")
            gen = _integer(value.get("gen"), "gen", 0)
            entries = value.get("shards")
            _require(isinstance(entries, dict), "'shards' is not an object")
            shards: list = []
            for shard_id, entry in entries.items():
                shard = f"shard {shown(shard_id)}"
                ok = isinstance(entry, dict) and set(entry) in ({"pos"}, {"range"})
                _require(ok, f"{shard}: {shown(entry)} is not a position nor a range")
                if "range" in entry:
                    shards.append((shard_id, ShardRange.from_json(entry["range"])))
                else:
                    shards.append((shard_id, _position(entry["pos"], f"{shard} pos")))
        except _Problem as problem:
            raise _corrupt("offset", where, value, problem) from None
        return cls(value["stream"], value["query"], gen, tuple(sorted(shards)))

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
    def from_json(cls, value: Any, where: str = "the end store") -> RangeEnd:
        """The range end ``value`` (JSON, as :meth:`to_json` writes it) read from
        ``where``; :class:`CorruptOffsetError` naming ``where`` when it is not one."""
        try:
            _require(isinstance(value, dict), "not an object")
            _require(value.get("v", VERSION) == VERSION, f"'v' is {shown(value.get('v'))}")
            last = value.get("last")
            ok = last is None or (isinstance(last, dict) and "seq" in last)
            _require(ok, f"'last' is {shown(last)}, not a sequence number")
            if last is not None:
                _position(last, "'last'")
            children = value.get("children") or []
            ok = isinstance(children, list) and all(isinstance(c, str) for c in children)
            _require(ok, f"'children' is {shown(children)}, not a list of shard ids")
            subscribed = value.get("subscribedAt")
            ok = subscribed is None or type(subscribed) in (int, float)
            _require(ok, f"'subscribedAt' is {shown(subscribed)}, not a time")
            iterator = value.get("nextIterator")
            _require(iterator is None or isinstance(iterator, str), "'nextIterator' is not text")
            return cls(
                count=_integer(value.get("count"), "count", 0),
                next=_position(value.get("next"), "'next'"),
                last=last,
                shard_end=_flag(value, "shardEnd"),
                children=tuple(children),
                millis_behind_latest=_optional_count(value, "millisBehindLatest"),
                throttled=_flag(value, "throttled"),
                stopped_at_cutoff=_flag(value, "stoppedAtCutoff"),
                caught_up=_flag(value, "caughtUp"),
                outside_shard=_optional_count(value, "outsideShard") or 0,
                aggregates_dropped=_optional_count(value, "aggregatesDropped") or 0,
                user_records_dropped=_optional_count(value, "userRecordsDropped") or 0,
                malformed_aggregates=_optional_count(value, "malformedAggregates") or 0,
                max_consumer_lag_ms=_optional_count(value, "maxConsumerLagMs"),
                subscribed_at=subscribed,
                next_iterator=iterator,
                start_iterator_refused=_flag(value, "startIteratorRefused"),
            )
        except _Problem as problem:
            raise _corrupt("range end", where, value, problem) from None

    @classmethod
    def from_bytes(cls, data: Union[bytes, str], where: str) -> RangeEnd:
        """A range end as an end store holds it (JSON text), read from ``where``."""
        size = len(data)
        if size > MAX_END_BYTES:
            raise CorruptOffsetError(
                f"{where}: not a kinesis_dstream range end: {size} bytes (at most {MAX_END_BYTES})"
            )
        try:
            value = json_text.loads(data)
        except ValueError as exc:
            raise CorruptOffsetError(f"{where}: not a kinesis_dstream range end: {exc}") from None
        return cls.from_json(value, where)


def _optional_count(value: dict, name: str) -> Optional[int]:
    count = value.get(name)
    return None if count is None else _integer(count, name, 0)


def _flag(value: dict, name: str) -> bool:
    flag = value.get(name)
    _require(flag is None or isinstance(flag, bool), f"{name!r} is {shown(flag)}, not true/false")
    return bool(flag)
