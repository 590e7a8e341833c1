"""The two bounds of a batch read, from the Kafka connector's option names and the source's.

A batch read (``spark.read.format("kinesis")``) reads every record of a range, per shard:

- the start (inclusive): ``startingTimestamp`` (epoch milliseconds, as Kafka's, or
  ISO-8601), else ``startingOffsets`` (``earliest`` or a JSON of per-shard sequence
  numbers), else the source's ``initialPosition`` / ``startingPosition`` (trim horizon,
  a timestamp in any connector's spelling); by default the trim horizon, as Kafka's
  batch default ``earliest``;
- the end (exclusive, as Kafka's): ``endingTimestamp``, else ``endingOffsets``
  (``latest`` or a JSON of per-shard sequence numbers); by default ``latest``, which is
  pinned, when the read is planned, to a timestamp: records that arrived before then.

Kafka's precedence decides when several are given: a timestamp wins over offsets, which
win over the source's position (a line is logged naming what was ignored). The JSON is
Kafka's shape with shards for partitions and sequence numbers (strings) for offsets::

    {"my-stream": {"shardId-000000000000": "4959033827149025660855969253836157...",
                   "shardId-000000000001": "earliest"}}

``earliest`` (or -2) in ``startingOffsets`` and ``latest`` (or -1) in ``endingOffsets``
name a shard's default. A shard the JSON does not name starts at the trim horizon and
ends at ``latest``, like a Kafka partition the JSON leaves out.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Optional

from ...errors import shown
from ...esn import is_sequence_number
from ..config.option_table import SOURCE_ALIASES
from ..config.option_values import json_value
from ..config.options import OptionError, canonical_options
from ..positions import (
    LATEST,
    TRIM_HORIZON,
    Position,
    epoch_ms_instant,
    format_timestamp,
    parse_initial_position,
    parse_iso,
    seq_position,
    ts_position,
)

log = logging.getLogger(__name__)

#: The options that bound a batch read and nothing else (refused by readStream).
BATCH_ONLY_OPTIONS = ("endingOffsets", "endingTimestamp")
#: Kafka's batch start options, refused by readStream (which starts at initialPosition).
BATCH_START_OPTIONS = ("startingOffsets", "startingTimestamp")

_EARLIEST_WORDS = ("earliest", "trim_horizon", "-2")
_LATEST_WORDS = ("latest", "-1")
_EPOCH_MS = re.compile(r"-?[0-9]+", re.ASCII)


@dataclass(frozen=True)
class ShardEnd:
    """Where one shard's part of a batch read stops (exclusive bounds).

    ``before_ts``: the first record that arrived at or after it is not read (ISO UTC);
    ``before_seq``: the record with this sequence number, and every later one, is not
    read. A read also stops at a closed shard's end and at an open shard's tip.
    """

    before_ts: Optional[str] = None
    before_seq: Optional[str] = None

    def describe(self) -> str:
        if self.before_seq is not None:
            return f"before sequence number {self.before_seq}"
        if self.before_ts is not None:
            return f"before arrival {self.before_ts}"
        return "at its end or tip"


@dataclass(frozen=True)
class BatchBounds:
    """The start and end of a batch read: a default and per-(stream, shard) exceptions."""

    start: Position = TRIM_HORIZON
    #: ((stream, shard id), position) pairs from startingOffsets
    start_shards: tuple = ()
    #: None: ``latest`` (pinned when the read is planned); else an ISO UTC timestamp.
    end_ts: Optional[str] = None
    #: ((stream, shard id), sequence number or None for ``latest``) from endingOffsets
    end_shards: tuple = ()

    def start_of(self, stream: str, shard_id: str) -> Position:
        return dict(self.start_shards).get((stream, shard_id), self.start)

    def end_of(self, stream: str, shard_id: str, planned: datetime) -> ShardEnd:
        """The shard's end; ``latest`` is ``planned`` (the moment the read is planned)."""
        named = dict(self.end_shards)
        if named.get((stream, shard_id)) is not None:
            return ShardEnd(before_seq=named[(stream, shard_id)])
        if self.end_ts is not None and (stream, shard_id) not in named:
            return ShardEnd(before_ts=self.end_ts)
        return ShardEnd(before_ts=format_timestamp(planned))

    def named_shards(self) -> set:
        return {key for key, _ in self.start_shards} | {key for key, _ in self.end_shards}

    @classmethod
    def parse(cls, options: Mapping[str, Any], streams: tuple) -> BatchBounds:
        """The bounds from a DataSource's options; ``streams``: the read's stream names."""
        found = canonical_options(options, SOURCE_ALIASES)
        start, start_shards = _start(found, streams)
        end_ts, end_shards = _end(found, streams)
        if end_ts is not None and isinstance(start, dict) and start.get("ts", "") >= end_ts:
            raise OptionError(
                f"the batch read's start ({start['ts']}) is not before its end ({end_ts}): "
                "the range is empty"
            )
        return cls(start, start_shards, end_ts, end_shards)


