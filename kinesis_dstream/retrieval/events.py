"""SubscribeToShard's event stream as pure functions (an event in, a parsed event out),
and the pacing of subscribe calls.

Kept apart from :mod:`.fanout` (which does the I/O) so the parsing and the pacing are
tested in milliseconds without a server.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Optional


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


class SubscriptionPacer:
    """When the next SubscribeToShard for a (consumer, shard) may go out.

    Kinesis refuses (``ResourceInUseException``) a subscription within 5 s of the last
    successful one for the same consumer and shard, even if that one has ended. Readers
    in one process share a pacer (a range's reader follows the previous range's in the
    same Python worker), so a new reader waits out the rest of those 5 s instead of
    being refused; other processes' calls are still met with backoff. Thread-safe; times
    are from the caller's monotonic clock.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last: dict = {}

    def wait_s(self, key: tuple, interval_s: float, now: float) -> float:
        """Seconds to wait before subscribing for ``key``; 0 when it may go now."""
        with self._lock:
            last = self._last.get(key)
        return 0.0 if last is None else max(0.0, last + interval_s - now)

    def subscribed(self, key: tuple, now: float) -> None:
        """Record a successful subscribe call for ``key`` at ``now``."""
        with self._lock:
            self._last[key] = now


#: The process's pacer, shared by every :class:`~.fanout.FanOutShardReader` by default.
PACER = SubscriptionPacer()
