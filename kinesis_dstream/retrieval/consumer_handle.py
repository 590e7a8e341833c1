"""The consumer a running query reads with: registered or found once, re-checked on a clock.

Driver-side. The source owns one :class:`ConsumerHandle` per stream; it has no thread of
its own: the source calls :meth:`ConsumerHandle.refresh` when it plans a batch.
"""

from __future__ import annotations

import logging
import time
from typing import Any, Callable, Optional

from .consumers import (
    DEFAULT_CONFIG,
    Consumer,
    ConsumerConfig,
    ConsumerStatus,
    consumer_error,
    deregister_consumer,
    describe_consumer,
    ensure_consumer,
    register_consumer,
)

log = logging.getLogger(__name__)


class ConsumerHandle:
    """The consumer a running query reads with, re-checked every ``refresh_interval_s``.

    ``reregister`` says what a consumer deleted under the query becomes: registered again
    by name (tasks then subscribe with the new :attr:`arn`), or a :class:`ConsumerError`.
    A consumer given by ARN is never registered: its deletion is always an error.
    Driver-side; one owner (the source), no thread of its own.
    """

    def __init__(
        self,
        client: Any,
        stream_name: str,
        *,
        consumer_name: Optional[str] = None,
        consumer_arn: Optional[str] = None,
        reregister: bool = False,
        refresh_interval_s: float = 60.0,
        config: ConsumerConfig = DEFAULT_CONFIG,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._client = client
        self.stream_name = stream_name
        self._by_arn = consumer_arn is not None
        self._reregister = reregister and not self._by_arn
        self._interval_s = refresh_interval_s
        self._config = config
        self._clock = clock
        self._sleep = sleep
        self.consumer = ensure_consumer(
            client,
            stream_name,
            consumer_name=consumer_name,
            consumer_arn=consumer_arn,
            config=config,
            clock=clock,
            sleep=sleep,
        )
        self._checked_at = clock()
        self.reregistrations = 0

    @property
    def arn(self) -> str:
        return self.consumer.arn

    def refresh(self, force: bool = False) -> Consumer:
        """Check the consumer if the interval passed (or ``force``); returns the current one."""
        if not force and self._clock() - self._checked_at < self._interval_s:
            return self.consumer
        self._checked_at = self._clock()
        found = describe_consumer(
            self._client,
            consumer_arn=self.consumer.arn,
            stream_name=self.stream_name,
            config=self._config,
        )
        if found is not None and found.status is not ConsumerStatus.DELETING:
            self.consumer = found
            return found
        if not self._reregister:
            raise consumer_error(
                f"consumer {self.consumer.name!r} was deleted under the running query "
                "(re-registering it was not asked for)",
                self.stream_name,
                self.consumer.arn,
                self._client,
                operation="DescribeStreamConsumer",
                code="ResourceNotFoundException",
            )
        log.warning(
            "consumer %s of stream %s was deleted; registering it again",
            self.consumer.name,
            self.stream_name,
        )
        self.consumer = register_consumer(
            self._client,
            self.stream_name,
            self.consumer.name,
            config=self._config,
            clock=self._clock,
            sleep=self._sleep,
        )
        self.reregistrations += 1
        return self.consumer

    def deregister(self) -> bool:
        """Deregister the consumer (on a graceful stop, when asked); never one given by ARN."""
        if self._by_arn:
            return False
        return deregister_consumer(
            self._client, self.stream_name, consumer_arn=self.consumer.arn, config=self._config
        )
