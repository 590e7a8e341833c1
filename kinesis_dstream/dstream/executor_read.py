"""The executor side of a fetch round: read one shard, hand back its records and range.

A round is a Spark job with one partition per group of shards (``shardsPerTask``). Each
task reads its shards concurrently, each with a :class:`~..retrieval.reader.ShardReader`,
and emits for each a :class:`ShardRange` (the shard's range read in one go: where it
starts and ends, how many records, what the read saw) followed by the records (decoded,
or what the message handler returned), in the order the reads finish. The job's RDD is
persisted, so the data stays on the executors; the driver collects only the ranges, in
that order, which is the order a batch expects them in (:mod:`.batch_read`).

Failures are per shard: a task never fails because one shard did. A read that fails
reports an empty range with the error's kind (``transient``: throttling or an
unavailable service past the retry budget, retried next round; ``permanent``: the
message handler raised, the stream is gone, ...) and message, and the task goes on.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple, Optional

from ..aws import ClientSpec
from ..errors import MessageHandlerError
from ..retrieval.fanout import FanOutConfig, FanOutShardReader
from ..retrieval.reader import ReaderConfig, ShardReader, StartPosition, apply_handler
from ..retrieval.start import WHOLE_RECORD
from .read_window import read_window

log = logging.getLogger(__name__)

#: Threads one round task reads its group of shards with (GetRecords calls in flight).
MAX_READ_THREADS = 16
DEFAULT_FANOUT = FanOutConfig()


class ShardRange(NamedTuple):
    """One shard's range read in one go (a round's read, or a recovered batch's): the
    header of that shard's records in its partition, and all the driver learns of them."""

    round_id: int
    shard_id: str
    records: int
    first_esn: Optional[tuple]  # (sequence number as int, sub-sequence number)
    last_esn: Optional[tuple]
    data_bytes: int
    millis_behind_latest: Optional[int]
    shard_ended: bool
    child_shard_ids: tuple
    next_iterator: Optional[str]
    get_records_calls: int
    read_s: float
    throttles: int = 0
    aggregates_dropped: int = 0
    #: KPL user records outside the shard's hash range (delivered unless dropped).
    user_records_outside_shard: int = 0
    user_records_dropped: int = 0
    #: None when the read succeeded, else "transient" or "permanent".
    error_kind: Optional[str] = None
    error: Optional[str] = None  # the error's message: names stream, shard, record
    error_type: Optional[str] = None  # its class name
    #: The ESN the shard is consumed through (sub-sequence WHOLE_RECORD: every user record
    #: of that raw record is consumed); None: as ``last_esn``.
    resume_after: Optional[tuple] = None
    #: KPL aggregates that did not parse, passed through as plain records (and logged).
    malformed_aggregates: int = 0


@dataclass(frozen=True)
class FetchPlan:
    """One shard's part of a round; pickled into the task."""

    round_id: int
    stream_name: str
    shard_id: str
    client: ClientSpec
    start: StartPosition
    iterator: Optional[str]
    hash_key_range: Optional[tuple]
    max_records: int
    max_bytes: int
    max_time_s: float
    config: ReaderConfig
    transform: Callable[[Any], Any]
    #: Enhanced fan-out: the consumer a round's read subscribes with (None: GetRecords).
    consumer_arn: Optional[str] = None
    fanout: FanOutConfig = DEFAULT_FANOUT

    def reader(
        self,
        start: Optional[StartPosition] = None,
        iterator: Optional[str] = None,
        with_handler: bool = True,
        polling: bool = False,
    ) -> ShardReader:
        """The shard's reader: over the plan's consumer's subscription, unless
        ``polling`` (a recorded range read again) or the plan has none."""
        shard = (self.client, self.stream_name, self.shard_id, start or self.start)
        options: dict = {
            "hash_key_range": self.hash_key_range,
            "config": self.config,
            "message_handler": self.transform if with_handler else None,
        }
        if self.consumer_arn is not None and not polling:
            return FanOutShardReader(
                *shard, consumer_arn=self.consumer_arn, fanout=self.fanout, **options
            )
        return ShardReader(*shard, iterator=iterator, **options)


def fetch(groups: Iterable[list], ranges: Any = None) -> Iterator:
    """mapPartitions function of a round: the shard's range, then its records, per plan.

    A partition holds one group of plans (shards): they are read concurrently (at most
    :data:`MAX_READ_THREADS` at a time, see :func:`_read_group`) and yielded as their
    reads finish. Reading many shards in one task is what keeps a round of hundreds of
    mostly quiet shards cheap: a task's launch and its Python worker's round trip are paid
    once a group. ``ranges`` is a Spark accumulator of lists: each range is also added
    there as it is yielded, so the driver learns the ranges, and their order in the
    cached block, from the job that caches the data, with no second job reading the cache
    (and no Python worker left with unread input, which Spark would not reuse).
    """
    for group in groups:
        results = [_read_one(group[0])] if len(group) == 1 else _read_group(group)
        for header, records in results:
            if ranges is not None:
                ranges.add([header])
            yield header
            yield from records


def _read_group(group: list) -> Iterator:
    """(header, records) of each plan of ``group``, as the reads finish, read by threads
    with at most :data:`MAX_READ_THREADS` reads in flight or waiting to be yielded.

    A read starts when an earlier one is yielded, so a task holds at most that many pages
    (up to 10 MiB each) however many shards its group has: a group of hundreds of quiet
    shards is one task, not one per 16. Reads are yielded in the order they finish, not
    the group's: a slow read (a full page, a throttled call's backoff) holds one slot,
    while the other reads go on through the rest (in the group's order, one slot held
    by a slow read would stop every read behind it). Threads read and de-aggregate; the
    user's message handler runs here, in the task's own thread, one record after another
    as it always did. Leaving early (the task killed) waits for the reads in flight (each
    bounded by its plan's ``max_time_s``).
    """
    read = functools.partial(_read_one, with_handler=False)
    reads = read_window(read, group, MAX_READ_THREADS, False, "kinesis-read")
    for plan, result in reads:
        yield _handle(plan, result)