def _ignored(found: dict, winner: str, losers: tuple) -> None:
    for name in losers:
        if name in found:
            log.info(
                "option %r is ignored: %r takes precedence (as in Kafka's connector)",
                found[name][0],
                found[winner][0],
            )


def _start(found: dict, streams: tuple) -> tuple:
    if "startingTimestamp" in found:
        _ignored(found, "startingTimestamp", ("startingOffsets", "initialPosition"))
        key, value = found["startingTimestamp"]
        return ts_position(_timestamp(str(value), key)), ()
    if "startingOffsets" in found:
        _ignored(found, "startingOffsets", ("initialPosition",))
        key, value = found["startingOffsets"]
        text = str(value).strip()
        if text.lower() in _EARLIEST_WORDS:
            return TRIM_HORIZON, ()
        if text.lower() in _LATEST_WORDS:
            raise OptionError(
                f"option {key!r}: a batch read cannot start at latest (it would read "
                "nothing); use earliest, a JSON of sequence numbers, or startingTimestamp"
            )
        shards = _shard_json(text, key, streams, _EARLIEST_WORDS, TRIM_HORIZON)
        return TRIM_HORIZON, tuple((k, v) for k, v in shards if v != TRIM_HORIZON)
    if "initialPosition" in found:
        key, value = found["initialPosition"]
        position = parse_initial_position(str(value), f"option {key!r}")
        if position == LATEST:
            raise OptionError(
                f"option {key!r}=latest: a batch read cannot start at latest (it would read "
                "nothing); use trim_horizon or a timestamp"
            )
        return position, ()
    return TRIM_HORIZON, ()


def _end(found: dict, streams: tuple) -> tuple:
    if "endingTimestamp" in found:
        _ignored(found, "endingTimestamp", ("endingOffsets",))
        key, value = found["endingTimestamp"]
        return format_timestamp(_timestamp(str(value), key)), ()
    if "endingOffsets" in found:
        key, value = found["endingOffsets"]
        text = str(value).strip()
        if text.lower() in _LATEST_WORDS:
            return None, ()
        if text.lower() in _EARLIEST_WORDS:
            raise OptionError(f"option {key!r}: a batch read cannot end at earliest")
        shards = _shard_json(text, key, streams, _LATEST_WORDS, None)
        return None, tuple((k, None if v is None else v["seq"]) for k, v in shards)
    return None, ()


def _timestamp(text: str, key: str) -> datetime:
    """Kafka's epoch milliseconds, or ISO-8601 with a zone."""
    stripped = text.strip()
    if _EPOCH_MS.fullmatch(stripped):
        return epoch_ms_instant(stripped, f"option {key!r}")
    if stripped[:1].isdigit():  # a date: ISO-8601's errors say what is wrong with it
        return parse_iso(stripped, f"option {key!r}")
    raise OptionError(
        f"option {key!r}: {shown(text)} is neither milliseconds since the epoch (as "
        "Kafka's) nor an ISO-8601 timestamp with a zone"
    )


def _shard_json(text: str, key: str, streams: tuple, default_words: tuple, default: Any) -> list:
    """[((stream, shard), position or ``default``)] from Kafka's per-partition JSON."""
    spec = json_value(
        text,
        f"option {key!r}",
        f'{default_words[0]} or {{"stream": {{"shardId-000000000000": "<sequence number>"}}}}',
    )
    if not isinstance(spec, dict) or not all(isinstance(v, dict) for v in spec.values()):
        raise OptionError(
            f"option {key!r} must be a JSON object of streams, each an object of shard ids "
            'and sequence numbers, e.g. {"stream": {"shardId-000000000000": "4959..."}}'
        )
    unknown = sorted(set(spec) - set(streams))
    if unknown:
        raise OptionError(
            f"option {key!r} names stream(s) {unknown} that the read does not: {list(streams)}"
        )
    shards = []
    for stream, entries in spec.items():
        for shard_id, value in entries.items():
            word = str(value).strip().lower() if isinstance(value, (str, int)) else ""
            if word in default_words:
                shards.append(((stream, shard_id), default))
            elif is_sequence_number(word):
                shards.append(((stream, shard_id), seq_position(word, -1)))
            else:
                raise OptionError(
                    f"option {key!r}: shard {shown(shard_id)} of {shown(stream)} has "
                    f"{shown(value)}, not a sequence number (a string of up to 129 digits) "
                    f"nor {default_words[0]}"
                )
    return sorted(shards, key=lambda item: item[0])


def refuse_batch_options(options: Mapping[str, Any]) -> None:
    """readStream with a batch read's bound: one line naming it (it would change what is
    read, so it is not ignored)."""
    found = canonical_options(options, SOURCE_ALIASES)
    for name in BATCH_ONLY_OPTIONS + BATCH_START_OPTIONS:
        if name in found:
            raise OptionError(
                f"option {found[name][0]!r} bounds a batch read (spark.read); readStream "
                "starts at initialPosition and has no end"
            )
