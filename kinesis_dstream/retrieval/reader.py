"""The read core: turn a shard's pages into user records, over either transport.

A :class:`ShardReader` runs inside a Spark executor task (or anywhere). It takes
:class:`~.transport.Page`\\ s from a transport (GetRecords by default,
:class:`~.polling.PollingTransport`; SubscribeToShard in :class:`~.fanout.FanOutShardReader`)
and owns every rule of what a page means, once for both:

- de-aggregation of KPL records with the shard's hash range;
- a start inside an aggregate: resuming from a checkpoint starts AT its sequence number
  and drops every user record at or before it (``StartPosition.drop_through``);
- an inclusive range end (``until``) and the record / byte bounds of a read, which may
  stop inside an aggregate: the rest of the page waits for the next read, nothing
  received is lost;
- the position the shard is consumed through (:attr:`resume_after`);
- the message handler, and shard end with its child shards.

Positions are extended sequence numbers (sequence number, sub-sequence number). Where a
read starts is a :class:`~.start.StartPosition`; :func:`~.replay.replay_range` reads a recorded
range again, exactly.
"""

from __future__ import annotations

import enum
import logging
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from ..errors import MessageHandlerError
from ..kpl import DeaggregationStats, deaggregate
from ..record import KinesisRecord
from .config import (
    DEFAULT_READ_BACKOFF,
    DEFAULT_READER_CONFIG,
    MAX_RECORDS_PER_CALL,
    ReaderConfig,
)
from .polling import PollingTransport
from .start import (
    WHOLE_RECORD,
    StartPosition,
    consumed_through,
    esn_key,
    records_after,
    records_through,
)
from .streams import child_shard_ids
from .transport import Page, ShardTransport

log = logging.getLogger(__name__)

__all__ = [
    "DEFAULT_READ_BACKOFF",
    "MAX_RECORDS_PER_CALL",
    "WHOLE_RECORD",
    "ReadBatch",
    "ReadPhase",
    "ReaderConfig",
    "ShardReader",
    "StartPosition",
    "apply_handler",
    "esn_key",
]


class ReadPhase(enum.Enum):
    """Where a :class:`ShardReader` is in its shard."""

    READING = "reading"
    #: The shard's last page came: what is pending goes out, then SHARD_ENDED.
    DRAINING = "draining"
    SHARD_ENDED = "shard ended"
    #: A page reached the range's end (``until``): nothing more to read.
    RANGE_DONE = "range done"
    #: The message handler raised: the reader hands nothing on.
    FAILED = "failed"


_TRANSITIONS = {
    ReadPhase.READING: {ReadPhase.DRAINING, ReadPhase.RANGE_DONE, ReadPhase.FAILED},
    ReadPhase.DRAINING: {ReadPhase.SHARD_ENDED, ReadPhase.FAILED},
    ReadPhase.SHARD_ENDED: {ReadPhase.FAILED},
    ReadPhase.RANGE_DONE: {ReadPhase.FAILED},
    ReadPhase.FAILED: set(),
}


@dataclass
class ReadBatch:
    """What one :meth:`ShardReader.read` returned."""

    records: list
    millis_behind_latest: Optional[int]
    shard_ended: bool
    child_shard_ids: list = field(default_factory=list)
    #: Pages taken from the transport: GetRecords calls, or fan-out events.
    get_records_calls: int = 0
    #: ESNs (sequence number as int, sub-sequence number) of the first and last record.
    first_esn: Optional[tuple] = None
    last_esn: Optional[tuple] = None
    #: Bytes of user-record data read (before the message handler).
    data_bytes: int = 0
    #: ESN the reader's next read resumes after (see :attr:`ShardReader.resume_after`).
    resume_after: Optional[tuple] = None


def apply_handler(
    handler: Callable[[KinesisRecord], Any], users: list, stream_name: str, shard_id: str
) -> list:
    """What ``handler`` returns for each record, in order; a failure names the record."""
    handled: list = []
    append = handled.append
    try:
        for user in users:
            append(handler(user))
    except Exception as exc:
        failed = users[len(handled)]
        raise MessageHandlerError(
            f"message handler failed on stream {stream_name!r}, shard "
            f"{shard_id}, record {failed.sequence_number}/"
            f"{failed.sub_sequence_number}: {exc!r}"
        ) from exc
    return handled


