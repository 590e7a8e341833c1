"""Planning a batch read on the driver: every shard of the range, a task each.

A range across a reshard is complete because every shard ListShards still returns is
read, closed parents and their children alike, each from its own start to its own end:
a parent's records lie before its children's, so where the range cuts them is a matter
of arrival times (or the sequence numbers given), never of which shard is open now.
A shard wholly outside the range costs its task one GetShardIterator and one
GetRecords.

``latest`` is pinned here, once: the moment the read is planned becomes every shard's
end timestamp, so records that arrive while the tasks read are left out and a retried
task reads exactly what the first attempt did.

The range's start is compared with the stream's retention (DescribeStreamSummary's
``RetentionPeriodHours``): hours before the oldest retained moment were not there to
read. That is reported on every read (a warning naming the hours), or fails the read
with ``failOnDataLoss=true``, as the streaming connectors do with trimmed data.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Optional

from pyspark.sql.datasource import InputPartition

from ...errors import RecordsLostError
from ...retrieval.streams import list_shards
from ..config.options import SourceOptions
from ..driver.planner import ShardInfo
from ..positions import Position, describe, now_utc, parse_utc
from .bounds import BatchBounds, ShardEnd

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ShardSlice(InputPartition):
    """One task of a batch read: ``shard_id`` of ``stream_name`` from ``start`` to ``end``."""

    stream_name: str
    shard_id: str
    start: Position
    end: ShardEnd
    hash_key_range: Optional[tuple] = None

    def describe(self) -> str:
        return f"{self.stream_name}/{self.shard_id} ({describe(self.start)}, {self.end.describe()})"


def plan_read(options: SourceOptions, bounds: BatchBounds, planned: datetime) -> list:
    """Every stream's shard slices; ``planned``: the moment ``latest`` stands for."""
    slices: list = []
    named = bounds.named_shards()
    for stream in options.connection.stream_names:
        stream_options = options.for_stream(stream)
        client = stream_options.connection.client_spec().client()
        listed = list_shards(client, stream, max_results=options.max_shards_per_describe)
        shards = [ShardInfo.from_list_shards(s) for s in listed]
        check_retention(client, stream, bounds.start, planned, options.fail_on_data_loss)
        named_here = {shard_id for st, shard_id in named if st == stream}
        _check_named(stream, named_here - {s.shard_id for s in shards}, options)
        for shard in shards:
            slices.append(
                ShardSlice(
                    stream,
                    shard.shard_id,
                    bounds.start_of(stream, shard.shard_id),
                    bounds.end_of(stream, shard.shard_id, planned),
                    shard.hash_key_range,
                )
            )
    where, count = options.connection.where, len(slices)
    log.info("batch read of %s: %d shard(s), planned at %s", where, count, planned.isoformat())
    return slices


def _check_named(stream: str, absent: set, options: SourceOptions) -> None:
    """Shards the offsets JSON names that the stream no longer lists (expired, or wrong)."""
    if not absent:
        return
    message = (
        f"stream {stream!r} does not list shard(s) {sorted(absent)} named in the offsets: "
        "expired past the retention, or not the stream's"
    )
    if options.fail_on_data_loss:
        raise RecordsLostError(message + " (failOnDataLoss=true)")
    log.warning("%s; reading the shards it lists (failOnDataLoss=false)", message)


def retention_of(client: Any, stream: str) -> int:
    """The stream's retention in hours (DescribeStreamSummary)."""
    summary = client.describe_stream_summary(StreamName=stream)["StreamDescriptionSummary"]
    return int(summary["RetentionPeriodHours"])


def hours_not_retained(start: Position, retention_hours: int, now: datetime) -> float:
    """Hours of the range before the oldest moment the stream still keeps (0: none)."""
    if not (isinstance(start, dict) and "ts" in start):
        return 0.0  # the trim horizon is the oldest retained; sequence numbers are checked
    horizon = now - timedelta(hours=retention_hours)
    gap = (horizon - parse_utc(start["ts"])).total_seconds() / 3600.0
    return max(0.0, gap)


def check_retention(client: Any, stream: str, start: Position, now: datetime, fail: bool) -> float:
    """Report (warn, or fail with ``fail``) the range's hours past the stream's retention."""
    if not (isinstance(start, dict) and "ts" in start):
        return 0.0
    retention = retention_of(client, stream)
    hours = hours_not_retained(start, retention, now)
    if hours <= 0:
        return 0.0
    message = (
        f"stream {stream!r} keeps records {retention} hours: the batch read's start "
        f"{start['ts']} is {hours:.2f} hours before the oldest retained moment, so records "
        f"of those {hours:.2f} hours (if any) were not there to read"
    )
    if fail:
        raise RecordsLostError(message + " (failOnDataLoss=true)")
    log.warning("%s; reading from the trim horizon (failOnDataLoss=false)", message)
    return hours


def planning_moment() -> datetime:
    """What ``latest`` means: this machine's clock when the read is planned."""
    return now_utc()
