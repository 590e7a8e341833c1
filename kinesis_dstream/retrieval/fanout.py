"""Enhanced fan-out: read a shard range with SubscribeToShard instead of GetRecords.

A :class:`FanOutShardReader` has the interface of the polling
:class:`~.reader.ShardReader` (``read() -> ReadBatch``, ``shard_ended``,
``child_shard_ids``, ``last_delivered``, ``resume_after``), so the code that reads a
range is written once and picks a transport. It subscribes from its
:class:`~.reader.StartPosition`, de-aggregates every event with the shard's hash range,
drops the user records at or before a mid-aggregate start exactly as the polling reader
does, and keeps user records it received but did not return yet for the next read:
nothing received is lost when a read stops at its record bound.

A subscription lasts at most 5 minutes, or ends early (a network error, a takeover).
The reader then subscribes again AFTER the last ``ContinuationSequenceNumber``: every
record up to it was received whole (its sub-records wait in the buffer), so no AT restart
inside an aggregate is needed here; that case is a range's *start* (``StartPosition``
with ``drop_through``). Readers in one process wait out the 5 s Kinesis requires between
successful subscriptions of a consumer to a shard (:class:`~.events.SubscriptionPacer`);
``ResourceInUseException`` / ``LimitExceededException`` (another process's subscription
within 5 s, more than one call a second) are retried with backoff, bounded by
:class:`FanOutConfig`'s timeout and retry count (awslabs'
``kinesis.subscribeToShard.timeoutSec`` / ``.maxRetries``).

boto3 reads the event stream over HTTP/1.1, blocking in the reading thread: one wait for
an event is bounded by the client's read timeout (Kinesis sends an event at least every
~5 s, also on an idle shard); ``max_time_s`` bounds a read between events.
"""

from __future__ import annotations

import functools
import logging
import time
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable, Optional

from botocore.eventstream import ParserError
from botocore.exceptions import ClientError
from urllib3.exceptions import HTTPError as Urllib3Error

from ..backoff import TRANSPORT_ERRORS, Backoff, call_with_retry, endpoint_of, error_code
from ..errors import DependencyError, KinesisServiceError, StreamNotFoundError, ThrottledError
from ..kpl import DeaggregationStats, deaggregate
from .events import (
    PACER,
    ShardEvent,
    SubscriptionPacer,
    consumed_through,
    continuation_position,
    parse_event,
    starting_position,
)
from .reader import (
    MAX_RECORDS_PER_CALL,
    ReadBatch,
    ReaderConfig,
    StartPosition,
    esn_key,
    records_after,
    records_through,
)
from .streams import child_shard_ids
from .transport import ShardTransport

log = logging.getLogger(__name__)
DEFAULT_READER_CONFIG = ReaderConfig()

#: Codes a subscribe call (or a live subscription) may heal from by subscribing again.
RESUBSCRIBE_CODES = frozenset(
    {
        "ResourceInUseException",  # another subscription within 5 s, or a takeover
        "LimitExceededException",  # more than one call a second per shard and consumer
        "ProvisionedThroughputExceededException",
        "InternalFailure",
        "InternalServerError",
        "ServiceUnavailable",
    }
)
#: Failures while reading the event stream: urllib3's surface unwrapped through botocore.
STREAM_ERRORS = (*TRANSPORT_ERRORS, Urllib3Error, ParserError, ConnectionError)


@dataclass(frozen=True)
class FanOutConfig:
    """SubscribeToShard knobs, defaults declared once (awslabs' where it has them)."""

    #: ``kinesis.subscribeToShard.timeoutSec``: the time one (re)subscription may take,
    #: its retries included, before the read gives up.
    subscribe_timeout_s: float = 60.0
    #: ``kinesis.subscribeToShard.maxRetries``: failed subscribe calls (or subscriptions
    #: that broke before their first event) in a row before the read gives up.
    subscribe_max_retries: int = 10
    #: Kinesis refuses a subscription within 5 s of the last successful one for the same
    #: consumer and shard: readers in one process wait it out (see SubscriptionPacer).
    resubscribe_interval_s: float = 5.0
    #: First retry wait (Kinesis allows one call a second per shard and consumer);
    #: doubles up to the 5 s after which a new subscription takes the shard over.
    retry_initial_delay_s: float = 1.0
    retry_max_delay_s: float = 5.0

    def __post_init__(self) -> None:
        if self.subscribe_timeout_s <= 0:
            raise ValueError(f"subscribe_timeout_s must be > 0, got {self.subscribe_timeout_s}")
        if self.subscribe_max_retries < 0:
            raise ValueError(
                f"subscribe_max_retries must be >= 0, got {self.subscribe_max_retries}"
            )
        if self.resubscribe_interval_s < 0:
            raise ValueError(
                f"resubscribe_interval_s must be >= 0, got {self.resubscribe_interval_s}"
            )

    @property
    def backoff(self) -> Backoff:
        return Backoff(
            initial_delay_s=self.retry_initial_delay_s,
            max_delay_s=max(self.retry_initial_delay_s, self.retry_max_delay_s),
            max_attempts=self.subscribe_max_retries + 1,
            max_elapsed_s=self.subscribe_timeout_s,
        )


