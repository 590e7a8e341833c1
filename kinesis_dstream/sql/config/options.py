"""Options of the Kinesis source and sink, under all three JVM connectors' names.

Spark hands a data source a case-insensitive dict of strings. Here it becomes one frozen
dataclass, checked as a whole before the query starts: an unknown option fails with the
list of known ones, two aliases given different values fail naming both, and every value
is parsed with its option's name in the error. An optional ``kinesis.`` prefix (the
awslabs connector's) is accepted on every name. :mod:`.option_table` says which
spellings are one option, :mod:`.option_docs` which connector documents each name and
what it does here.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Optional

from ...backoff import Backoff
from ...errors import shown
from ...retrieval.idle import DEFAULT_MAX_IDLE_WAIT_S, MAX_IDLE_WAIT_S
from ...retrieval.reader import DEFAULT_READ_BACKOFF, MAX_RECORDS_PER_CALL
from ..driver.fan_out import FanOutOptions, parse_fan_out
from ..parsing.payload import PayloadFormat
from ..parsing.registry import REGISTRY_OPTIONS, RegistrySchema
from ..positions import LATEST, Position, parse_initial_position
from .connection import Connection, OptionError, parse_connection
from .end_store_options import EndStoreOptions, end_store_options
from .option_table import NO_EFFECT, SINK_ALIASES, SOURCE_ALIASES
from .option_values import (
    bool_value,
    bytes_value,
    float_value,
    int_value,
    optional_int,
    positive_time_ms,
    time_ms,
)

__all__ = ["Connection", "OptionError", "SinkOptions", "SourceOptions", "canonical_options"]

log = logging.getLogger(__name__)

#: Kinesis' own floor: 5 GetRecords calls a second per shard.
MIN_FETCH_PERIOD_FLOOR_MS = 200.0
#: Kinesis serves at most 2 MiB/s per shard (Databricks' maxFetchRate maximum, 2.0).
MAX_FETCH_RATE_MB_S = 2.0
#: Glue's idleTimeBetweenReadsInMs default, applied when addIdleTimeBetweenReads=true.
GLUE_IDLE_TIME_MS = 1000.0

#: Options Spark itself passes to a data source's writer or reader: not ours to check.
SPARK_OPTIONS = frozenset({"checkpointlocation", "path", "queryname"})


def canonical_options(options: Mapping[str, Any], aliases: Mapping[str, tuple]) -> dict:
    """User options -> {canonical name: (spelling used, value)}; unknown/conflicts fail."""
    lookup = {alias.lower(): name for name, spellings in aliases.items() for alias in spellings}
    spelled = {alias.lower(): alias for spellings in aliases.values() for alias in spellings}
    found: dict = {}
    for given, value in options.items():
        if given.lower() in SPARK_OPTIONS:
            continue
        prefixed = given.lower().startswith("kinesis.")
        bare = given[len("kinesis.") :] if prefixed else given
        name = lookup.get(bare.lower())
        # Spark lower-cases option names: report ours in their documented spelling
        key = ("kinesis." if prefixed else "") + spelled.get(bare.lower(), bare)
        if name is None:
            known = sorted({a for spellings in aliases.values() for a in spellings}, key=str.lower)
            raise OptionError(
                f"unknown option {shown(key)}; known options (case-insensitive, optional "
                f"'kinesis.' prefix): {', '.join(known)}"
            )
        if name in found and str(found[name][1]) != str(value):
            raise OptionError(
                f"options {found[name][0]!r}={shown(found[name][1])} and {key!r}={shown(value)} "
                f"are aliases of {name} with different values; give one"
            )
        found[name] = (key, value)
    _note_no_effect(found)
    return found


_LOGGED_NO_EFFECT: set = set()


def _note_no_effect(found: dict) -> None:
    """Accepted options that cannot do anything here: one log line each, per process."""
    for name in sorted(set(found) & set(NO_EFFECT)):
        if name not in _LOGGED_NO_EFFECT:
            _LOGGED_NO_EFFECT.add(name)
            log.info(
                "option %r is accepted and has no effect here: %s", found[name][0], NO_EFFECT[name]
            )


def _one_of_times(found: dict, names: tuple) -> Optional[float]:
    """The same bound under names with different units: ms, all equal when several."""
    units = {"maxFetchDuration": 1.0, "maxFetchTimeInMs": 1.0, "maxFetchTimePerShardSec": 1000.0}
    given = {n: positive_time_ms(found, n, 0.0, units[n]) for n in names if n in found}
    if len(set(given.values())) > 1:
        spelled = ", ".join(f"{found[n][0]!r}={shown(found[n][1])}" for n in given)
        raise OptionError(f"options {spelled} bound the same read time differently; give one")
    if "maxFetchTimePerShardSec" in given and given["maxFetchTimePerShardSec"] < 10_000:
        key, value = found["maxFetchTimePerShardSec"]
        raise OptionError(f"option {key!r} must be >= 10 (seconds, as awslabs), got {shown(value)}")
    return next(iter(given.values()), None)


def _backoff(found: dict, retries: str, interval: str, max_interval: str) -> Optional[Backoff]:
    """A retry policy from a connector's retry count and intervals, if any is given."""
    if not any(n in found for n in (retries, interval, max_interval)):
        return None
    initial_ms = time_ms(found, interval, DEFAULT_READ_BACKOFF.initial_delay_s * 1000)
    max_ms = time_ms(found, max_interval, max(initial_ms, DEFAULT_READ_BACKOFF.max_delay_s * 1000))
    if max_ms < initial_ms:
        raise OptionError(
            f"option {found.get(max_interval, (max_interval,))[0]!r} ({max_ms:.0f} ms) is below "
            f"the retry interval {initial_ms:.0f} ms"
        )
    attempts = int_value(found, retries, DEFAULT_READ_BACKOFF.max_attempts - 1, 0, 100) + 1
    return Backoff(initial_ms / 1000.0, max_ms / 1000.0, max_attempts=attempts)