class ShardReader:
    """Reads one shard from a :class:`StartPosition`; not thread-safe (one task owns it).

    ``client`` is a boto3 Kinesis client or a :class:`~.aws.ClientSpec`. A reader built
    on a spec pickles (into a Spark task, say) with its position and without a client;
    on the other side it takes that process's cached client for the spec. ``transport``
    replaces the default GetRecords transport (``iterator``: a previous read's shard
    iterator to continue from).
    """

    def __init__(
        self,
        client: Any,
        stream_name: str,
        shard_id: str,
        start: StartPosition,
        *,
        hash_key_range: Optional[tuple] = None,
        config: ReaderConfig = DEFAULT_READER_CONFIG,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        stats: Optional[DeaggregationStats] = None,
        message_handler: Optional[Callable[[KinesisRecord], Any]] = None,
        iterator: Optional[str] = None,
        transport: Optional[ShardTransport] = None,
    ) -> None:
        self.stream_name = stream_name
        self.shard_id = shard_id
        self.transport: ShardTransport = transport or PollingTransport(config, iterator)
        self.transport.attach(client, stream_name, shard_id, start, clock=clock, sleep=sleep)
        self._range = hash_key_range or (None, None)
        self._config = config
        self._clock = clock
        self.stats = stats or DeaggregationStats()
        self._handler = message_handler
        self._drop_through: Optional[tuple] = start.drop_through
        self._pending: list = []  # user records received, not yet returned ...
        self._next = 0  # ... from this index on
        self._raw_tail: Optional[int] = None  # the last raw sequence number received
        self.phase = ReadPhase.READING
        self._children: Optional[tuple] = None
        self._caught_up = False  # the last page said there is nothing more for now
        self._millis: Optional[int] = None
        #: Sequence number of the first raw record received (None before): a read that
        #: starts AT a sequence number learns here whether that record is still there.
        self.first_raw_sequence: Optional[str] = None
        #: ESN of the last user record delivered, None before the first.
        self.last_delivered: Optional[tuple] = None
        #: ESN through which the shard is consumed, None before the first page: the last
        #: user record delivered, or ``(raw sequence, WHOLE_RECORD)`` when the page's
        #: last raw records gave no user record (dropped or outside the hash range).
        self.resume_after: Optional[tuple] = None
        self.child_shard_ids: list = []

    @property
    def shard_ended(self) -> bool:
        return self.phase is ReadPhase.SHARD_ENDED

    def _enter(self, phase: ReadPhase) -> None:
        if phase not in _TRANSITIONS[self.phase]:
            raise AssertionError(f"shard reader: {self.phase.value} -> {phase.value}")
        self.phase = phase

    @property
    def client(self) -> Any:
        return self.transport.client

    def __getstate__(self) -> dict:
        self.transport.check_sendable(type(self).__name__)
        return self.__dict__

    @property
    def iterator(self) -> Optional[str]:
        """A shard iterator a later reader may continue from, or None: then it starts
        after :attr:`last_delivered` (the read stopped inside a page, or failed)."""
        if self.phase in (ReadPhase.FAILED, ReadPhase.RANGE_DONE) or self._has_pending():
            return None
        return self.transport.iterator

    def close(self) -> None:
        """Release what the transport holds open (a fan-out subscription); safe twice."""
        self.transport.close()

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def read(
        self,
        max_records: int = MAX_RECORDS_PER_CALL,
        max_bytes: Optional[int] = None,
        max_time_s: Optional[float] = None,
        until: Optional[tuple] = None,
        max_calls: Optional[int] = None,
    ) -> ReadBatch:
        """Read up to the bounds; returns early when caught up or at shard end.

        ``until`` is an inclusive end ESN: records after it are not delivered and the
        reader stops there for good (deterministic range reads). ``max_calls`` bounds the
        pages taken (a fetch round makes one call per shard, as a KCL consumer does per
        cycle). ``max_records`` counts user records: a read may stop inside a KPL
        aggregate, and the next one goes on at the next sub-record. With a message
        handler, the batch holds what it returned for each record, in order.
        """
        deadline = None if max_time_s is None else self._clock() + max_time_s
        out: list = []
        size = 0
        pages = 0
        while len(out) < max_records and not (max_bytes is not None and size >= max_bytes):
            if self._has_pending():
                size = self._serve(out, max_records - len(out), max_bytes, size)
                continue
            if self.phase is not ReadPhase.READING:
                break
            if self._caught_up and (out or pages):
                break
            if max_calls is not None and pages >= max_calls:
                break
            if deadline is not None and pages and self._clock() >= deadline:
                break
            limit = min(max_records - len(out), self._config.max_records_per_call)
            try:
                page = self.transport.next_page(limit)
            except BaseException:
                # What this read took from the pending records goes back: a caller that
                # retries on this reader (the kcl daemon does) gets them first.
                self._unserve(out)
                raise
            self._take(page, until)
            pages += 1
        records = out
        if out and self._handler is not None:
            try:
                records = apply_handler(self._handler, out, self.stream_name, self.shard_id)
            except MessageHandlerError:
                self._enter(ReadPhase.FAILED)
                raise
        first_esn = None
        if out:
            first_esn = esn_key(out[0].sequence_number, out[0].sub_sequence_number)
            self.last_delivered = esn_key(out[-1].sequence_number, out[-1].sub_sequence_number)
        if self._has_pending() or self.phase is ReadPhase.RANGE_DONE:
            if out:
                self.resume_after = self.last_delivered
        elif self._raw_tail is not None:
            self.resume_after = consumed_through(self._raw_tail, self.last_delivered)
        if self.phase is ReadPhase.DRAINING and not self._has_pending():
            try:
                self._finish_shard()
            except Exception as exc:
                if not out:
                    raise
                # These records go out now, the shard's end not yet: the next read asks
                # for its children again (and raises if that still fails).
                log.warning(
                    "stream %s shard %s ended but its child shards could not be listed "
                    "(%s); asking again at the next read",
                    self.stream_name,
                    self.shard_id,
                    exc,
                )
        return ReadBatch(
            records,
            self._millis,
            self.shard_ended,
            list(self.child_shard_ids),
            pages,
            first_esn,
            self.last_delivered if out else None,
            size,
            self.resume_after,
        )

    def _has_pending(self) -> bool:
        return self._next < len(self._pending)

    @property
    def has_pending(self) -> bool:
        """User records received and not yet returned: the next read needs no call."""
        return self._has_pending()

    @property
    def pending_records(self) -> int:
        """How many user records were received and not yet returned."""
        return len(self._pending) - self._next

    def _serve(self, out: list, room: int, max_bytes: Optional[int], size: int) -> int:
        """Move up to ``room`` pending records to ``out`` (fewer at ``max_bytes``)."""
        pending, start = self._pending, self._next
        chunk = pending[start : start + room]
        if max_bytes is None:
            size += sum(len(user.data) for user in chunk)
        else:
            for index, user in enumerate(chunk):
                size += len(user.data)
                if size >= max_bytes:
                    chunk = chunk[: index + 1]
                    break
        out.extend(chunk)
        self._next = start + len(chunk)
        if self._next >= len(pending):
            self._pending, self._next = [], 0
        return size

    def _unserve(self, out: list) -> None:
        """Put records a failed read had taken back in front of the pending ones."""
        if out:
            self._pending = out + self._pending[self._next :]
            self._next = 0

    def _take(self, page: Page, until: Optional[tuple]) -> None:
        """Keep a page's user records (after a mid-aggregate start, through ``until``)."""
        self._millis = page.millis_behind_latest
        self._caught_up = page.at_tip and (self.transport.pushed or not page.records)
        if page.records:
            if self.first_raw_sequence is None:
                self.first_raw_sequence = page.records[0]["SequenceNumber"]
            self._raw_tail = int(page.records[-1]["SequenceNumber"])
            users = deaggregate(
                page.records,
                *self._range,
                shard_id=self.shard_id,
                stream_name=self.stream_name,
                stats=self.stats,
                drop_outside_shard=self._config.drop_outside_shard,
            )
            if self._drop_through is not None:
                users = records_after(users, self._drop_through)
                if users:
                    self._drop_through = None
            if until is not None:
                kept = records_through(users, until)
                last = kept[-1] if kept else None
                if len(kept) < len(users) or (
                    last is not None
                    and esn_key(last.sequence_number, last.sub_sequence_number) >= until
                ):
                    self._enter(ReadPhase.RANGE_DONE)
                users = kept
            if users:
                self._pending.extend(users)
        if page.shard_ended and self.phase is ReadPhase.READING:
            self._enter(ReadPhase.DRAINING)
            self._children = page.children

    def _finish_shard(self) -> None:
        """Enter SHARD_ENDED with the shard's children. If they cannot be had (a failed
        ListShards) the reader stays DRAINING and raises: the next read asks again."""
        if self._children is not None:
            children = list(self._children)
        else:  # older servers (and kinesalite) end a shard without ChildShards
            children = child_shard_ids(
                self.client, self.stream_name, self.shard_id, backoff=self._config.backoff
            )
        self.child_shard_ids = children
        self._enter(ReadPhase.SHARD_ENDED)
        self.close()