# -- the reader --------------------------------------------------------------------


class FanOutShardReader(ShardTransport):
    """Reads one shard through a consumer's subscription; not thread-safe (one task owns it).

    ``client`` is a boto3 Kinesis client or a :class:`~.aws.ClientSpec` (then the reader
    pickles, without its subscription). Call :meth:`close` (or use ``with``) to end the
    subscription.
    """

    def __init__(
        self,
        client: Any,
        stream_name: str,
        shard_id: str,
        start: StartPosition,
        *,
        consumer_arn: str,
        hash_key_range: Optional[tuple] = None,
        config: ReaderConfig = DEFAULT_READER_CONFIG,
        fanout: FanOutConfig = FanOutConfig(),
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        stats: Optional[DeaggregationStats] = None,
        pacer: Optional[SubscriptionPacer] = None,
    ) -> None:
        self.stream_name = stream_name
        self.shard_id = shard_id
        self.consumer_arn = consumer_arn
        self._use_client(client)
        self._start = start
        self._range = hash_key_range or (None, None)
        self._config = config
        self._fanout = fanout
        self._clock = clock
        self._sleep = sleep
        self.stats = stats or DeaggregationStats()
        self._drop_through: Optional[tuple] = start.drop_through
        self._events: Any = None  # the live subscription's EventStream
        self._iterator: Any = None
        self._continuation: Optional[str] = None
        self._pacer = pacer or PACER
        self._pending: deque = deque()  # user records received, not yet returned
        self._raw_tail: Optional[int] = None  # last raw sequence number received
        self._end_seen = False
        self._children: tuple = ()
        self._at_until = False
        self._millis: Optional[int] = None
        self._tip = False  # the last event was at the shard's tip (MillisBehindLatest 0)
        self._failures = 0  # subscriptions in a row that broke before an event
        self._got_event = False  # the live subscription delivered an event
        self.last_delivered: Optional[tuple] = None
        self.resume_after: Optional[tuple] = None
        self.shard_ended = False
        self.child_shard_ids: list = []
        #: Successful SubscribeToShard calls, retried calls, subscriptions that ended.
        self.subscriptions = 0
        self.subscribe_retries = 0
        self.subscription_ends = 0

    def __getstate__(self) -> dict:
        state = self._state_to_send(_events=None, _iterator=None)
        del state["_pacer"]  # the receiving process's own
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state, _pacer=PACER)

    def close(self) -> None:
        """End the subscription (closes the event stream's connection); safe twice."""
        events, self._events, self._iterator = self._events, None, None
        if events is not None:
            try:
                events.close()
            except Exception as exc:  # closing a broken connection; nothing to keep
                log.debug("closing the subscription of %s: %r", self.shard_id, exc)

    def _where(self) -> dict:
        return {
            "stream_name": self.stream_name,
            "shard_id": self.shard_id,
            "consumer_arn": self.consumer_arn,
            **endpoint_of(self.client),
        }

    # -- subscribing ----------------------------------------------------------------

    def _count_retry(self, exc: BaseException) -> None:
        self.subscribe_retries += 1
        log.info(
            "SubscribeToShard %s/%s retried: %s", self.stream_name, self.shard_id, error_code(exc)
        )

    def _subscribe(self) -> None:
        key = (self.consumer_arn, self.shard_id)
        wait = self._pacer.wait_s(key, self._fanout.resubscribe_interval_s, self._clock())
        if wait > 0:
            self._sleep(wait)
        if self._continuation is None:
            position = starting_position(self._start)
        else:
            position = continuation_position(self._continuation)
        response = call_with_retry(
            functools.partial(
                self.client.subscribe_to_shard,
                ConsumerARN=self.consumer_arn,
                ShardId=self.shard_id,
                StartingPosition=position,
            ),
            self._fanout.backoff,
            operation="SubscribeToShard",
            stream_name=self.stream_name,
            shard_id=self.shard_id,
            client=self.client,
            consumer_arn=self.consumer_arn,
            retriable=lambda exc: (
                error_code(exc) in RESUBSCRIBE_CODES or isinstance(exc, STREAM_ERRORS)
            ),
            sleep=self._sleep,
            clock=self._clock,
            on_retry=self._count_retry,
        )
        self._pacer.subscribed(key, self._clock())
        self.subscriptions += 1
        self._events = response["EventStream"]
        self._iterator = iter(self._events)
        self._got_event = False

    def _broken(self, exc: BaseException) -> None:
        """A subscription failed mid-stream: count it, or give up past the retry bound."""
        self.close()
        self._failures += 1
        code = error_code(exc)
        if self._failures > self._fanout.subscribe_max_retries:
            kind = ThrottledError if code in RESUBSCRIBE_CODES else DependencyError
            raise kind(
                f"{self._failures} subscriptions in a row broke before their first event: {exc}",
                operation="SubscribeToShard",
                code=code,
                **self._where(),
            ) from exc
        self.subscribe_retries += 1
        log.info("subscription to %s/%s broke: %r", self.stream_name, self.shard_id, exc)

    def _next_event(self) -> ShardEvent:
        """The next event, subscribing (again) as needed."""
        while True:
            if self._iterator is None:
                self._subscribe()
            try:
                message = next(self._iterator)
            except StopIteration:  # the subscription's 5 minutes are up (or it was cut)
                self.close()
                self.subscription_ends += 1
                if not self._got_event:  # ended before its first event: do not spin
                    self._failures += 1
                    if self._failures > self._fanout.subscribe_max_retries:
                        raise DependencyError(
                            f"{self._failures} subscriptions in a row ended without an event",
                            operation="SubscribeToShard",
                            **self._where(),
                        ) from None
                continue
            except ClientError as exc:  # EventStreamError: an exception frame
                code = error_code(exc)
                if code == "ResourceNotFoundException":
                    self.close()
                    raise StreamNotFoundError(
                        f"the stream, shard or consumer is gone: {exc}",
                        operation="SubscribeToShard",
                        code=code,
                        **self._where(),
                    ) from exc
                if code not in RESUBSCRIBE_CODES:
                    self.close()
                    raise KinesisServiceError(
                        f"{code}: {exc}", operation="SubscribeToShard", code=code, **self._where()
                    ) from exc
                self._broken(exc)
                continue
            except STREAM_ERRORS as exc:
                self._broken(exc)
                continue
            self._failures = 0
            self._got_event = True
            return parse_event(message)

    # -- reading --------------------------------------------------------------------

    def _take(self, event: ShardEvent, until: Optional[tuple]) -> None:
        """Buffer an event's user records (after a mid-aggregate start, through ``until``)."""
        if event.continuation is not None:
            self._continuation = event.continuation
        self._millis = event.millis_behind_latest
        self._tip = event.millis_behind_latest == 0
        if event.records:
            self._raw_tail = int(event.records[-1]["SequenceNumber"])
            users = deaggregate(
                event.records,
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
                self._at_until = len(kept) < len(users) or (
                    last is not None
                    and esn_key(last.sequence_number, last.sub_sequence_number) >= until
                )
                users = kept
            self._pending.extend(users)
        if event.shard_ended:
            self._end_seen = True
            self._children = event.children

    def _finish_shard(self) -> None:
        self.shard_ended = True
        if self._children:
            self.child_shard_ids = list(self._children)
        else:  # an end event without ChildShards: ask ListShards, as the polling path does
            self.child_shard_ids = child_shard_ids(self.client, self.stream_name, self.shard_id)
        self.close()

    def read(
        self,
        max_records: int = MAX_RECORDS_PER_CALL,
        max_bytes: Optional[int] = None,
        max_time_s: Optional[float] = None,
        until: Optional[tuple] = None,
        max_calls: Optional[int] = None,
    ) -> ReadBatch:
        """Read up to the bounds, as :meth:`ShardReader.read` does.

        ``max_calls`` bounds the events taken from the subscription (an event is the
        fan-out page). Returns early when caught up (an event with ``MillisBehindLatest``
        0), at ``until`` (an inclusive end ESN) or at shard end; records received beyond
        ``max_records`` wait for the next read.
        """
        deadline = None if max_time_s is None else self._clock() + max_time_s
        out: list = []
        size = 0
        events = 0
        while len(out) < max_records and not (max_bytes is not None and size >= max_bytes):
            if self._pending:
                user = self._pending.popleft()
                out.append(user)
                size += len(user.data)
                continue
            if self._end_seen or self._at_until:
                break
            if self._tip and (out or events):  # the buffer held the tip: caught up
                break
            if max_calls is not None and events >= max_calls:
                break
            if deadline is not None and events and self._clock() >= deadline:
                break
            event = self._next_event()
            events += 1
            self._take(event, until)
        first_esn = None
        if out:
            first_esn = esn_key(out[0].sequence_number, out[0].sub_sequence_number)
            self.last_delivered = esn_key(out[-1].sequence_number, out[-1].sub_sequence_number)
        if self._pending or self._at_until:
            if out:
                self.resume_after = self.last_delivered
        elif self._raw_tail is not None:
            self.resume_after = consumed_through(self._raw_tail, self.last_delivered)
        if self._end_seen and not self._pending and not self.shard_ended:
            self._finish_shard()
        return ReadBatch(
            out,
            self._millis,
            self.shard_ended,
            list(self.child_shard_ids),
            events,
            first_esn,
            self.last_delivered if out else None,
            size,
            self.resume_after,
        )