def _min_fetch_period_ms(found: dict) -> float:
    """Databricks' minFetchPeriod / awslabs' fetchIntervalMs, or Glue's idle time.

    Glue applies ``idleTimeBetweenReadsInMs`` (default 1000) only with
    ``addIdleTimeBetweenReads=true``; given alone it is honoured too (a gap between reads).
    """
    period = time_ms(found, "minFetchPeriod", MIN_FETCH_PERIOD_FLOOR_MS)
    source = "minFetchPeriod"
    add_idle = bool_value(found, "addIdleTimeBetweenReads", "idleTimeBetweenReadsInMs" in found)
    if add_idle:
        idle = time_ms(found, "idleTimeBetweenReadsInMs", GLUE_IDLE_TIME_MS)
        if "minFetchPeriod" in found and idle != period:
            raise OptionError(
                f"options {found['minFetchPeriod'][0]!r} and 'idleTimeBetweenReadsInMs' both "
                "set the gap between GetRecords calls differently; give one"
            )
        period, source = idle, "idleTimeBetweenReadsInMs"
    if period < MIN_FETCH_PERIOD_FLOOR_MS:
        key, value = found.get(source, (source, period))
        raise OptionError(
            f"option {key!r}={shown(value)} is below {MIN_FETCH_PERIOD_FLOOR_MS:.0f} ms (Kinesis "
            "allows 5 GetRecords a second per shard)"
        )
    return period


def _idle_shard_poll_ms(found: dict) -> float:
    value = time_ms(found, "idleShardPollMs", DEFAULT_MAX_IDLE_WAIT_S * 1000)
    if not 0 <= value <= MAX_IDLE_WAIT_S * 1000:
        key, given = found["idleShardPollMs"]
        raise OptionError(
            f"option {key!r}={shown(given)} must be in [0, {MAX_IDLE_WAIT_S * 1000:.0f}] ms "
            "(shard iterators expire after 5 minutes)"
        )
    return value


