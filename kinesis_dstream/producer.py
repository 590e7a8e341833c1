"""A batching, retrying Kinesis producer (PutRecords within the service limits).

Records are buffered and sent in PutRecords calls of at most 500 records and 5 MiB.
Entries the service rejects (a per-record ``ErrorCode``) are retried with exponential
backoff and full jitter, bounded in attempts and time; whatever still fails is raised as
:class:`~.errors.ProducerError` carrying the failed records and their error codes, so
nothing is dropped silently. Retried records may land after records put later: like the
KPL, per-partition-key order is kept only while nothing is retried.

With ``aggregate=True`` user records are packed into KPL aggregates grouped by shard (see
:class:`~.aggregation.RecordAggregator`); the shard map is read at the first put and
again every ``shard_map_refresh_s``, flushing open aggregates first.
"""

from __future__ import annotations

import functools
import logging
import random
import threading
import time
from collections import Counter
from typing import Any, Callable, Optional, Union

from .aws import create_client
from .backoff import Backoff, call_with_retry
from .errors import KinesisServiceError, ProducerError
from .kpl import (
    DEFAULT_MAX_AGGREGATE_BYTES,
    MAGIC,
    DeaggregationStats,
    RecordAggregator,
    ShardMap,
    deaggregate,
    effective_hash_key,
)
from .retrieval.streams import list_shards
from .shard_rate import ShardRateLimiter

log = logging.getLogger(__name__)

MAX_RECORDS_PER_PUT = 500
MAX_BYTES_PER_PUT = 5 * 1024 * 1024
MAX_RECORD_BYTES = 1024 * 1024  # data plus UTF-8 partition key
MAX_PARTITION_KEY_CHARS = 256
MAX_HASH_KEY = 2**128 - 1

#: Per-record failures: up to 8 tries within 60 s.
DEFAULT_PUT_BACKOFF = Backoff(
    initial_delay_s=0.1, max_delay_s=5.0, max_attempts=8, max_elapsed_s=60.0
)
#: Whole-call failures (throttled call, 5xx, connection): a few quick tries per call.
DEFAULT_CALL_BACKOFF = Backoff(
    initial_delay_s=0.1, max_delay_s=2.0, max_attempts=5, max_elapsed_s=30.0
)

Data = Union[bytes, bytearray, memoryview, str]


def _entry_size(entry: dict) -> int:
    return len(entry["Data"]) + len(entry["PartitionKey"].encode("utf-8"))


