"""Enhanced fan-out: a shard's pages through SubscribeToShard instead of GetRecords.

:class:`FanOutTransport` is the second transport of the read core: each event of a
consumer's subscription is a :class:`~.transport.Page`, and the
:class:`~.reader.ShardReader` above it de-aggregates, skips through a mid-aggregate
start, cuts at range ends and record bounds, and keeps what it received but did not
return yet, as it does over GetRecords. :class:`FanOutShardReader` is that reader built
on this transport.

A subscription lasts at most 5 minutes, or ends early (a network error, a takeover).
The reader then subscribes again AFTER the last ``ContinuationSequenceNumber``: every
record up to it was received whole (its sub-records wait in the buffer), so no AT restart
inside an aggregate is needed here; that case is a range's *start* (``StartPosition``
with ``drop_through``). Readers in one process wait out the 5 s Kinesis requires between
successful subscriptions of a consumer to a shard (:class:`~.events.SubscriptionPacer`);
failures are classified by the rule polling uses (:func:`~..backoff.is_retriable`:
throttling, any answer >= 500 with or without an AWS error code, transport failures)
plus ``ResourceInUseException`` (another process's subscription within 5 s), and
retried with backoff, bounded by :class:`FanOutConfig`'s timeout and retry count
(awslabs' ``kinesis.subscribeToShard.timeoutSec`` / ``.maxRetries``); the retries are
counted and logged at a bounded rate (:class:`~..backoff.RetryLog`). Past the bound the
read raises a retriable error: its owner (the kcl daemon's shard consumer) tries again
for as long as it holds the lease.

boto3 reads the event stream over HTTP/1.1, blocking in the reading thread: one wait for
an event is bounded by the client's read timeout (Kinesis sends an event at least every
~5 s, also on an idle shard); ``max_time_s`` bounds a read between events.
"""

from __future__ import annotations

import functools
import logging
import random
import time
from dataclasses import dataclass
from typing import Any, Callable, Optional

from botocore.exceptions import ClientError

from ..backoff import (
    TRANSPORT_ERRORS,
    Backoff,
    RetryLog,
    call_with_retry,
    endpoint_of,
    error_code,
    is_retriable,
    is_throttling,
)
from ..errors import DependencyError, KinesisServiceError, StreamNotFoundError, ThrottledError
from .events import (
    PACER,
    SubscriptionPacer,
    parse_event,
)
from .reader import ShardReader
from .transport import Page, ShardTransport

log = logging.getLogger(__name__)

#: SubscribeToShard's own retriable code, beyond the rule every read follows
#: (throttling such as ``LimitExceededException``, unavailability, transport failures).
SUBSCRIBE_RETRY_CODES = frozenset({"ResourceInUseException"})  # a subscription within 5 s


def is_resubscribable(exc: BaseException) -> bool:
    """A subscribe call (or a live subscription) failed in a way subscribing again heals."""
    return is_retriable(exc, SUBSCRIBE_RETRY_CODES)


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


# -- the transport -----------------------------------------------------------------


class FanOutTransport(ShardTransport):
    """One shard's events through a consumer's subscription; one reader owns it.

    ``client`` is a boto3 Kinesis client or a :class:`~.aws.ClientSpec` (then the
    transport pickles, without its subscription). :meth:`close` ends the subscription.
    """

    pushed = True

    def __init__(
        self,
        consumer_arn: str,
        fanout: FanOutConfig = FanOutConfig(),
        pacer: Optional[SubscriptionPacer] = None,
        jitter: Optional[Callable[[], float]] = None,
    ) -> None:
        self.consumer_arn = consumer_arn
        self._fanout = fanout
        #: The retry waits' jitter in [0, 1) (None: ``random.random``); tests fix it.
        self._jitter = jitter
        self._events: Any = None  # the live subscription's EventStream
        self._iterator: Any = None
        self._pacer = pacer or PACER
        self._failures = 0  # subscriptions in a row that broke before an event
        self._got_event = False  # the live subscription delivered an event
        #: Wall-clock time (epoch seconds) of the last successful SubscribeToShard call:
        #: Kinesis counts its 5 s rule from it, and another process may need to know it.
        self.subscribed_at: Optional[float] = None
        #: Successful SubscribeToShard calls, retried calls, subscriptions that ended.
        self.subscriptions = 0
        self.subscribe_retries = 0
        self.subscription_ends = 0
        self._retry_log = RetryLog(log, "SubscribeToShard")

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

    def _count_retry(self, exc: BaseException) -> None:
        self.subscribe_retries += 1
        self._retry_log.what = f"SubscribeToShard {self.stream_name}/{self.shard_id}"
        self._retry_log.failed(exc)

    def _subscribe(self) -> None:
        key = (self.consumer_arn, self.shard_id)
        wait = self._pacer.wait_s(key, self._fanout.resubscribe_interval_s, self._clock())
        if wait > 0:
            self._sleep(wait)
        position = self.resume_position().starting_position()
        self.calls += 1
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
            retriable=is_resubscribable,
            sleep=self._sleep,
            clock=self._clock,
            rng=self._jitter or random.random,
            on_retry=self._count_retry,
        )
        self._pacer.subscribed(key, self._clock())
        self.subscribed_at = time.time()
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
            throttled = is_throttling(exc) or code in SUBSCRIBE_RETRY_CODES
            kind = ThrottledError if throttled else DependencyError
            raise kind(
                f"{self._failures} subscriptions in a row broke before their first event: {exc}",
                operation="SubscribeToShard",
                code=code,
                **self._where(),
            ) from exc
        self._count_retry(exc)

    def next_page(self, limit: int) -> Page:
        """The next event, subscribing (again) as needed; ``limit`` does not apply (an
        event holds what Kinesis pushed)."""
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
                if not is_resubscribable(exc):
                    self.close()
                    raise KinesisServiceError(
                        f"{code}: {exc}", operation="SubscribeToShard", code=code, **self._where()
                    ) from exc
                self._broken(exc)
                continue
            except TRANSPORT_ERRORS as exc:
                self._broken(exc)
                continue
            if not self._got_event:
                self._retry_log.succeeded()
            self._failures = 0
            self._got_event = True
            event = parse_event(message)
            if event.continuation is not None:
                self._received_through = event.continuation
            return Page(
                event.records,
                event.millis_behind_latest,
                at_tip=event.millis_behind_latest == 0,
                shard_ended=event.shard_ended,
                children=event.children or None,
            )


class FanOutShardReader(ShardReader):
    """A :class:`~.reader.ShardReader` over a consumer's subscription.

    Takes ShardReader's arguments (``shard``: client, stream name, shard id, start;
    ``options``: ``hash_key_range``, ``config``, ``clock``, ``sleep``, ``stats``) plus the
    consumer and the subscription's knobs (``jitter``: the retry waits' jitter, for
    tests); ``fan_out`` is its transport (the subscription counters). Call :meth:`close`
    (or use ``with``) to end the subscription.
    """

    def __init__(
        self,
        *shard: Any,
        consumer_arn: str,
        fanout: FanOutConfig = FanOutConfig(),
        pacer: Optional[SubscriptionPacer] = None,
        jitter: Optional[Callable[[], float]] = None,
        **options: Any,
    ) -> None:
        self.fan_out = FanOutTransport(consumer_arn, fanout, pacer, jitter)
        super().__init__(*shard, transport=self.fan_out, **options)
