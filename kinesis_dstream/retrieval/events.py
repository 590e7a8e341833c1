"""SubscribeToShard's event stream as pure functions: events in, positions out.

Kept apart from :mod:`.fanout` (which does the I/O) so the parsing and the position
arithmetic are tested in milliseconds without a server.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from .reader import WHOLE_RECORD, StartPosition


@dataclass(frozen=True)
class ShardEvent:
    """One SubscribeToShardEvent, parsed."""

    records: list
    continuation: Optional[str]
    millis_behind_latest: Optional[int]
    #: Child shard ids when the event ends the shard, else empty.
    children: tuple = ()
    #: True on the shard's last event (closed by a split or merge).
    shard_ended: bool = False


def parse_event(message: dict) -> ShardEvent:
    """A botocore event-stream item as a :class:`ShardEvent`.

    Kinesis ends a shard with an event that has no ``ContinuationSequenceNumber`` and
    carries ``ChildShards``; ministack sends ``ChildShards`` with a continuation number,
    so either marks the end.
    """
    event = message.get("SubscribeToShardEvent")
    if event is None:
        raise ValueError(f"not a SubscribeToShardEvent: {sorted(message)}")
    continuation = event.get("ContinuationSequenceNumber")
    children = tuple(child["ShardId"] for child in event.get("ChildShards") or ())
    return ShardEvent(
        records=event.get("Records") or [],
        continuation=continuation,
        millis_behind_latest=event.get("MillisBehindLatest"),
        children=children,
        shard_ended=continuation is None or bool(children),
    )


def starting_position(start: StartPosition) -> dict:
    """SubscribeToShard's ``StartingPosition`` for a reader's start."""
    position: dict = {"Type": start.iterator_type}
    if start.sequence_number is not None:
        position["SequenceNumber"] = start.sequence_number
    if start.timestamp is not None:
        position["Timestamp"] = start.timestamp
    return position


def continuation_position(continuation: str) -> dict:
    """Where a subscription that ended resumes: after its continuation number."""
    return {"Type": "AFTER_SEQUENCE_NUMBER", "SequenceNumber": continuation}


def consumed_through(last_raw_sequence: int, last_delivered: Optional[tuple]) -> tuple:
    """The ESN a whole event is consumed through (as :attr:`ShardReader.resume_after`).

    The last user record delivered if it came from the event's last raw record, else the
    whole last raw record (its user records were dropped or outside the hash range).
    """
    if last_delivered is not None and last_delivered[0] == last_raw_sequence:
        return last_delivered
    return (last_raw_sequence, WHOLE_RECORD)
