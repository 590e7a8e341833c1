"""Reading one shard's range of one micro-batch, in an executor task.

A fresh range is read up to its limit (cut inside a KPL aggregate if need be), its real
end is recorded in the end store with a create-if-absent write, and only then are its
records yielded. If another attempt recorded a different end first, what this attempt
read is dropped and the recorded range is read instead; a replayed range always reads
exactly from its start to its recorded last record. So a batch is a function of its end
offset alone, whatever crashed and whenever.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Optional

import pyarrow as pa  # type: ignore[import-untyped]
from pyspark.sql.datasource import InputPartition

from ...errors import DependencyError, KinesisServiceError, RecordsLostError, ThrottledError
from ...retrieval.fanout import FanOutConfig, FanOutTransport
from ...retrieval.reader import ReaderConfig, ShardReader
from ...retrieval.replay import replay_range
from ..ends.store import EndStore
from ..hints import hint_refused
from ..offsets import RangeEnd, ShardRange
from ..positions import SHARD_END, describe, now_utc, parse_utc, seq_position, start_position
from ..schema import ARROW_SCHEMA, records_to_arrow

log = logging.getLogger(__name__)

#: Data bytes after which a range ends (its recorded end keeps a replay the same).
MAX_RANGE_BYTES = 256 * 1024 * 1024
#: Arrow bytes a task holds in memory before its range goes to a local file.
SPILL_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class RangePartition(InputPartition):
    """One task: ``shard_range`` of ``shard_id``; the end is stored under ``key``."""

    stream_name: str
    shard_id: str
    key: str
    query: str
    shard_range: ShardRange
    hash_key_range: Optional[tuple] = None
    #: Data bytes after which this range ends (fetchBufferSize shared by the batch's
    #: ranges); None: ReadSettings.max_bytes.
    max_bytes: Optional[int] = None
    #: Read with SubscribeToShard through this consumer (enhanced fan-out); None: polling.
    consumer_arn: Optional[str] = None
    #: Polling: a shard iterator from which the range's start reads the same records (the
    #: driver's peek found them with it), so the task's fresh read asks no
    #: GetShardIterator; a hint, not part of the range (an expired one is made again from
    #: the start), never used to replay a recorded end.
    start_iterator: Optional[str] = None


@dataclass(frozen=True)
class ReadSettings:
    """What an executor needs besides the partition: picklable, no secrets in repr."""

    client_spec: Any
    config: ReaderConfig
    fail_on_data_loss: bool
    #: A range ends once it holds this many bytes of record data (or its record limit).
    max_bytes: int = MAX_RANGE_BYTES
    #: maxFetchDuration and friends: a range read stops after this long (None: no bound).
    max_fetch_time_s: Optional[float] = None
    #: maxFetchRate: a range read takes at most this many bytes a second from its shard.
    max_fetch_rate_bytes_s: Optional[float] = None
    #: SubscribeToShard knobs, for partitions that carry a consumer ARN.
    fanout: FanOutConfig = field(default_factory=FanOutConfig)


def prepare(
    part: RangePartition, store: EndStore, settings: ReadSettings, spill_bytes: int = 0
) -> Any:
    """The network half of a range: its fresh read (end recorded), or its recorded end.

    Returns the buffer of a fresh read that won the end store's create-if-absent, else
    the recorded :class:`RangeEnd` to replay. Several ranges of one task (shardsPerTask)
    are prepared concurrently, then delivered one after another.
    """
    store.check_marker(part.query)
    recorded = store.get(part.key)
    if recorded is not None:
        return recorded
    batches = _Buffer(spill_bytes)
    try:
        end = _read_fresh(part, settings, batches)
        recorded = store.put_if_absent(part.key, end)
    except BaseException:
        batches.discard()
        raise
    if recorded == end:
        return batches
    batches.discard()
    log.info(
        "range %s of %s/%s was recorded by another attempt: reading that range",
        part.key,
        part.stream_name,
        part.shard_id,
    )
    return recorded


def deliver(part: RangePartition, settings: ReadSettings, prepared: Any) -> Iterator[Any]:
    """Yield what :func:`prepare` returned: the buffer, or a replay of the recorded end."""
    if isinstance(prepared, RangeEnd):
        yield from _read_recorded(part, settings, prepared)
    else:
        yield from prepared


def discard(prepared: Any) -> None:
    """Free a prepared range that will not be delivered (another range failed)."""
    if isinstance(prepared, _Buffer):
        prepared.discard()


def _reader(part: RangePartition, settings: ReadSettings, *, hinted: bool) -> ShardReader:
    """The range's reader from its start: GetRecords, or SubscribeToShard when it names a
    consumer. ``hinted``: a fresh read may poll from the peek's iterator; a replay never
    does, so that it reads exactly the recorded range whatever the partition carries."""
    iterator = part.start_iterator if hinted else None
    return shard_reader(part, part.shard_range.start, settings, part.consumer_arn, iterator)


def shard_reader(
    part: Any,
    position: Any,
    settings: ReadSettings,
    consumer_arn: Optional[str] = None,
    iterator: Optional[str] = None,
) -> ShardReader:
    """A reader of ``part``'s shard (its ``stream_name``, ``shard_id`` and
    ``hash_key_range``) from ``position`` (see :mod:`..positions`), in an executor;
    ``iterator``: a shard iterator at ``position`` to poll from (else one is made)."""
    start = start_position(position)
    assert start is not None
    transport = None
    if consumer_arn is not None:
        transport = FanOutTransport(consumer_arn, settings.fanout)
    return ShardReader(
        settings.client_spec.client(),
        part.stream_name,
        part.shard_id,
        start,
        hash_key_range=part.hash_key_range,
        config=settings.config,
        iterator=None if consumer_arn is not None else iterator,
        transport=transport,
    )


def _read_fresh(part: RangePartition, settings: ReadSettings, buffer: _Buffer) -> RangeEnd:
    """Read up to the range's bounds into ``buffer``; returns the range's real end.

    The end's ``next`` is the position the shard is consumed through: the reader's
    ``resume_after`` after a page whose records were all kept (it skips raw records that
    gave no user record: aggregates outside the shard's hash range), else the last record
    kept, else the range's start. A read that fails (throttling, expired iterators) keeps
    what earlier reads returned and ends there: nothing it fetched counts as consumed.
    """
    shard_range = part.shard_range
    if start_position(shard_range.start) is None:
        return RangeEnd(0, SHARD_END, shard_end=True)
    reader = _reader(part, settings, hinted=True)
    try:
        try:
            return _read_range(part, settings, buffer, reader)
        except KinesisServiceError as exc:
            what = f"range of {part.stream_name}/{part.shard_id}"
            hinted = part.consumer_arn is None and part.start_iterator is not None
            if not hint_refused(reader, hinted, exc, what):
                raise
        # The hint is in the pickled partition: a Spark retry would meet it again.
        reader.close()
        reader = _reader(part, settings, hinted=False)
        end = _read_range(part, settings, buffer, reader)
        return dataclasses.replace(end, start_iterator_refused=True)
    finally:
        reader.close()  # ends a fan-out subscription; nothing to release when polling


def _read_range(
    part: RangePartition, settings: ReadSettings, buffer: _Buffer, reader: Any
) -> RangeEnd:
    shard_range = part.shard_range
    cutoff: Optional[datetime] = parse_utc(shard_range.cutoff) if shard_range.cutoff else None
    per_call = settings.config.max_records_per_call
    max_bytes = part.max_bytes or settings.max_bytes
    started = time.monotonic()
    deadline = None if settings.max_fetch_time_s is None else started + settings.max_fetch_time_s
    oldest: Optional[datetime] = None  # the oldest arrival kept: the consumer lag
    count = size = calls = 0
    last: Optional[dict] = None  # the last record kept
    resume: Any = None  # the position the shard is consumed through
    throttled = at_cutoff = caught_up = full = False
    millis: Optional[int] = None
    while not reader.shard_ended and count < shard_range.limit and size < max_bytes:
        if deadline is not None and calls and time.monotonic() >= deadline:
            break  # the read's time bound: the range ends here, like at its record limit
        _pace_bytes(settings, size, started, deadline)
        wanted = min(shard_range.limit - count, per_call)
        try:
            chunk = reader.read(max_records=wanted, max_calls=1)
        except (ThrottledError, DependencyError) as exc:
            log.warning(
                "range of %s/%s ends early after %d records: %s",
                part.stream_name,
                part.shard_id,
                count,
                exc,
            )
            throttled = True
            break
        calls += 1
        millis = chunk.millis_behind_latest
        records = chunk.records
        if cutoff is not None:
            records, at_cutoff = cut_at_arrival(records, cutoff, inclusive=True)
        for index, record in enumerate(records):
            size += len(record.data)
            if size >= max_bytes and index + 1 < len(records):
                records, full = records[: index + 1], True  # the byte bound, mid-page
                break
        if records:
            first = records[0].approximate_arrival_timestamp
            if first is not None and (oldest is None or first < oldest):
                oldest = first
            buffer.add(records_to_arrow(records, part.stream_name, part.shard_id))
            count += len(records)
            last = seq_position(records[-1].sequence_number, records[-1].sub_sequence_number)
        if at_cutoff or full:  # part of the page kept: consumed through its last record
            resume = last if last is not None else resume
            break
        if chunk.resume_after is not None:
            resume = seq_position(str(chunk.resume_after[0]), chunk.resume_after[1])
        if at_tip(chunk, wanted):
            caught_up = True
            break
    end_flag = reader.shard_ended and not (at_cutoff or throttled or full)
    # the reader's iterator is at ``resume`` unless part of the last page was left
    # (pending in the reader: None; or cut here: at the cutoff or the byte bound)
    whole_pages = resume is not None and not (at_cutoff or full or throttled or end_flag)
    end = RangeEnd(
        count=count,
        next=SHARD_END if end_flag else (resume if resume is not None else shard_range.start),
        last=last,
        shard_end=end_flag,
        children=tuple(reader.child_shard_ids) if end_flag else (),
        millis_behind_latest=millis,
        throttled=throttled,
        stopped_at_cutoff=at_cutoff,
        caught_up=caught_up,
        outside_shard=reader.stats.user_records_outside_shard,
        aggregates_dropped=reader.stats.aggregates_dropped,
        user_records_dropped=reader.stats.user_records_dropped,
        malformed_aggregates=reader.stats.malformed_aggregates,
        max_consumer_lag_ms=None if oldest is None else _millis_since(oldest),
        subscribed_at=reader.transport.subscribed_at,
        next_iterator=reader.iterator if whole_pages else None,
    )
    return end


def cut_at_arrival(records: list, bound: datetime, inclusive: bool) -> tuple:
    """(the records before the first that arrived after ``bound``, whether one did).

    ``inclusive``: a record that arrived exactly at ``bound`` is kept (a micro-batch's
    cutoff); else it is cut (a batch read's exclusive end, as Kafka's endingTimestamp).
    A shard's arrival times grow with its sequence numbers, so the first one past the
    bound ends the read.
    """
    for index, record in enumerate(records):
        arrival = record.approximate_arrival_timestamp
        if arrival is not None and (arrival > bound or (not inclusive and arrival == bound)):
            return records[:index], True
    return records, False


def at_tip(chunk: Any, wanted: int) -> bool:
    """The read reached the shard's tip: a short page with nothing behind it."""
    return len(chunk.records) < wanted and not chunk.millis_behind_latest


def _pace_bytes(settings: ReadSettings, size: int, started: float, deadline: Any) -> None:
    """maxFetchRate: wait until ``size`` bytes are within the rate (never past the bound)."""
    rate = settings.max_fetch_rate_bytes_s
    if rate is None or size == 0:
        return
    now = time.monotonic()
    wait = size / rate - (now - started)
    if deadline is not None:
        wait = min(wait, deadline - now)
    if wait > 0:
        time.sleep(wait)


def _millis_since(moment: datetime) -> int:
    return max(0, int((now_utc() - moment).total_seconds() * 1000))


class _Buffer:
    """A range's arrow batches until its end is recorded: in memory, then on local disk.

    Records are yielded only after the end store holds the range's end, so a task holds
    its whole range; past ``SPILL_BYTES`` the batches go to an Arrow IPC file in the
    task's temporary directory, read back (memory-mapped) batch by batch.
    """

    def __init__(self, spill_bytes: int = 0) -> None:
        self._spill_bytes = spill_bytes or SPILL_BYTES
        self._batches: list = []
        self._held = 0
        self._path: Optional[str] = None
        self._writer: Any = None

    def add(self, batch: Any) -> None:
        if self._writer is not None:
            self._writer.write_batch(batch)
            return
        self._batches.append(batch)
        self._held += batch.nbytes
        if self._held > self._spill_bytes:
            fd, self._path = tempfile.mkstemp(
                prefix="kinesis-range-", suffix=".arrows", dir=_spill_dir()
            )
            os.close(fd)
            self._writer = pa.ipc.new_stream(self._path, ARROW_SCHEMA)
            for held in self._batches:
                self._writer.write_batch(held)
            self._batches, self._held = [], 0

    @property
    def spilled(self) -> bool:
        return self._path is not None

    def __iter__(self) -> Iterator[Any]:
        if self._path is None:
            yield from self._batches
            return
        self._writer.close()
        try:
            with pa.memory_map(self._path) as source:
                yield from pa.ipc.open_stream(source)
        finally:
            self.discard()

    def discard(self) -> None:
        if self._writer is not None and self._path is not None:
            self._writer.close()
            os.unlink(self._path)
            self._writer = self._path = None
        self._batches = []


def _spill_dir() -> Optional[str]:
    """Spark's local directory when set (removed with the application), else the default."""
    local = os.environ.get("SPARK_LOCAL_DIRS", "").split(",")[0]
    return local if local and os.path.isdir(local) else None


def _read_recorded(part: RangePartition, settings: ReadSettings, end: RangeEnd) -> Iterator[Any]:
    if end.count == 0 or end.last is None:
        return
    until = (int(end.last["seq"]), int(end.last["sub"]))
    what = (
        f"a range of stream {part.stream_name!r}, shard {part.shard_id} "
        f"({describe(part.shard_range.start)} through {end.last['seq']}/{end.last['sub']})"
    )
    chunks = replay_range(
        _reader(part, settings, hinted=False),
        until,
        end.count,
        what,
        max_records=settings.config.max_records_per_call,
    )
    try:
        for chunk in chunks:
            yield records_to_arrow(chunk, part.stream_name, part.shard_id)
    except RecordsLostError as exc:
        if settings.fail_on_data_loss:
            raise
        log.warning("%s; continuing (failOnDataLoss=false)", exc)
