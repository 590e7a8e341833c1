"""``KinesisInputDStream.builder()``: the Scala builder's methods, in Python.

Each method records one value; ``build()`` validates them all through the same
:func:`~.api.build_settings` as ``KinesisUtils.createStream``, so the two surfaces take
the same options with the same defaults.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Callable, Union

from ..aws import AWSCredentials
from ..record import KinesisRecord
from ..spark_internals import batch_interval_s
from .api import InitialPositionInStream, MetricsLevel, build_settings, raw_data
from .context import create

__all__ = ["KinesisInputDStream"]


class KinesisInputDStream:
    """``KinesisInputDStream.builder()``: the Scala builder's methods, in Python."""

    @staticmethod
    def builder() -> _Builder:
        return _Builder()


class _Builder:
    def __init__(self) -> None:
        self._values: dict = {}
        self._credentials: dict = {}

    def _set(self, key: str, value: Any) -> _Builder:
        self._values[key] = value
        return self

    def streamingContext(self, ssc: Any) -> _Builder:
        return self._set("ssc", ssc)

    def streamName(self, name: str) -> _Builder:
        return self._set("stream_name", name)

    def checkpointAppName(self, name: str) -> _Builder:
        return self._set("app_name", name)

    def endpointUrl(self, url: str) -> _Builder:
        return self._set("endpoint_url", url)

    def regionName(self, region: str) -> _Builder:
        return self._set("region_name", region)

    def initialPosition(self, position: Any) -> _Builder:
        return self._set("initial_position", position)

    def checkpointInterval(self, interval: Union[int, float, timedelta]) -> _Builder:
        return self._set("checkpoint_interval_s", interval)

    def storageLevel(self, level: Any) -> _Builder:
        return self._set("storage_level", level)

    def kinesisCredentials(self, credentials: AWSCredentials) -> _Builder:
        self._credentials["kinesis"] = credentials
        return self

    def dynamoDBCredentials(self, credentials: AWSCredentials) -> _Builder:
        self._credentials["dynamodb"] = credentials
        return self

    def cloudWatchCredentials(self, credentials: AWSCredentials) -> _Builder:
        self._credentials["cloudwatch"] = credentials
        return self

    def metricsLevel(self, level: int) -> _Builder:
        return self._set("metrics_level", level)

    def metricsEnabledDimensions(self, dimensions: Any) -> _Builder:
        return self._set("metrics_dimensions", frozenset(dimensions))

    def dynamoDBEndpointUrl(self, url: str) -> _Builder:
        return self._set("dynamodb_endpoint_url", url)

    def cloudWatchEndpointUrl(self, url: str) -> _Builder:
        return self._set("cloudwatch_endpoint_url", url)

    def shardsPerTask(self, shards: int) -> _Builder:
        """Shards one fetch task reads, concurrently (default: one task per core at most)."""
        return self._set("shards_per_task", shards)

    def dropAggregatesOutsideShard(self, drop: bool = True) -> _Builder:
        """The KCL's rule: drop KPL aggregates holding a user record outside the shard's
        hash range (counted). Without it such records are delivered and counted."""
        return self._set("drop_aggregates_outside_shard", bool(drop))

    def idleShardPollMs(self, millis: int) -> _Builder:
        """The longest an idle shard (nothing read, at its tip) waits for its next read."""
        return self._set("max_idle_wait_s", millis / 1000)

    def retrievalMode(self, mode: str) -> _Builder:
        """The KCL's retrievalMode: ``"POLLING"`` (GetRecords, the default) or ``"FANOUT"``
        (enhanced fan-out, SubscribeToShard)."""
        return self._set("retrieval_mode", str(mode).upper())

    def consumerName(self, name: str) -> _Builder:
        """FANOUT's consumer, found or registered by name (default: the application name)."""
        return self._set("consumer_name", name)

    def consumerArn(self, arn: str) -> _Builder:
        """FANOUT's consumer by ARN: used as it is, never registered."""
        return self._set("consumer_arn", arn)

    def build(self) -> Any:
        """A DStream of each record's data (bytes), as the Scala builder's ``build()``."""
        return self._build(raw_data)

    def buildWithMessageHandler(self, handler: Callable[[KinesisRecord], Any]) -> Any:
        """A DStream of ``handler(record)`` for each :class:`~kinesis_dstream.KinesisRecord`."""
        return self._build(handler)

    def _build(self, transform: Callable[[KinesisRecord], Any]) -> Any:
        values = dict(self._values)
        for key, method in (
            ("ssc", "streamingContext"),
            ("stream_name", "streamName"),
            ("app_name", "checkpointAppName"),
        ):
            if key not in values:
                raise ValueError(f"KinesisInputDStream.builder(): {method}(...) is required")
        ssc = values.pop("ssc")
        if "checkpoint_interval_s" not in values:  # the Scala default: the batch interval
            values["checkpoint_interval_s"] = batch_interval_s(ssc)
        kinesis = self._credentials.get("kinesis")
        credentials = None
        if self._credentials:
            credentials = {
                "kinesis": kinesis,
                "dynamodb": self._credentials.get("dynamodb", kinesis),
                "cloudwatch": self._credentials.get("cloudwatch", kinesis),
            }
        metrics_dimensions = values.pop("metrics_dimensions", frozenset())
        settings = build_settings(
            ssc,
            app_name=values.pop("app_name"),
            stream_name=values.pop("stream_name"),
            endpoint_url=values.pop("endpoint_url", None),
            region_name=values.pop("region_name", None),
            initial_position=values.pop("initial_position", InitialPositionInStream.LATEST),
            initial_timestamp=None,
            checkpoint_interval_s=values.pop("checkpoint_interval_s"),
            metrics_level=values.pop("metrics_level", MetricsLevel.DETAILED),
            storage_level=values.pop("storage_level", None),
            transform=transform,
            metrics_dimensions=metrics_dimensions,
            explicit_credentials=credentials is not None,
            **values,
        )
        return create(ssc, settings, credentials)
