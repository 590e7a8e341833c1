"""Enhanced fan-out consumers on the driver: find, register, wait, check, deregister.

A consumer is registered once per application (by name) and its ARN is what executor
tasks subscribe with. Glue's ``fanoutConsumerARN`` names an existing consumer: then
nothing is registered and nothing deregistered. A running query's consumer is watched by
:class:`.consumer_handle.ConsumerHandle`.

Kinesis limits this code respects: 20 consumers per stream (50 on On-demand Advantage),
RegisterStreamConsumer 5 calls a second per account and at most 5 consumers CREATING at
once, DescribeStreamConsumer 20 calls a second per stream. ``LimitExceededException``
and ``ResourceInUseException`` while registering are retried with
:class:`~..backoff.Backoff` within :class:`ConsumerConfig`'s bound, then a
``ConsumerError`` names the stream, the consumer and the limit.
"""

from __future__ import annotations

import enum
import functools
import logging
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Callable, Optional

from ..backoff import Backoff, call_with_retry, endpoint_of, error_code, is_retriable
from ..errors import ConsumerError, DependencyError, StreamNotFoundError, ThrottledError
from .streams import ADMIN_BACKOFF

log = logging.getLogger(__name__)

#: Consumers per stream (On-demand Advantage streams allow 50).
MAX_CONSUMERS_PER_STREAM = 20
LIMITS = (
    f"Kinesis allows {MAX_CONSUMERS_PER_STREAM} consumers per stream (50 on On-demand "
    "Advantage), RegisterStreamConsumer 5 calls a second per account and 5 consumers "
    "CREATING at once"
)
REGISTER_BACKOFF = Backoff(initial_delay_s=0.2, max_delay_s=5.0, max_attempts=8, max_elapsed_s=60.0)
#: Codes worth retrying while registering: a limit, or a consumer still changing state.
_REGISTER_RETRY = frozenset({"LimitExceededException", "ResourceInUseException"})


class ConsumerStatus(enum.Enum):
    """DescribeStreamConsumer's ``ConsumerStatus``: CREATING -> ACTIVE -> DELETING."""

    CREATING = "CREATING"
    ACTIVE = "ACTIVE"
    DELETING = "DELETING"


@dataclass(frozen=True)
class Consumer:
    """A registered stream consumer, as Kinesis describes it."""

    name: str
    arn: str
    status: ConsumerStatus
    stream_arn: Optional[str] = None
    created: Optional[datetime] = None

    @classmethod
    def from_description(cls, description: dict, stream_arn: Optional[str] = None) -> Consumer:
        return cls(
            name=description["ConsumerName"],
            arn=description["ConsumerARN"],
            status=ConsumerStatus(description["ConsumerStatus"]),
            stream_arn=description.get("StreamARN", stream_arn),
            created=description.get("ConsumerCreationTimestamp"),
        )


@dataclass(frozen=True)
class ConsumerConfig:
    """Registration knobs, defaults declared once. Units are in the names."""

    #: How long a new consumer may stay CREATING (the awslabs connector waits 30 s).
    active_timeout_s: float = 30.0
    #: DescribeStreamConsumer while waiting: far below its 20 calls a second per stream.
    poll_interval_s: float = 0.5
    #: RegisterStreamConsumer retries (5 calls/s per account, 5 CREATING at once).
    register_backoff: Backoff = REGISTER_BACKOFF
    #: Other calls (describe, list, deregister).
    backoff: Backoff = ADMIN_BACKOFF

    def __post_init__(self) -> None:
        if self.active_timeout_s <= 0 or self.poll_interval_s <= 0:
            raise ValueError(
                "active_timeout_s and poll_interval_s must be > 0, got "
                f"{self.active_timeout_s} and {self.poll_interval_s}"
            )


DEFAULT_CONFIG = ConsumerConfig()


def stream_arn(client: Any, stream_name: str, *, backoff: Backoff = ADMIN_BACKOFF) -> str:
    """The stream's ARN (consumer calls take ARNs, not names)."""
    answer = call_with_retry(
        functools.partial(client.describe_stream_summary, StreamName=stream_name),
        backoff,
        operation="DescribeStreamSummary",
        stream_name=stream_name,
        client=client,
    )
    return answer["StreamDescriptionSummary"]["StreamARN"]