@dataclass(frozen=True)
class SourceOptions:
    """Every source knob, defaults declared once; units in the names."""

    connection: Connection
    initial_position: Position = LATEST
    max_records_per_fetch: int = MAX_RECORDS_PER_CALL
    max_fetch_records_per_shard: int = 100_000
    max_records_per_batch: Optional[int] = None
    min_fetch_period_ms: float = MIN_FETCH_PERIOD_FLOOR_MS
    describe_shard_interval_ms: float = 1000.0
    fail_on_data_loss: bool = False
    end_store: EndStoreOptions = field(default_factory=EndStoreOptions)
    #: The KCL's drop of KPL aggregates holding a user record outside the shard's range.
    drop_aggregates_outside_shard: bool = False
    #: The longest an idle shard (its peek found nothing, at its tip) goes unpeeked.
    idle_shard_poll_ms: float = DEFAULT_MAX_IDLE_WAIT_S * 1000
    #: Databricks' maxFetchRate: bytes a second one range read may take from its shard.
    max_fetch_rate_mb_s: Optional[float] = None
    #: maxFetchDuration / maxFetchTimeInMs / maxFetchTimePerShardSec: a range read's time.
    max_fetch_time_ms: Optional[float] = None
    #: Databricks' fetchBufferSize: data bytes one micro-batch reads, shared by its ranges.
    fetch_buffer_bytes: Optional[int] = None
    #: Databricks' shardsPerTask: shard ranges one read task reads, concurrently (None:
    #: ranges of shards near their tip grouped, see sql.group).
    shards_per_task: Optional[int] = None
    #: Databricks' maxShardsPerDescribe: ListShards page size (None: the service's).
    max_shards_per_describe: Optional[int] = None
    #: client retries (awslabs clientNumRetries..., Glue numRetries...): None = defaults.
    client_backoff: Optional[Backoff] = None
    #: awslabs' minBatchesToRetain: committed batches whose range ends are kept.
    min_batches_to_retain: int = 2
    #: awslabs' checkNewRecordThreads: driver threads peeking for new records.
    check_new_record_threads: int = 8
    #: Glue: a __src_timestamp column; the consumer-lag CloudWatch metric.
    add_record_timestamp: bool = False
    emit_consumer_lag_metrics: bool = False
    #: Glue's payload parsing (classification and its schema): None, the record columns.
    payload: Optional[PayloadFormat] = None
    #: Enhanced fan-out (SubscribeToShard) settings; None: GetRecords (polling).
    fan_out: Optional[FanOutOptions] = None

    @classmethod
    def parse(cls, options: Mapping[str, Any]) -> SourceOptions:
        found = canonical_options(options, SOURCE_ALIASES)
        connection = parse_connection(found)
        position: Position = LATEST
        if "initialPosition" in found:
            key, value = found["initialPosition"]
            position = parse_initial_position(str(value), f"option {key!r}")
        per_batch = None
        if "maxRecordsPerBatch" in found:
            per_batch = int_value(found, "maxRecordsPerBatch", 0, 1)
        max_rate = float_value(found, "maxFetchRate", 0.0, MAX_FETCH_RATE_MB_S)
        describe = None
        if "maxShardsPerDescribe" in found:
            describe = int_value(found, "maxShardsPerDescribe", 100, 1, 10_000)
        return cls(
            connection=connection,
            initial_position=position,
            max_records_per_fetch=int_value(
                found, "maxRecordsPerFetch", MAX_RECORDS_PER_CALL, 1, MAX_RECORDS_PER_CALL
            ),
            max_fetch_records_per_shard=int_value(found, "maxFetchRecordsPerShard", 100_000, 1),
            max_records_per_batch=per_batch,
            min_fetch_period_ms=_min_fetch_period_ms(found),
            describe_shard_interval_ms=positive_time_ms(found, "describeShardInterval", 1000.0),
            fail_on_data_loss=bool_value(found, "failOnDataLoss", False),
            end_store=end_store_options(
                found,
                _backoff(
                    found,
                    "metadataNumRetries",
                    "metadataRetryIntervalsMs",
                    "metadataMaxRetryIntervalMs",
                ),
            ),
            drop_aggregates_outside_shard=bool_value(found, "dropAggregatesOutsideShard", False),
            idle_shard_poll_ms=_idle_shard_poll_ms(found),
            max_fetch_rate_mb_s=max_rate,
            max_fetch_time_ms=_one_of_times(
                found, ("maxFetchDuration", "maxFetchTimeInMs", "maxFetchTimePerShardSec")
            ),
            fetch_buffer_bytes=bytes_value(found, "fetchBufferSize"),
            shards_per_task=(
                int_value(found, "shardsPerTask", 1, 1, 1000) if "shardsPerTask" in found else None
            ),
            max_shards_per_describe=describe,
            client_backoff=_backoff(found, "numRetries", "retryIntervalMs", "maxRetryIntervalMs"),
            min_batches_to_retain=int_value(found, "minBatchesToRetain", 2, 1),
            check_new_record_threads=int_value(found, "checkNewRecordThreads", 8, 1, 256),
            add_record_timestamp=bool_value(found, "addRecordTimestamp", False),
            emit_consumer_lag_metrics=bool_value(found, "emitConsumerLagMetrics", False),
            payload=_payload(found),
            fan_out=parse_fan_out(found, len(connection.stream_names)),
        )

    def for_stream(self, stream_name: str) -> SourceOptions:
        """These options for one of the query's streams."""
        from dataclasses import replace

        return replace(self, connection=self.connection.for_stream(stream_name))


