"""The executor side of a fetch round: read one shard, hand back its records and range.

A round is a Spark job with one partition per shard. Each task reads its shard with a
:class:`~..retrieval.reader.ShardReader` and emits a :class:`RangeHeader` followed by the
records (decoded, or what the message handler returned). The job's RDD is persisted, so
the data stays on the executors; the driver collects only the headers.

Failures are per shard: a task never fails because one shard did. A read that fails
reports an empty range with the error's kind (``transient``: throttling or an
unavailable service past the retry budget, retried next round; ``permanent``: the
message handler raised, the stream is gone, ...) and message, and the task goes on.

The batch RDD built from a round checks each partition's header against the range the
driver recorded. If a cached block was lost and Spark re-ran the fetch, the re-read may
have started elsewhere (a LATEST iterator) or gone further (new records since): the
partition then reads exactly the recorded range instead, so a batch recomputes to the
same records, never to "whatever is there now".
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple, Optional

from ..aws import ClientSpec
from ..errors import RecordsLostError
from ..retrieval.reader import ReaderConfig, ShardReader, StartPosition

log = logging.getLogger(__name__)


class RangeHeader(NamedTuple):
    """What one task of a round read: the first element of its partition."""

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

    def reader(
        self, start: Optional[StartPosition] = None, iterator: Optional[str] = None
    ) -> ShardReader:
        return ShardReader(
            self.client,
            self.stream_name,
            self.shard_id,
            start or self.start,
            hash_key_range=self.hash_key_range,
            config=self.config,
            message_handler=self.transform,
            iterator=iterator,
        )


def fetch(plans: Iterable[FetchPlan], headers: Any = None) -> Iterator:
    """mapPartitions function of a round: header, then the records, for each plan.

    ``headers`` is a Spark accumulator of lists: each header is also added there, so the
    driver learns the ranges from the job that caches the data, with no second job
    reading the cache (and no Python worker left with unread input, which Spark would
    not reuse).
    """
    for plan in plans:
        header = _read_one(plan)
        if headers is not None:
            headers.add([header[0]])
        yield header[0]
        yield from header[1]


def _read_one(plan: FetchPlan) -> tuple:
    """(header, records) of one shard; a failure becomes an error header, not a raise."""
    started = time.monotonic()
    reader = plan.reader(iterator=plan.iterator)
    try:
        batch = reader.read(
            max_records=plan.max_records,
            max_bytes=plan.max_bytes,
            max_time_s=plan.max_time_s,
            max_calls=1,  # one GetRecords per shard per round: the round interval paces it
        )
    except Exception as exc:  # reported per shard; the round keeps the other shards
        kind = "transient" if getattr(exc, "retriable", False) else "permanent"
        log.warning(
            "reading shard %s of %s failed (%s): %s", plan.shard_id, plan.stream_name, kind, exc
        )
        header = RangeHeader(
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
            reader.throttles,
            0,  # nothing of a failed read is delivered or dropped: the shard is re-read
            0,
            0,
            kind,
            str(exc) or repr(exc),
            type(exc).__name__,
        )
        return header, []
    header = RangeHeader(
        plan.round_id,
        plan.shard_id,
        len(batch.records),
        batch.first_esn,
        batch.last_esn,
        batch.data_bytes,
        batch.millis_behind_latest,
        batch.shard_ended,
        tuple(batch.child_shard_ids),
        reader.iterator,
        batch.get_records_calls,
        time.monotonic() - started,
        reader.throttles,
        reader.stats.aggregates_dropped,
        reader.stats.user_records_outside_shard,
        reader.stats.user_records_dropped,
    )
    return header, batch.records


class HeaderList:
    """Spark AccumulatorParam (by its two methods) gathering RangeHeaders from tasks."""

    def zero(self, value: list) -> list:
        return []

    def addInPlace(self, value1: list, value2: list) -> list:  # Spark's name
        value1.extend(value2)
        return value1


def deliver(
    plans: list, headers: list, included: Optional[frozenset] = None
) -> Callable[[int, Iterator], Iterator]:
    """mapPartitionsWithIndex function of a batch: the round's records, exactly its range.

    ``included`` names the partitions (shards) the batch holds; the others (a lost
    lease's) deliver nothing.
    """

    def records(index: int, items: Iterator) -> Iterator:
        if included is not None and index not in included:
            return
        expected = headers[index]
        header = next(items, None)
        if header is not None and _same_range(header, expected):
            yield from items
            return
        if expected.records == 0:
            return  # the round read nothing here; a re-read must deliver nothing either
        yield from read_range(plans[index], expected)

    return records


def _same_range(header: RangeHeader, expected: RangeHeader) -> bool:
    return (header.first_esn, header.last_esn, header.records) == (
        expected.first_esn,
        expected.last_esn,
        expected.records,
    )


def read_range(plan: FetchPlan, expected: RangeHeader) -> list:
    """Exactly the records from ``expected.first_esn`` to ``expected.last_esn``."""
    assert expected.first_esn is not None and expected.last_esn is not None
    log.warning(
        "re-reading shard %s of %s from %s to %s (%d records): its cached block was lost",
        plan.shard_id,
        plan.stream_name,
        expected.first_esn,
        expected.last_esn,
        expected.records,
    )
    first_seq, first_sub = expected.first_esn
    reader = plan.reader(start=StartPosition.at_esn(str(first_seq), first_sub))
    out: list = []
    deadline = time.monotonic() + 300
    while len(out) < expected.records and not reader.shard_ended:
        batch = reader.read(until=expected.last_esn)
        out += batch.records
        if reader.last_delivered is not None and reader.last_delivered >= expected.last_esn:
            break
        if not batch.records and time.monotonic() > deadline:
            break
    if len(out) != expected.records or reader.last_delivered != expected.last_esn:
        raise RecordsLostError(
            f"cannot recompute shard {plan.shard_id} of stream {plan.stream_name!r} from "
            f"{expected.first_esn} to {expected.last_esn}: read {len(out)} of "
            f"{expected.records} records (past the stream's retention?)"
        )
    return out