def _handle(plan: FetchPlan, result: tuple) -> tuple:
    """Apply the message handler to a read made without it (a group's thread).

    A handler that raises fails the shard as it does inside the reader: a permanent error
    header naming stream, shard and record, nothing delivered, and the iterator the read
    started from, so the records are not skipped.
    """
    header, records = result
    if header.error_kind is not None or not records:
        return result
    try:
        handled = apply_handler(plan.transform, records, plan.stream_name, plan.shard_id)
    except MessageHandlerError as error:
        log.warning(
            "reading shard %s of %s failed (permanent): %s", plan.shard_id, plan.stream_name, error
        )
        failed_header = header._replace(
            records=0,
            first_esn=None,
            last_esn=None,
            data_bytes=0,
            shard_ended=False,
            child_shard_ids=(),
            next_iterator=plan.iterator,
            error_kind="permanent",
            error=str(error),
            error_type=type(error).__name__,
        )
        return failed_header, []
    return header, handled


def _read_one(plan: FetchPlan, with_handler: bool = True) -> tuple:
    """(header, records) of one shard; a failure becomes an error header, not a raise."""
    started = time.monotonic()
    reader = plan.reader(iterator=plan.iterator, with_handler=with_handler)
    try:
        batch = reader.read(
            max_records=plan.max_records,
            max_bytes=plan.max_bytes,
            max_time_s=plan.max_time_s,
            # One GetRecords per shard per round: the round interval paces it. A
            # subscription (at most one per shard every 5 s) is read until caught up.
            max_calls=None if plan.consumer_arn is not None else 1,
        )
    except Exception as exc:  # reported per shard; the round keeps the other shards
        kind = "transient" if getattr(exc, "retriable", False) else "permanent"
        log.warning(
            "reading shard %s of %s failed (%s): %s", plan.shard_id, plan.stream_name, kind, exc
        )
        header = ShardRange(
            plan.round_id,
            plan.shard_id,
            0,
            None,
            None,
            0,
            None,
            False,
            (),
            reader.iterator,
            0,
            time.monotonic() - started,
            reader.transport.throttles,
            0,  # nothing of a failed read is delivered or dropped: the shard is re-read
            0,
            0,
            kind,
            str(exc) or repr(exc),
            type(exc).__name__,
        )
        return header, []
    finally:
        reader.close()  # a fan-out read's subscription ends with its round
    resume_after = _consumed_through(batch.resume_after, reader.has_pending)
    shard_ended, children = batch.shard_ended, tuple(batch.child_shard_ids)
    if plan.consumer_arn is not None and batch.records and not shard_ended:
        ended = _ended_after(plan, resume_after, batch.millis_behind_latest)
        if ended is not None:
            shard_ended, children = True, ended
    header = ShardRange(
        plan.round_id,
        plan.shard_id,
        len(batch.records),
        batch.first_esn,
        batch.last_esn,
        batch.data_bytes,
        batch.millis_behind_latest,
        shard_ended,
        children,
        reader.iterator,
        batch.get_records_calls,
        time.monotonic() - started,
        reader.transport.throttles,
        reader.stats.aggregates_dropped,
        reader.stats.user_records_outside_shard,
        reader.stats.user_records_dropped,
        malformed_aggregates=reader.stats.malformed_aggregates,
        resume_after=resume_after,
    )
    return header, batch.records


def _ended_after(
    plan: FetchPlan, resume_after: Optional[tuple], millis_behind_latest: Optional[int]
) -> Optional[tuple]:
    """A fan-out read that took records and stopped caught up, with nothing pending: the
    shard's children if it is closed and read to its end, else None.

    A subscription tells a shard's end in an event of its own, which may come after the
    event that caught up; the round has closed the subscription by then, and Kinesis
    allows the next one 5 s later. One GetRecords after the last record read (the read
    core's own rule for a shard's end) says it now, so the children are read at once.
    """
    if millis_behind_latest != 0 or resume_after is None or resume_after[1] != WHOLE_RECORD:
        return None
    start = StartPosition.after_sequence_number(str(resume_after[0]))
    probe = plan.reader(start=start, with_handler=False, polling=True)
    try:
        peek = probe.read(max_records=1, max_calls=1)
    except Exception as exc:  # the next subscription finds the end instead
        log.debug("shard %s of %s: no end check now: %s", plan.shard_id, plan.stream_name, exc)
        return None
    if peek.shard_ended and not peek.records:
        return tuple(peek.child_shard_ids)
    return None


def _consumed_through(resume_after: Optional[tuple], pending: bool) -> Optional[tuple]:
    """Where the next read starts after: with nothing pending, the last raw record read
    is consumed whole, so the next read (a subscription, an iterator made again) starts
    AFTER it instead of reading it again to drop it."""
    if resume_after is None or pending:
        return resume_after
    return (resume_after[0], WHOLE_RECORD)


def warm_up(client: ClientSpec) -> None:
    """Executor side of the round thread's warm-up: this module and the reader are imported
    (unpickling this function did it) and the Kinesis client is built and cached."""
    client.client()


class RangeList:
    """Spark AccumulatorParam (by its two methods) gathering ShardRanges from tasks."""

    def zero(self, value: list) -> list:
        return []

    def addInPlace(self, value1: list, value2: list) -> list:  # Spark's name
        value1.extend(value2)
        return value1
