"""The PySpark surface: ``KinesisUtils.createStream`` (the builder: :mod:`.builder`).

``from kinesis_dstream import KinesisUtils, InitialPositionInStream`` replaces
``from pyspark.streaming.kinesis import ...``; arguments, defaults and constants are
PySpark 4.x's. The names here keep PySpark's camelCase; internals are PEP 8. How a
stream is wired into the StreamingContext is :mod:`.context`'s business.
"""

from __future__ import annotations

import functools
import logging
import uuid
from datetime import datetime, timedelta
from typing import Any, Callable, Optional, Union

from ..aws import AWSCredentials, resolve_region
from ..extras import require
from ..record import KinesisRecord
from ..spark_internals import batch_interval_s
from .context import create, progress
from .legacy_layout import accepts_older_layout
from .settings import (
    DEFAULT_FAILOVER_TIME_S,
    DEFAULT_MAX_BUFFER_BYTES,
    DEFAULT_MAX_BUFFER_RECORDS,
    DEFAULT_MAX_IDLE_WAIT_S,
    DEFAULT_MAX_LEASES_TO_STEAL,
    DEFAULT_MAX_RECORDS_PER_FETCH,
    DEFAULT_METRICS_INTERVAL_S,
    DEFAULT_RETAIN_S,
    StreamSettings,
    default_fetch_interval_s,
)

log = logging.getLogger(__name__)

__all__ = [
    "InitialPositionInStream",
    "KinesisInitialPositions",
    "KinesisUtils",
    "MetricsLevel",
    "SparkAWSCredentials",
    "progress",
    "utf8_decoder",
]


class InitialPositionInStream:
    """PySpark's constants, plus AT_TIMESTAMP (give ``initialTimestamp``)."""

    LATEST, TRIM_HORIZON, AT_TIMESTAMP = (0, 1, 2)


class MetricsLevel:
    DETAILED, SUMMARY, NONE = (0, 1, 2)


def utf8_decoder(s: Optional[bytes]) -> Optional[str]:
    """Decode the unicode as UTF-8 (PySpark's default decoder)."""
    if s is None:
        return None
    return s.decode("utf-8")


_POSITION_NAMES = {0: "LATEST", 1: "TRIM_HORIZON", 2: "AT_TIMESTAMP"}
_ACCEPTED_POSITIONS = (
    "InitialPositionInStream.LATEST (0), InitialPositionInStream.TRIM_HORIZON (1), "
    "InitialPositionInStream.AT_TIMESTAMP (2), 'LATEST', 'TRIM_HORIZON', 'AT_TIMESTAMP', "
    "or KinesisInitialPositions.Latest() / TrimHorizon() / AtTimestamp(datetime)"
)


class KinesisInitialPositions:
    """The Scala builder's initial positions."""

    class Latest:
        name = "LATEST"

    class TrimHorizon:
        name = "TRIM_HORIZON"

    class AtTimestamp:
        name = "AT_TIMESTAMP"

        def __init__(self, timestamp: datetime) -> None:
            if not isinstance(timestamp, datetime):
                raise TypeError(f"AtTimestamp needs a datetime, got {timestamp!r}")
            self.timestamp = timestamp


def _position(value: Any, timestamp: Optional[datetime]) -> tuple:
    """(name, timestamp) from any accepted form, or ValueError listing them."""
    if isinstance(value, KinesisInitialPositions.AtTimestamp):
        return "AT_TIMESTAMP", value.timestamp
    if isinstance(value, (KinesisInitialPositions.Latest, KinesisInitialPositions.TrimHorizon)):
        return value.name, None
    name = None
    if isinstance(value, int) and not isinstance(value, bool):
        name = _POSITION_NAMES.get(value)
    elif isinstance(value, str):
        name = value.upper() if value.upper() in _POSITION_NAMES.values() else None
    if name is None:
        raise ValueError(f"unknown initial position {value!r}; accepted: {_ACCEPTED_POSITIONS}")
    if name == "AT_TIMESTAMP" and timestamp is None:
        raise ValueError("initial position AT_TIMESTAMP needs initialTimestamp (a datetime)")
    if name != "AT_TIMESTAMP" and timestamp is not None:
        raise ValueError(f"initialTimestamp is only for AT_TIMESTAMP, not {name}")
    if timestamp is not None and not isinstance(timestamp, datetime):
        raise TypeError(f"initialTimestamp must be a datetime, got {timestamp!r}")
    return name, timestamp


