"""Shard reading: turn a shard position into user records.

A :class:`ShardReader` runs inside a Spark executor task (or anywhere): it follows
``NextShardIterator`` from page to page (one GetShardIterator per read, not per page),
paces GetRecords to at most one call per ``min_call_interval_s`` per shard (Kinesis allows
5 a second per shard, shared by every consumer), retries throttling and unavailability
with one :class:`~.backoff.Backoff`, re-creates an expired iterator after the last record
it delivered, de-aggregates KPL records with the shard's hash range, and reports shard
end with the child shards.

Positions are extended sequence numbers (sequence number, sub-sequence number). Resuming
from a checkpoint starts AT the checkpointed sequence number and drops every user record
at or before the checkpoint: that is how a KPL aggregate is resumed mid-way. Where a read
starts is a :class:`~.start.StartPosition` (re-exported here, its first home).
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Optional

from ..backoff import Backoff, call_with_retry, is_throttling
from ..conf import conf_get, parse_positive_int, parse_time_ms
from ..errors import DependencyError, KinesisServiceError, MessageHandlerError
from ..kpl import DeaggregationStats, deaggregate
from ..record import KinesisRecord
from .start import StartPosition, esn_key, records_after, records_through
from .streams import child_shard_ids
from .transport import ShardTransport

__all__ = [
    "MAX_RECORDS_PER_CALL",
    "WHOLE_RECORD",
    "ReadBatch",
    "ReaderConfig",
    "ShardReader",
    "StartPosition",
    "esn_key",
]

MAX_RECORDS_PER_CALL = 10_000
SPARK_RETRY_WAIT_TIME = "spark.streaming.kinesis.retry.waitTime"
SPARK_RETRY_MAX_ATTEMPTS = "spark.streaming.kinesis.retry.maxAttempts"
#: The first retry's wait doubles on each further retry, as in kinesis-asl; this caps it.
MAX_READ_RETRY_DELAY_S = 10.0
#: spark.streaming.kinesis.retry.waitTime (100ms) and .maxAttempts (3) defaults.
DEFAULT_READ_BACKOFF = Backoff(
    initial_delay_s=0.1, max_delay_s=MAX_READ_RETRY_DELAY_S, max_attempts=3
)
#: Error codes meaning "this iterator is no longer usable": make a new one.
_ITERATOR_GONE = frozenset({"ExpiredIteratorException"})
#: Fresh iterators one read may make after expiries before it gives up (a loop that
#: keeps expiring is a clock or service problem to report, not to spin on).
MAX_ITERATOR_RENEWALS_PER_READ = 3
#: Sub-sequence number meaning "every user record of this outer record is consumed".
WHOLE_RECORD = 2**31 - 1


@dataclass(frozen=True)
class ReaderConfig:
    """Reading knobs, defaults declared once. Units are in the names."""

    min_call_interval_s: float = 0.2  # <= 5 GetRecords a second per shard
    max_records_per_call: int = MAX_RECORDS_PER_CALL
    backoff: Backoff = DEFAULT_READ_BACKOFF
    #: The KCL's rule for KPL aggregates holding a user record outside the shard's hash
    #: range: drop the aggregate (counted). Off: such records are delivered and counted.
    drop_outside_shard: bool = False

    def __post_init__(self) -> None:
        if not 1 <= self.max_records_per_call <= MAX_RECORDS_PER_CALL:
            raise ValueError(
                f"max_records_per_call must be in [1, {MAX_RECORDS_PER_CALL}], "
                f"got {self.max_records_per_call}"
            )
        if self.min_call_interval_s < 0:
            raise ValueError(f"min_call_interval_s must be >= 0, got {self.min_call_interval_s}")

    @classmethod
    def from_spark_conf(cls, conf: Any, **overrides: Any) -> ReaderConfig:
        """Honour ``spark.streaming.kinesis.retry.waitTime`` and ``.maxAttempts``.

        ``conf`` is a SparkConf, a dict or None (defaults 100ms and 3, as in kinesis-asl);
        ``overrides`` set any other field.
        """
        backoff = DEFAULT_READ_BACKOFF
        wait = conf_get(conf, SPARK_RETRY_WAIT_TIME)
        if wait is not None:
            wait_s = parse_time_ms(wait, SPARK_RETRY_WAIT_TIME) / 1000.0
            backoff = replace(
                backoff, initial_delay_s=wait_s, max_delay_s=max(wait_s, MAX_READ_RETRY_DELAY_S)
            )
        attempts = conf_get(conf, SPARK_RETRY_MAX_ATTEMPTS)
        if attempts is not None:
            backoff = replace(
                backoff, max_attempts=parse_positive_int(attempts, SPARK_RETRY_MAX_ATTEMPTS)
            )
        return cls(**{"backoff": backoff, **overrides})


@dataclass
class ReadBatch:
    """What one :meth:`ShardReader.read` returned."""

    records: list
    millis_behind_latest: Optional[int]
    shard_ended: bool
    child_shard_ids: list = field(default_factory=list)
    get_records_calls: int = 0
    #: ESNs (sequence number as int, sub-sequence number) of the first and last record.
    first_esn: Optional[tuple] = None
    last_esn: Optional[tuple] = None
    #: Bytes of user-record data read (before the message handler).
    data_bytes: int = 0
    #: ESN the reader's next read resumes after (see :attr:`ShardReader.resume_after`).
    resume_after: Optional[tuple] = None


class ShardReader(ShardTransport):
    """Reads one shard from a :class:`StartPosition`; not thread-safe (one task owns it).

    ``client`` is a boto3 Kinesis client or a :class:`~.aws.ClientSpec`. A reader built
    on a spec pickles (into a Spark task, say) with its position and without a client;
    on the other side it takes that process's cached client for the spec.
    """

    def __init__(
        self,
        client: Any,
        stream_name: str,
        shard_id: str,
        start: StartPosition,
        *,
        hash_key_range: Optional[tuple] = None,
        config: ReaderConfig = ReaderConfig(),
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        stats: Optional[DeaggregationStats] = None,
        message_handler: Optional[Callable[[KinesisRecord], Any]] = None,
        iterator: Optional[str] = None,
    ) -> None:
        self.stream_name = stream_name
        self.shard_id = shard_id
        self._use_client(client)
        self._start = start
        self._range = hash_key_range or (None, None)
        self._config = config
        self._clock = clock
        self._sleep = sleep
        self.stats = stats or DeaggregationStats()
        self._handler = message_handler
        #: A shard iterator to continue from (a previous read's), else made from ``start``.
        self._iterator: Optional[str] = iterator
        self._drop_through: Optional[tuple] = start.drop_through
        self._last_call_at: Optional[float] = None
        #: ESN of the last user record delivered, None before the first.
        self.last_delivered: Optional[tuple] = None
        #: ESN through which the shard is consumed, None before the first page: the last
        #: user record delivered, or ``(raw sequence, WHOLE_RECORD)`` when the page's
        #: last raw records gave no user record (dropped or outside the hash range).
        self.resume_after: Optional[tuple] = None
        self.shard_ended = False
        self.child_shard_ids: list = []
        self.iterators_renewed = 0
        #: GetRecords calls answered with throttling (then retried).
        self.throttles = 0

    @property
    def iterator(self) -> Optional[str]:
        """The iterator the next read continues from (None before the first, or at end)."""
        return self._iterator

    def __getstate__(self) -> dict:
        return self._state_to_send()

    def _where(self, operation: str) -> dict:
        return {
            "operation": operation,
            "stream_name": self.stream_name,
            "shard_id": self.shard_id,
            "client": self.client,
        }

    def _new_iterator(self) -> str:
        if self.last_delivered is None:
            args = self._start.iterator_args()
        else:  # after the last delivered record, which may sit inside an aggregate
            args = {
                "ShardIteratorType": "AT_SEQUENCE_NUMBER",
                "StartingSequenceNumber": str(self.last_delivered[0]),
            }
            self._drop_through = self.last_delivered
        response = call_with_retry(
            functools.partial(
                self.client.get_shard_iterator,
                StreamName=self.stream_name,
                ShardId=self.shard_id,
                **args,
            ),
            self._config.backoff,
            sleep=self._sleep,
            clock=self._clock,
            **self._where("GetShardIterator"),
        )
        return response["ShardIterator"]

    def _count_retry(self, exc: BaseException) -> None:
        if is_throttling(exc):
            self.throttles += 1

    def _children(self, response: dict) -> list:
        if "ChildShards" in response:
            return [child["ShardId"] for child in response["ChildShards"]]
        # Older servers (and kinesalite) end a shard without ChildShards: ask ListShards.
        return child_shard_ids(
            self.client, self.stream_name, self.shard_id, backoff=self._config.backoff
        )

    def _pace(self) -> None:
        if self._last_call_at is not None:
            wait = self._config.min_call_interval_s - (self._clock() - self._last_call_at)
            if wait > 0:
                self._sleep(wait)
        self._last_call_at = self._clock()

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
        read stops there (deterministic range reads). ``max_calls`` bounds the
        GetRecords calls (a fetch round makes one per shard, as a KCL consumer does per
        cycle, instead of chasing the tip of a busy shard). ``max_records`` counts user
        records: a read may stop inside a KPL aggregate, and the next one resumes at the
        next sub-record. With a message handler, the batch holds what it returned for
        each record, in order.
        """
        deadline = None if max_time_s is None else self._clock() + max_time_s
        out: list = []
        size = 0
        calls = 0
        millis_behind: Optional[int] = None
        first_esn: Optional[tuple] = None
        renewals = 0
        while not self.shard_ended and len(out) < max_records:
            if max_bytes is not None and size >= max_bytes:
                break
            if deadline is not None and calls and self._clock() >= deadline:
                break
            if max_calls is not None and calls >= max_calls:
                break
            if self._iterator is None:
                self._iterator = self._new_iterator()
            self._pace()
            limit = min(max_records - len(out), self._config.max_records_per_call)
            try:
                response = call_with_retry(
                    functools.partial(
                        self.client.get_records, ShardIterator=self._iterator, Limit=limit
                    ),
                    self._config.backoff,
                    sleep=self._sleep,
                    clock=self._clock,
                    on_retry=self._count_retry,
                    **self._where("GetRecords"),
                )
            except KinesisServiceError as exc:
                if exc.code not in _ITERATOR_GONE:
                    raise
                if renewals >= MAX_ITERATOR_RENEWALS_PER_READ:  # retried on a later read
                    raise DependencyError(
                        f"{renewals + 1} shard iterators in a row expired before use",
                        code=exc.code,
                        operation="GetRecords",
                        stream_name=self.stream_name,
                        shard_id=self.shard_id,
                        endpoint=exc.endpoint,
                        region=exc.region,
                    ) from exc
                self._iterator = None
                self.iterators_renewed += 1
                renewals += 1
                continue
            calls += 1
            millis_behind = response.get("MillisBehindLatest")
            users = deaggregate(
                response["Records"],
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
                done = len(kept) < len(users)
                users = kept
                stopped_early = done
            else:
                done = stopped_early = False
            if len(out) + len(users) > max_records:  # stop inside the aggregate
                users = users[: max_records - len(out)]
                done, truncated, stopped_early = True, True, True
            else:
                truncated = False
            if users:
                out.extend(users if self._handler is None else self._handle(users))
                size += sum(len(u.data) for u in users)
                if first_esn is None:
                    first_esn = esn_key(users[0].sequence_number, users[0].sub_sequence_number)
                last = users[-1]
                self.last_delivered = esn_key(last.sequence_number, last.sub_sequence_number)
                done = done or (until is not None and self.last_delivered >= until)
            self._note_consumed(response["Records"], bool(users), stopped_early)
            next_iterator = response.get("NextShardIterator")
            if truncated:
                # Resume at the next sub-record: a fresh iterator AT the last delivered
                # sequence number, dropping what was delivered (see _new_iterator).
                self._iterator = None
                break
            if next_iterator is None:
                self.shard_ended = True
                self.child_shard_ids = self._children(response)
                break
            self._iterator = next_iterator
            if done or (not response["Records"] and not millis_behind):
                break  # reached the end of the range, or caught up with the shard's tip
        return ReadBatch(
            out,
            millis_behind,
            self.shard_ended,
            list(self.child_shard_ids),
            calls,
            first_esn,
            self.last_delivered if out else None,
            size,
            self.resume_after,
        )

    def _note_consumed(self, raw: list, delivered: bool, stopped_early: bool) -> None:
        if stopped_early:  # records after the last delivered one are not consumed
            if delivered:
                self.resume_after = self.last_delivered
            return
        if not raw:
            return
        last_raw = int(raw[-1]["SequenceNumber"])
        if self.last_delivered is not None and self.last_delivered[0] == last_raw:
            self.resume_after = self.last_delivered
        else:
            self.resume_after = (last_raw, WHOLE_RECORD)

    def _handle(self, users: list) -> list:
        handler = self._handler
        assert handler is not None
        handled: list = []
        append = handled.append
        try:
            for user in users:
                append(handler(user))
        except Exception as exc:
            failed = users[len(handled)]
            raise MessageHandlerError(
                f"message handler failed on stream {self.stream_name!r}, shard "
                f"{self.shard_id}, record {failed.sequence_number}/"
                f"{failed.sub_sequence_number}: {exc!r}"
            ) from exc
        return handled
