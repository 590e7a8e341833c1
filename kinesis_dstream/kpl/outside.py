"""Counting KPL user records that lie outside the hash range of the shard they came from,
and the malformed aggregates passed through whole.

Such records are delivered by default (see :mod:`.deaggregation`): producers that are not
shard-aware, such as AWS's own ``aws-kinesis-agg`` aggregators, write them all the time.
They are never silent either: each reader adds its counts here, and the owner (a DStream
receiver, the Structured Streaming source) calls :meth:`OutsideShardTally.warn` once per
interval, which logs one line per shard whose counts grew since the last call, never one
line per record. Malformed aggregates are counted here too (each is logged where it is
read, on the executor).
"""

from __future__ import annotations

import logging
import threading
from typing import Optional

log = logging.getLogger(__name__)

#: The keys of :meth:`OutsideShardTally.snapshot`'s per-shard dicts.
OUTSIDE = "user_records_outside_shard"
AGGREGATES_DROPPED = "aggregates_dropped"
RECORDS_DROPPED = "user_records_dropped"
MALFORMED = "malformed_aggregates"


class OutsideShardTally:
    """Per-shard counts of user records outside the shard's range, and of malformed
    aggregates passed through as plain records; thread-safe."""

    def __init__(self, stream_name: str, dropping: bool = False) -> None:
        self.stream_name = stream_name
        #: True when the application asked for the KCL's drop of such aggregates.
        self.dropping = dropping
        self._lock = threading.Lock()
        # shard id -> [outside, aggregates dropped, records dropped, malformed aggregates]
        self._counts: dict = {}
        self._warned: dict = {}  # shard id -> the first three counts at the last warning

    def add(
        self,
        shard_id: str,
        outside: int,
        aggregates_dropped: int = 0,
        records_dropped: int = 0,
        malformed: int = 0,
    ) -> None:
        if not (outside or aggregates_dropped or records_dropped or malformed):
            return
        with self._lock:
            counts = self._counts.setdefault(shard_id, [0, 0, 0, 0])
            counts[0] += outside
            counts[1] += aggregates_dropped
            counts[2] += records_dropped
            counts[3] += malformed

    def snapshot(self) -> dict:
        """{shard id: {user_records_outside_shard, aggregates_dropped, user_records_dropped,
        malformed_aggregates}}."""
        with self._lock:
            return {
                shard: {
                    OUTSIDE: c[0],
                    AGGREGATES_DROPPED: c[1],
                    RECORDS_DROPPED: c[2],
                    MALFORMED: c[3],
                }
                for shard, c in sorted(self._counts.items())
            }

    def totals(self) -> dict:
        totals = {OUTSIDE: 0, AGGREGATES_DROPPED: 0, RECORDS_DROPPED: 0, MALFORMED: 0}
        for counts in self.snapshot().values():
            for key, value in counts.items():
                totals[key] += value
        return totals

    def warn(self, logger: Optional[logging.Logger] = None) -> int:
        """Log one line per shard whose counts grew since the last call; returns the lines."""
        with self._lock:
            grown = [
                (shard, c[:3], self._warned.get(shard, [0, 0, 0]))
                for shard, c in sorted(self._counts.items())
                if c[:3] != self._warned.get(shard, [0, 0, 0])
            ]
            for shard, counts, _ in grown:
                self._warned[shard] = counts
        for shard, counts, before in grown:
            outside = counts[0] - before[0]
            if self.dropping:
                (logger or log).warning(
                    "stream %s shard %s: dropped %d KPL aggregates (%d user records) holding "
                    "user records outside the shard's hash range, as the KCL does "
                    "(dropAggregatesOutsideShard); %d dropped in total",
                    self.stream_name,
                    shard,
                    counts[1] - before[1],
                    counts[2] - before[2],
                    counts[2],
                )
            else:
                (logger or log).warning(
                    "stream %s shard %s: delivered %d KPL user records whose hash key lies "
                    "outside the shard's hash range (%d in total); the producer's aggregator "
                    "is not shard-aware, or these are a KPL re-send during resharding",
                    self.stream_name,
                    shard,
                    outside,
                    counts[0],
                )
        return len(grown)