def _aware(timestamp: Optional[datetime]) -> Optional[datetime]:
    if timestamp is not None and timestamp.tzinfo is None:
        return timestamp.astimezone()  # naive means local time, as datetime.timestamp() does
    return timestamp


def _decode_data(decoder: Callable[[Optional[bytes]], Any], record: KinesisRecord) -> Any:
    return decoder(record.data)


def raw_data(record: KinesisRecord) -> bytes:
    """The builder's ``build()`` handler: the payload bytes. Pickled by name."""
    return record.data


#: Its earlier name, kept so that Spark checkpoints written before the rename still load.
_raw_data = raw_data


class SparkAWSCredentials:
    """``SparkAWSCredentials.builder().basicCredentials(k, s).stsCredentials(arn, n).build()``."""

    class Builder:
        def __init__(self) -> None:
            self._basic: tuple = (None, None)
            self._sts: tuple = (None, None, None)

        def basicCredentials(self, accessKeyId: str, secretKey: str) -> SparkAWSCredentials.Builder:
            self._basic = (accessKeyId, secretKey)
            return self

        def stsCredentials(
            self,
            roleArn: str,
            sessionName: str,
            externalId: Optional[str] = None,
        ) -> SparkAWSCredentials.Builder:
            self._sts = (roleArn, sessionName, externalId)
            return self

        def build(self) -> AWSCredentials:
            return AWSCredentials(
                access_key_id=self._basic[0],
                secret_access_key=self._basic[1],
                role_arn=self._sts[0],
                role_session_name=self._sts[1],
                external_id=self._sts[2],
            )

    @staticmethod
    def builder() -> SparkAWSCredentials.Builder:
        return SparkAWSCredentials.Builder()