def _payload(found: dict) -> Optional[PayloadFormat]:
    """Glue's payload parsing (classification, schema, inferSchema, delimiter, avroSchema,
    grokPattern, grokCustomPatterns, the registry's schema)."""
    names = (
        "schema", "inferSchema", "delimiter", "avroSchema", "grokPattern",
        "grokCustomPatterns", *REGISTRY_OPTIONS,
    )  # fmt: skip
    if "classification" not in found:
        given = [found[n][0] for n in names if n in found]
        if given:
            raise OptionError(
                f"option(s) {given} need option 'classification' (json, csv, avro, grok)"
            )
        return None

    def get(name: str) -> Optional[str]:
        return str(found[name][1]) if name in found else None

    try:
        return PayloadFormat.parse(
            get("classification"),
            get("schema"),
            get("delimiter"),
            get("inferSchema") or False,
            get("avroSchema"),
            get("grokPattern"),
            get("grokCustomPatterns"),
            RegistrySchema.parse(get),
        )
    except ValueError as exc:
        raise OptionError(str(exc)) from None


@dataclass(frozen=True)
class SinkOptions:
    """The sink's knobs: awslabs' ``sink.*`` and Glue's write options."""

    connection: Connection
    aggregation_enabled: bool = False
    #: Glue's partitionKey: a column of the input by that name, else a fixed key.
    partition_key: Optional[str] = None
    record_max_buffered_time_ms: Optional[float] = None
    aggregation_max_bytes: Optional[int] = None
    aggregation_max_count: Optional[int] = None
    collection_max_count: Optional[int] = None
    collection_max_bytes: Optional[int] = None
    #: Glue's producerRateLimit: per-shard rate as a percent of the shard's write limit.
    producer_rate_limit_percent: Optional[int] = None
    #: awslabs' recordTtl: a record not written within it fails the batch (never dropped).
    record_ttl_ms: Optional[float] = None

    @classmethod
    def parse(cls, options: Mapping[str, Any]) -> SinkOptions:
        found = canonical_options(options, SINK_ALIASES)
        connection = parse_connection(found)
        if len(connection.stream_names) > 1:
            raise OptionError(f"the Kinesis sink writes to one stream, got {connection.where}")
        key = found["partitionKey"][1] if "partitionKey" in found else None
        return cls(
            connection,
            bool_value(found, "aggregationEnabled", False),
            partition_key=str(key) if key is not None else None,
            record_max_buffered_time_ms=(
                positive_time_ms(found, "recordMaxBufferedTime", 0.0)
                if "recordMaxBufferedTime" in found
                else None
            ),
            aggregation_max_bytes=optional_int(found, "aggregationMaxSize", 64, 1024 * 1024),
            aggregation_max_count=optional_int(found, "aggregationMaxCount", 1, 2**32 - 1),
            collection_max_count=optional_int(found, "collectionMaxCount", 1, 500),
            collection_max_bytes=optional_int(
                found, "collectionMaxSize", 1024 * 1024, 5 * 1024 * 1024
            ),
            producer_rate_limit_percent=optional_int(found, "producerRateLimit", 1, 10_000),
            record_ttl_ms=(
                positive_time_ms(found, "recordTtl", 0.0) if "recordTtl" in found else None
            ),
        )