def list_consumers(
    client: Any, stream_name: str, *, config: ConsumerConfig = DEFAULT_CONFIG
) -> list:
    """Every consumer registered on the stream, as :class:`Consumer`."""
    arn = stream_arn(client, stream_name, backoff=config.backoff)
    consumers: list = []
    token: Optional[str] = None
    while True:
        kwargs: dict = {"StreamARN": arn}
        if token:
            kwargs["NextToken"] = token
        page = call_with_retry(
            functools.partial(client.list_stream_consumers, **kwargs),
            config.backoff,
            operation="ListStreamConsumers",
            stream_name=stream_name,
            client=client,
        )
        consumers += [Consumer.from_description(c, arn) for c in page.get("Consumers", [])]
        token = page.get("NextToken")
        if not token:
            return consumers


def describe_consumer(
    client: Any,
    *,
    consumer_arn: Optional[str] = None,
    stream_arn: Optional[str] = None,
    consumer_name: Optional[str] = None,
    stream_name: Optional[str] = None,
    config: ConsumerConfig = DEFAULT_CONFIG,
) -> Optional[Consumer]:
    """The consumer by ARN, or by stream ARN and name; None if it does not exist."""
    if consumer_arn:
        kwargs: dict = {"ConsumerARN": consumer_arn}
    elif stream_arn and consumer_name:
        kwargs = {"StreamARN": stream_arn, "ConsumerName": consumer_name}
    else:
        raise ValueError("describe_consumer needs consumer_arn, or stream_arn and consumer_name")
    try:
        answer = call_with_retry(
            functools.partial(client.describe_stream_consumer, **kwargs),
            config.backoff,
            operation="DescribeStreamConsumer",
            stream_name=stream_name,
            consumer_arn=consumer_arn or consumer_name,
            client=client,
        )
    except StreamNotFoundError:
        return None
    return Consumer.from_description(answer["ConsumerDescription"], stream_arn)


def consumer_error(
    message: str, stream_name: str, consumer: str, client: Any, **kw: Any
) -> ConsumerError:
    """A ConsumerError naming the stream, the consumer and the client's endpoint."""
    return ConsumerError(
        message, stream_name=stream_name, consumer_arn=consumer, **endpoint_of(client), **kw
    )