class KinesisUtils:
    @staticmethod
    @accepts_older_layout
    def createStream(
        ssc: Any,
        kinesisAppName: str,
        streamName: str,
        endpointUrl: str,
        regionName: str,
        initialPositionInStream: Any,
        checkpointInterval: Union[int, float],
        metricsLevel: int = MetricsLevel.DETAILED,
        storageLevel: Any = None,
        awsAccessKeyId: Optional[str] = None,
        awsSecretKey: Optional[str] = None,
        decoder: Callable[[Optional[bytes]], Any] = utf8_decoder,
        stsAssumeRoleArn: Optional[str] = None,
        stsSessionName: Optional[str] = None,
        stsExternalId: Optional[str] = None,
        *,
        initialTimestamp: Optional[datetime] = None,
        messageHandler: Optional[Callable[[KinesisRecord], Any]] = None,
        dynamoDBEndpointUrl: Optional[str] = None,
        cloudWatchEndpointUrl: Optional[str] = None,
        stsEndpointUrl: Optional[str] = None,
        failoverTimeMs: int = int(DEFAULT_FAILOVER_TIME_S * 1000),
        maxRecordsPerFetch: int = DEFAULT_MAX_RECORDS_PER_FETCH,
        fetchIntervalMs: Optional[int] = None,
        maxBufferedRecords: int = DEFAULT_MAX_BUFFER_RECORDS,
        maxBufferedBytes: int = DEFAULT_MAX_BUFFER_BYTES,
        retainTimeMs: int = int(DEFAULT_RETAIN_S * 1000),
        maxLeasesForWorker: Optional[int] = None,
        maxLeasesToStealAtOneTime: int = DEFAULT_MAX_LEASES_TO_STEAL,
        workerId: Optional[str] = None,
        metricsIntervalMs: int = int(DEFAULT_METRICS_INTERVAL_S * 1000),
        metricsSink: str = "cloudwatch",
        dropAggregatesOutsideShard: bool = False,
        shardsPerTask: Optional[int] = None,
        idleShardPollMs: int = int(DEFAULT_MAX_IDLE_WAIT_S * 1000),
        retrievalMode: str = "POLLING",
        consumerName: Optional[str] = None,
        consumerArn: Optional[str] = None,
    ) -> Any:
        """Create an input stream that pulls messages from a Kinesis stream.

        PySpark's arguments, defaults and constants; leases and checkpoints live in the
        DynamoDB table named ``kinesisAppName`` (in the KCL's format), one stream per
        application name. ``checkpointInterval`` is in seconds. Everything is validated
        before anything starts. Beyond PySpark: ``initialTimestamp`` (with
        ``InitialPositionInStream.AT_TIMESTAMP``), ``messageHandler`` (gets each
        :class:`~kinesis_dstream.KinesisRecord`; replaces ``decoder``), endpoints for
        DynamoDB, CloudWatch and STS, and tuning options. KPL user records whose hash key
        lies outside the shard's range are delivered and counted (``progress()``, the
        ``UserRecordsOutsideShard`` metric, a warning per shard per checkpoint interval);
        ``dropAggregatesOutsideShard=True`` drops their whole aggregate as the KCL does
        (for streams written only by the KPL; counted too). ``shardsPerTask`` (Databricks'
        name): shards one fetch task reads, concurrently; by default enough for at most one
        task per core, so a round of many quiet shards stays cheap. ``fetchIntervalMs``:
        fetch rounds this far apart (by default the batch interval, within 200-1000 ms),
        the last before each batch time timed to end just before it. ``idleShardPollMs``: the
        longest a shard that returned nothing while at its tip waits for its next read (the
        wait doubles per idle round up to it; the first record resets it; by default 0, and
        at or below ``fetchIntervalMs`` every round reads every shard, as the KCL reads an
        idle shard every ``idleTimeBetweenReadsInMillis``). ``retrievalMode="FANOUT"``
        (the KCL's name) reads with enhanced fan-out through the consumer ``consumerArn``,
        else found or registered by ``consumerName`` (default: ``kinesisAppName``, as the
        KCL); a round then subscribes per shard, at most once every 5 s per shard (the
        service's rule). Explicit keys are never written
        to Spark checkpoints or logs; after a restart from a checkpoint the default
        credential chain is used. PySpark 2.x-3.3's positional layout (a ``StorageLevel``
        eighth, where 3.4 put ``metricsLevel``) is recognised and read as such, with one
        warning (:mod:`.legacy_layout`).
        """
        if (awsAccessKeyId is None) != (awsSecretKey is None):
            missing = "awsAccessKeyId" if awsAccessKeyId is None else "awsSecretKey"
            raise ValueError(f"awsAccessKeyId and awsSecretKey go together: {missing} is missing")
        sts = (stsAssumeRoleArn, stsSessionName, stsExternalId)
        if any(v is not None for v in sts) and not all(v is not None for v in sts):
            raise ValueError(
                "stsAssumeRoleArn, stsSessionName and stsExternalId must all be given or "
                "all be None"
            )
        credentials = None
        if awsAccessKeyId is not None or stsAssumeRoleArn is not None:
            shared = AWSCredentials(
                access_key_id=awsAccessKeyId,
                secret_access_key=awsSecretKey,
                role_arn=stsAssumeRoleArn,
                role_session_name=stsSessionName,
                external_id=stsExternalId,
                sts_endpoint_url=stsEndpointUrl,
            )
            credentials = {"kinesis": shared, "dynamodb": shared, "cloudwatch": shared}
        transform = (
            messageHandler
            if messageHandler is not None
            else functools.partial(_decode_data, decoder)
        )
        settings = build_settings(
            ssc,
            app_name=kinesisAppName,
            stream_name=streamName,
            endpoint_url=endpointUrl,
            region_name=regionName,
            initial_position=initialPositionInStream,
            initial_timestamp=initialTimestamp,
            checkpoint_interval_s=checkpointInterval,
            metrics_level=metricsLevel,
            storage_level=storageLevel,
            transform=transform,
            dynamodb_endpoint_url=dynamoDBEndpointUrl,
            cloudwatch_endpoint_url=cloudWatchEndpointUrl,
            failover_time_s=failoverTimeMs / 1000,
            max_records_per_fetch=maxRecordsPerFetch,
            fetch_interval_s=None if fetchIntervalMs is None else fetchIntervalMs / 1000,
            max_buffer_records=maxBufferedRecords,
            max_buffer_bytes=maxBufferedBytes,
            retain_s=retainTimeMs / 1000,
            max_leases_for_worker=maxLeasesForWorker,
            max_leases_to_steal=maxLeasesToStealAtOneTime,
            worker_id=workerId,
            metrics_interval_s=metricsIntervalMs / 1000,
            metrics_sink=metricsSink,
            drop_aggregates_outside_shard=bool(dropAggregatesOutsideShard),
            shards_per_task=shardsPerTask,
            max_idle_wait_s=idleShardPollMs / 1000,
            retrieval_mode=str(retrievalMode).upper(),
            consumer_name=consumerName,
            consumer_arn=consumerArn,
            explicit_credentials=credentials is not None,
        )
        return create(ssc, settings, credentials)