def make_entry(data: Data, partition_key: str, explicit_hash_key: Optional[str] = None) -> dict:
    """A validated PutRecords entry; ValueError names the field, its value and the limit."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    elif isinstance(data, (bytearray, memoryview)):
        data = bytes(data)
    elif not isinstance(data, bytes):
        raise TypeError(f"record data must be bytes or str, got {type(data).__name__}")
    if not isinstance(partition_key, str) or not 1 <= len(partition_key) <= MAX_PARTITION_KEY_CHARS:
        raise ValueError(
            f"partition key must be a str of 1 to {MAX_PARTITION_KEY_CHARS} characters, "
            f"got {partition_key!r}"
        )
    entry: dict[str, Any] = {"Data": data, "PartitionKey": partition_key}
    if explicit_hash_key is not None:
        if not (explicit_hash_key.isdigit() and int(explicit_hash_key) <= MAX_HASH_KEY):
            raise ValueError(
                f"explicit hash key must be a decimal integer in [0, 2**128 - 1], "
                f"got {explicit_hash_key!r}"
            )
        entry["ExplicitHashKey"] = explicit_hash_key
    size = _entry_size(entry)
    if size > MAX_RECORD_BYTES:
        raise ValueError(
            f"record of {size} bytes (data plus partition key) exceeds the Kinesis limit "
            f"of {MAX_RECORD_BYTES} bytes (partition key {partition_key!r})"
        )
    return entry


class KinesisProducer:
    """Buffers records and writes them to one stream with PutRecords.

    Thread-safe: any number of threads may call :meth:`put` and :meth:`flush`. Use as a
    context manager to flush on exit. ``put`` sends a batch when it is full; ``flush``
    sends what is buffered and returns once every record is written or raises
    :class:`~.errors.ProducerError` with the ones that could not be.
    """

    def __init__(
        self,
        stream_name: str,
        *,
        client: Any = None,
        region_name: Optional[str] = None,
        endpoint_url: Optional[str] = None,
        put_backoff: Backoff = DEFAULT_PUT_BACKOFF,
        call_backoff: Backoff = DEFAULT_CALL_BACKOFF,
        max_records_per_put: int = MAX_RECORDS_PER_PUT,
        max_bytes_per_put: int = MAX_BYTES_PER_PUT,
        aggregate: bool = False,
        aggregation_max_bytes: int = DEFAULT_MAX_AGGREGATE_BYTES,
        shard_map_refresh_s: float = 60.0,
        sleep: Callable[[float], None] = time.sleep,
        aggregation_max_records: int = 2**32 - 1,
        max_buffered_time_s: Optional[float] = None,
        rate_limit_percent: Optional[float] = None,
    ) -> None:
        if not stream_name:
            raise ValueError("stream_name must be a non-empty string")
        if not 1 <= max_records_per_put <= MAX_RECORDS_PER_PUT:
            raise ValueError(
                f"max_records_per_put must be in [1, {MAX_RECORDS_PER_PUT}], "
                f"got {max_records_per_put}"
            )
        if not MAX_RECORD_BYTES <= max_bytes_per_put <= MAX_BYTES_PER_PUT:
            raise ValueError(
                f"max_bytes_per_put must be in [{MAX_RECORD_BYTES}, {MAX_BYTES_PER_PUT}], "
                f"got {max_bytes_per_put}"
            )
        self.stream_name = stream_name
        self._client = client or create_client(
            "kinesis", region_name=region_name, endpoint_url=endpoint_url
        )
        self._put_backoff = put_backoff
        self._call_backoff = call_backoff
        self._max_records = max_records_per_put
        self._max_bytes = max_bytes_per_put
        self._sleep = sleep
        self._aggregator = (
            RecordAggregator(aggregation_max_bytes, aggregation_max_records) if aggregate else None
        )
        #: Glue's recordMaxBufferedTime: a put sends what has waited this long.
        self._max_buffered_time_s = max_buffered_time_s
        self._buffered_since: Optional[float] = None
        #: Glue's producerRateLimit: per-shard pacing (needs the shard map).
        self._limiter = None if rate_limit_percent is None else ShardRateLimiter(rate_limit_percent)
        self._shard_map: Optional[ShardMap] = None
        self._shard_map_refresh_s = shard_map_refresh_s
        self._shard_map_read_at: Optional[float] = None
        self._lock = threading.Lock()  # guards the buffer and the counters; held while sending
        self._pending: list[dict] = []
        self._pending_bytes = 0
        #: Records the service accepted, PutRecords calls made, per-record retries made.
        self.records_written = 0
        self.put_calls = 0
        self.records_retried = 0
        #: User records sent again after a reshard (see :meth:`_resend_misrouted`).
        self.records_resent = 0
        self._misrouted: list = []  # (aggregate entry, the shard it landed on)

    def put(self, data: Data, partition_key: str, explicit_hash_key: Optional[str] = None) -> None:
        """Buffer one record; sends a PutRecords call when a batch is full."""
        entry = make_entry(data, partition_key, explicit_hash_key)
        with self._lock:
            if self._aggregator is None:
                self._add(entry)
            else:
                self._refresh_shard_map()
                self._add_all(self._aggregator.add(entry["Data"], partition_key, explicit_hash_key))
            self._send_if_waited_long()

    def _send_if_waited_long(self) -> None:
        """recordMaxBufferedTime: send everything once the oldest record waited that long."""
        if self._max_buffered_time_s is None:
            return
        now = time.monotonic()
        if self._buffered_since is None:
            self._buffered_since = now
        elif now - self._buffered_since >= self._max_buffered_time_s:
            if self._aggregator is not None:
                self._add_all(self._aggregator.flush())
            self._send_pending()

    def flush(self) -> None:
        """Send everything buffered; raises ProducerError if any record could not be written."""
        with self._lock:
            if self._aggregator is not None:
                self._add_all(self._aggregator.flush())
            self._send_pending()

    def close(self) -> None:
        self.flush()

    def __enter__(self) -> KinesisProducer:
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        if exc_type is None:
            self.close()
            return
        aggregated = len(self._aggregator) if self._aggregator is not None else 0
        if self._pending or aggregated:
            log.error(
                "KinesisProducer for stream %s closed by an exception with %d records and "
                "%d user records in open aggregates unsent",
                self.stream_name,
                len(self._pending),
                aggregated,
            )

    # -- internals; callers hold self._lock ------------------------------------------

    def _refresh_shard_map(self, force: bool = False) -> None:
        """Read the shard map if it is older than ``shard_map_refresh_s`` (or ``force``)."""
        assert self._aggregator is not None
        now = time.monotonic()
        if (
            not force
            and self._shard_map_read_at is not None
            and now - self._shard_map_read_at < self._shard_map_refresh_s
        ):
            return
        shards = list_shards(self._client, self.stream_name, backoff=self._call_backoff)
        self._add_all(self._aggregator.flush())  # grouped by the old map: send as they are
        self._aggregator.shard_map = ShardMap.from_list_shards(shards)
        self._shard_map_read_at = now

    def _note_misrouted(self, entries: list, results: list) -> None:
        """Aggregates Kinesis wrote to another shard than the shard map predicted: the map
        is stale (a split or merge since it was read), so an aggregate may hold user
        records of another shard, and a KCL consumer drops such an aggregate whole."""
        shard_map = self._aggregator.shard_map if self._aggregator is not None else None
        if shard_map is None:
            return
        for entry, result in zip(entries, results):
            shard_id, hash_key = result.get("ShardId"), entry.get("ExplicitHashKey")
            if result.get("ErrorCode") or shard_id is None or hash_key is None:
                continue
            if (
                bytes(entry["Data"][:4]) == MAGIC
                and shard_map.shard_for(int(hash_key))[0] != shard_id
            ):
                self._misrouted.append((entry, shard_id))

    def _resend_misrouted(self) -> None:
        """As the KPL does after a reshard: read the shard map again, and send every user
        record of an aggregate that landed on a shard not holding all of them again,
        grouped by the new map (the misplaced copy is a duplicate for a reader that keeps
        it, and what a KCL consumer drops)."""
        assert self._aggregator is not None
        misrouted, self._misrouted = self._misrouted, []
        self._refresh_shard_map(force=True)
        shard_map = self._aggregator.shard_map
        assert shard_map is not None
        again = []
        for entry, shard_id in misrouted:
            start, end = shard_map.range_of(shard_id) or (None, None)
            stats = DeaggregationStats()
            record = {**entry, "SequenceNumber": "0"}
            users = deaggregate([record], start, end, shard_id=shard_id, stats=stats)
            if stats.user_records_outside_shard:
                again += users
        if not again:
            return
        self.records_resent += len(again)
        log.warning(
            "stream %s was resharded since its shard map was read: %d user records in "
            "aggregates written to a shard not holding all of them are sent again, grouped "
            "by the new map (a KCL consumer drops such aggregates; a reader that keeps them "
            "sees those records twice)",
            self.stream_name,
            len(again),
        )
        for user in again:
            self._add_all(
                self._aggregator.add(user.data, user.partition_key, user.explicit_hash_key)
            )
        self._add_all(self._aggregator.flush())

    def _add_all(self, entries: list) -> None:
        """:meth:`_add` each of ``entries`` (what the aggregator handed over). If a send
        fails on the way, the entries not yet queued are listed in its error too: out of
        the aggregator, they are nowhere else."""
        for index, entry in enumerate(entries):
            try:
                self._add(entry)
            except ProducerError as exc:
                exc.failed.extend(entries[index + 1 :])
                raise

    def _add(self, entry: dict) -> None:
        size = _entry_size(entry)
        if self._pending and self._pending_bytes + size > self._max_bytes:
            try:
                self._send_pending()
            except ProducerError as exc:
                exc.failed.append(entry)  # not queued: listed with the batch that failed
                raise
        self._pending.append(entry)
        self._pending_bytes += size
        if len(self._pending) >= self._max_records:
            self._send_pending()

    def _send_pending(self) -> None:
        while True:
            batch, self._pending, self._pending_bytes = self._pending, [], 0
            self._buffered_since = None
            if batch:
                self._pace(batch)
                self._send(batch)
            if not self._misrouted:
                return
            self._resend_misrouted()  # queued again: sent by the next turn

    def _pace(self, batch: list[dict]) -> None:
        """producerRateLimit: wait until every shard of the batch has room for it."""
        if self._limiter is None:
            return
        shard_map = self._aggregator.shard_map if self._aggregator is not None else None
        if shard_map is None:  # no aggregator keeps one: read our own, as often
            now = time.monotonic()
            read_at = self._shard_map_read_at
            if (
                self._shard_map is None
                or read_at is None
                or now - read_at >= (self._shard_map_refresh_s)
            ):
                shards = list_shards(self._client, self.stream_name, backoff=self._call_backoff)
                self._shard_map = ShardMap.from_list_shards(shards)
                self._shard_map_read_at = now
            shard_map = self._shard_map
        usage: dict = {}
        for entry in batch:
            key = effective_hash_key(entry["PartitionKey"], entry.get("ExplicitHashKey"))
            shard_id = shard_map.shard_for(key)[0]
            records, size = usage.get(shard_id, (0, 0))
            usage[shard_id] = (records + 1, size + _entry_size(entry))
        wait = self._limiter.delay_s((s, r, b) for s, (r, b) in usage.items())
        if wait > 0:
            self._sleep(wait)

    def _send(self, batch: list[dict]) -> None:
        remaining = batch
        codes: Counter[str] = Counter()
        started = time.monotonic()
        retry = 0
        while True:
            try:
                response = call_with_retry(
                    functools.partial(
                        self._client.put_records, StreamName=self.stream_name, Records=remaining
                    ),
                    self._call_backoff,
                    operation="PutRecords",
                    stream_name=self.stream_name,
                    client=self._client,
                )
            except KinesisServiceError as exc:
                raise ProducerError(
                    f"{len(remaining)} of {len(batch)} records not written to stream "
                    f"{self.stream_name}: {exc}",
                    remaining,
                    {exc.code or type(exc).__name__: len(remaining)},
                ) from exc
            self.put_calls += 1
            self._note_misrouted(remaining, response["Records"])
            failed = [e for e, r in zip(remaining, response["Records"]) if r.get("ErrorCode")]
            codes.update(r["ErrorCode"] for r in response["Records"] if r.get("ErrorCode"))
            self.records_written += len(remaining) - len(failed)
            if not failed:
                return
            attempts = retry + 1
            elapsed = time.monotonic() - started
            if (
                attempts >= self._put_backoff.max_attempts
                or elapsed >= self._put_backoff.max_elapsed_s
            ):
                message = (
                    f"{len(failed)} of {len(batch)} records not written to stream "
                    f"{self.stream_name} after {attempts} attempts in {elapsed:.1f}s "
                    f"(error codes seen: {dict(codes)})"
                )
                log.error(message)
                raise ProducerError(message, failed, dict(codes))
            log.debug(
                "PutRecords to %s: %d of %d records failed (%s), retry %d",
                self.stream_name,
                len(failed),
                len(remaining),
                dict(codes),
                attempts,
            )
            self.records_retried += len(failed)
            self._sleep(self._put_backoff.delay_s(retry, random.random))
            retry += 1
            remaining = failed