def wait_active(
    client: Any,
    consumer: Consumer,
    stream_name: str,
    *,
    config: ConsumerConfig = DEFAULT_CONFIG,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> Consumer:
    """Poll DescribeStreamConsumer until the consumer is ACTIVE (bounded)."""
    deadline = clock() + config.active_timeout_s
    current: Optional[Consumer] = consumer
    while current is not None and current.status is not ConsumerStatus.ACTIVE:
        if current.status is ConsumerStatus.DELETING:
            break
        if clock() >= deadline:
            raise consumer_error(
                f"consumer {consumer.name!r} still {current.status.value} after "
                f"{config.active_timeout_s:g}s",
                stream_name,
                consumer.arn,
                client,
                operation="DescribeStreamConsumer",
            )
        sleep(config.poll_interval_s)
        current = describe_consumer(
            client, consumer_arn=consumer.arn, stream_name=stream_name, config=config
        )
    if current is None or current.status is not ConsumerStatus.ACTIVE:
        raise consumer_error(
            f"consumer {consumer.name!r} was deleted while waiting for it to become ACTIVE",
            stream_name,
            consumer.arn,
            client,
            operation="DescribeStreamConsumer",
        )
    return current


def register_consumer(
    client: Any,
    stream_name: str,
    consumer_name: str,
    *,
    config: ConsumerConfig = DEFAULT_CONFIG,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> Consumer:
    """Find the consumer by name or register it; returns it ACTIVE.

    A consumer still DELETING (a previous query's) is waited out, which is one reason
    ``ResourceInUseException`` is retried; another registration of the same name that
    wins the race is found and used.
    """
    arn = stream_arn(client, stream_name, backoff=config.backoff)
    found = describe_consumer(
        client, stream_arn=arn, consumer_name=consumer_name, stream_name=stream_name, config=config
    )
    if found is not None and found.status is not ConsumerStatus.DELETING:
        return wait_active(client, found, stream_name, config=config, clock=clock, sleep=sleep)

    def register() -> dict:
        try:
            return client.register_stream_consumer(StreamARN=arn, ConsumerName=consumer_name)
        except Exception as exc:
            if error_code(exc) != "ResourceInUseException":
                raise
            # Registered meanwhile (by a concurrent query): use it, unless it is DELETING.
            other = describe_consumer(
                client, stream_arn=arn, consumer_name=consumer_name, config=config
            )
            if other is None or other.status is ConsumerStatus.DELETING:
                raise
            return {"Consumer": {**_description(other), "StreamARN": arn}}

    try:
        answer = call_with_retry(
            register,
            config.register_backoff,
            operation="RegisterStreamConsumer",
            stream_name=stream_name,
            consumer_arn=consumer_name,
            client=client,
            retriable=functools.partial(is_retriable, also=_REGISTER_RETRY),
            sleep=sleep,
            clock=clock,
        )
    except (ThrottledError, DependencyError) as exc:
        if exc.code not in _REGISTER_RETRY:
            raise
        count = len(list_consumers(client, stream_name, config=config))
        raise consumer_error(
            f"could not register consumer {consumer_name!r}: {exc.code} through the retry "
            f"bound; the stream has {count} consumer(s). {LIMITS}",
            stream_name,
            consumer_name,
            client,
            operation="RegisterStreamConsumer",
            code=exc.code,
        ) from exc
    consumer = Consumer.from_description(answer["Consumer"], arn)
    log.info("registered consumer %s on stream %s: %s", consumer_name, stream_name, consumer.arn)
    return wait_active(client, consumer, stream_name, config=config, clock=clock, sleep=sleep)


def _description(consumer: Consumer) -> dict:
    return {
        "ConsumerName": consumer.name,
        "ConsumerARN": consumer.arn,
        "ConsumerStatus": consumer.status.value,
        "ConsumerCreationTimestamp": consumer.created,
    }


def ensure_consumer(
    client: Any,
    stream_name: str,
    *,
    consumer_name: Optional[str] = None,
    consumer_arn: Optional[str] = None,
    config: ConsumerConfig = DEFAULT_CONFIG,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> Consumer:
    """The ACTIVE consumer a query reads with: by ARN (register nothing) or by name."""
    if (consumer_name is None) == (consumer_arn is None):
        raise ValueError("give exactly one of consumer_name and consumer_arn")
    if consumer_arn is None:
        assert consumer_name is not None
        return register_consumer(
            client, stream_name, consumer_name, config=config, clock=clock, sleep=sleep
        )
    found = describe_consumer(
        client, consumer_arn=consumer_arn, stream_name=stream_name, config=config
    )
    if found is None:
        raise consumer_error(
            f"no consumer with ARN {consumer_arn!r}: is the ARN (fanoutConsumerARN) right?",
            stream_name,
            consumer_arn,
            client,
            operation="DescribeStreamConsumer",
            code="ResourceNotFoundException",
        )
    expected = stream_arn(client, stream_name, backoff=config.backoff)
    if found.stream_arn and found.stream_arn != expected:
        raise consumer_error(
            f"consumer {consumer_arn!r} belongs to stream {found.stream_arn}, not {expected}",
            stream_name,
            consumer_arn,
            client,
            operation="DescribeStreamConsumer",
        )
    return wait_active(client, found, stream_name, config=config, clock=clock, sleep=sleep)


def deregister_consumer(
    client: Any,
    stream_name: str,
    *,
    consumer_name: Optional[str] = None,
    consumer_arn: Optional[str] = None,
    config: ConsumerConfig = DEFAULT_CONFIG,
) -> bool:
    """Deregister by name or ARN; False if there was no such consumer."""
    if consumer_arn:
        kwargs: dict = {"ConsumerARN": consumer_arn}
    elif consumer_name:
        kwargs = {
            "StreamARN": stream_arn(client, stream_name, backoff=config.backoff),
            "ConsumerName": consumer_name,
        }
    else:
        raise ValueError("give consumer_name or consumer_arn")
    try:
        call_with_retry(
            functools.partial(client.deregister_stream_consumer, **kwargs),
            config.backoff,
            operation="DeregisterStreamConsumer",
            stream_name=stream_name,
            consumer_arn=consumer_arn or consumer_name,
            client=client,
        )
    except StreamNotFoundError:
        return False
    log.info("deregistered consumer %s of stream %s", consumer_arn or consumer_name, stream_name)
    return True