def build_settings(ssc: Any, **kw: Any) -> StreamSettings:
    """Validate and build the settings; nothing starts here."""
    require("pyspark", "spark", "KinesisUtils.createStream")
    if ssc is None or not hasattr(ssc, "textFileStream"):
        raise TypeError(f"ssc must be a StreamingContext, got {ssc!r}")
    for name in ("app_name", "stream_name"):
        if not isinstance(kw[name], str) or not kw[name]:
            label = {"app_name": "kinesisAppName", "stream_name": "streamName"}[name]
            raise ValueError(f"{label} must be a non-empty string, got {kw[name]!r}")
    name, timestamp = _position(kw.pop("initial_position"), kw.pop("initial_timestamp"))
    kw["batch_interval_s"] = batch_interval_s(ssc)
    if kw.get("fetch_interval_s") is None:  # one round per batch, at most 1 s apart
        kw["fetch_interval_s"] = default_fetch_interval_s(kw["batch_interval_s"])
    interval = kw.pop("checkpoint_interval_s")
    if isinstance(interval, timedelta):
        interval = interval.total_seconds()
    if not isinstance(interval, (int, float)) or isinstance(interval, bool) or interval <= 0:
        raise ValueError(
            f"checkpointInterval must be a positive number of seconds, got {interval!r}"
        )
    if kw["metrics_level"] not in (MetricsLevel.DETAILED, MetricsLevel.SUMMARY, MetricsLevel.NONE):
        raise ValueError(
            f"unknown metricsLevel {kw['metrics_level']!r}; accepted: MetricsLevel.DETAILED (0), "
            "MetricsLevel.SUMMARY (1), MetricsLevel.NONE (2)"
        )
    from pyspark.storagelevel import StorageLevel

    if kw["storage_level"] is None:
        kw["storage_level"] = StorageLevel.MEMORY_AND_DISK_2
    if not isinstance(kw["storage_level"], StorageLevel):
        raise TypeError(
            f"storageLevel must be a pyspark StorageLevel (StorageLevel.MEMORY_AND_DISK_2 by "
            f"default), got {kw['storage_level']!r}"
        )
    if not callable(kw["transform"]):
        raise TypeError(f"decoder / messageHandler must be callable, got {kw['transform']!r}")
    endpoint = kw.pop("endpoint_url")
    region = resolve_region(kw.pop("region_name"))
    return StreamSettings(
        stream_id=uuid.uuid4().hex,
        endpoint_url=endpoint or None,
        region_name=region,
        initial_position=name,
        initial_timestamp=_aware(timestamp),
        checkpoint_interval_s=float(interval),
        **kw,
    )
