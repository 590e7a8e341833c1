"""Every option the three connectors' documents name is accepted with a documented value.

The tables below are the seeds' option tables (../shared/seeds: Databricks' Kinesis
source, the awslabs aws-kinesis connector, AWS Glue's Kinesis connection), each name with
a value its document gives (the default, or an example). When the seeds are beside the
checkout, a test also reads them and checks that these tables miss no name.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kinesis_dstream.sql.config.options import OptionError, SinkOptions, SourceOptions

ROLE = "arn:aws:iam::123456789012:role/r"
ARN = "arn:aws:kinesis:us-east-1:123456789012:stream/s"
BASE = {"streamName": "s", "region": "us-east-1"}

#: name -> (a documented value, other options it needs)
DATABRICKS_SOURCE = {
    "streamName": ("s1,s2", {}),
    "region": ("us-east-1", {}),
    "endpoint": ("https://kinesis.us-east-1.amazonaws.com", {}),
    "initialPosition": ('{"at_timestamp": "06/25/2020 10:23:45 PDT"}', {}),
    "maxRecordsPerFetch": ("10000", {}),
    "maxFetchRate": ("1.0", {}),
    "minFetchPeriod": ("400ms", {}),
    "maxFetchDuration": ("10s", {}),
    "fetchBufferSize": ("20gb", {}),
    "shardsPerTask": ("5", {}),
    "shardFetchInterval": ("1s", {}),
    "awsAccessKey": ("AK", {"awsSecretKey": "SK"}),
    "awsSecretKey": ("SK", {"awsAccessKey": "AK"}),
    "roleArn": (ROLE, {}),
    "roleExternalId": ("ext", {"roleArn": ROLE}),
    "roleSessionName": ("session", {"roleArn": ROLE}),
    "coalesceThresholdBlockSize": ("10000000", {}),
    "coalesceBinSize": ("128000000", {}),
    "consumerMode": ("polling", {}),
    "requireConsumerDeregistration": ("false", {}),
    "maxShardsPerDescribe": ("100", {}),
    "consumerName": ("my-query", {}),
    "consumerNamePrefix": ("databricks_", {}),
    "consumerRefreshInterval": ("300s", {}),
}
AWSLABS_SOURCE = {
    "kinesis.endpointUrl": ("https://kinesis.us-east-1.amazonaws.com", {}),
    "kinesis.region": ("us-east-2", {}),
    "kinesis.streamName": ("teststream", {}),
    "kinesis.consumerType": ("GetRecords", {}),
    "kinesis.failOnDataLoss": ("false", {}),
    "kinesis.maxFetchRecordsPerShard": ("100000", {}),
    "kinesis.maxFetchTimePerShardSec": ("10", {}),
    "kinesis.startingPosition": ("AT_TIMESTAMP 2023-08-30T19:00:05Z", {}),
    "kinesis.describeShardInterval": ("1s", {}),
    "kinesis.minBatchesToRetain": ("100", {}),
    "kinesis.checkNewRecordThreads": ("8", {}),
    "kinesis.metadataCommitterType": ("HDFS", {}),
    "kinesis.metadataPath": ("/tmp/kinesis-metadata", {}),
    "kinesis.metadataNumRetries": ("5", {}),
    "kinesis.metadataRetryIntervalsMs": ("1000", {}),
    "kinesis.metadataMaxRetryIntervalMs": ("10000", {}),
    "kinesis.clientNumRetries": ("5", {}),
    "kinesis.clientRetryIntervalsMs": ("1000", {}),
    "kinesis.clientMaxRetryIntervalMs": ("10000", {}),
    "kinesis.consumerName": ("TestConsumer", {}),
    "kinesis.stsRoleArn": (ROLE, {}),
    "kinesis.stsSessionName": ("StsSessionName", {"kinesis.stsRoleArn": ROLE}),
    "kinesis.stsEndpointUrl": ("https://sts.us-east-1.amazonaws.com", {"stsRoleArn": ROLE}),
    "kinesis.awsAccessKeyId": ("awsAccessKeyId", {"kinesis.awsSecretKey": "awsSecretKey"}),
    "kinesis.awsSecretKey": ("awsSecretKey", {"kinesis.awsAccessKeyId": "awsAccessKeyId"}),
    "kinesis.kinesisRegion": ("us-east-2", {}),
    "kinesis.credentialProviderClass": ("tests.support.credentials_provider.StaticProvider", {}),
    "kinesis.credentialProviderParam": (
        "AKEXAMPLE",
        {"kinesis.credentialProviderClass": "tests.support.credentials_provider.StaticProvider"},
    ),
    "kinesis.dynamodb.tableName": (
        "kinesisTestMetadata",
        {"kinesis.metadataCommitterType": "DYNAMODB"},
    ),
    "kinesis.subscribeToShard.timeoutSec": ("60", {}),
    "kinesis.subscribeToShard.maxRetries": ("10", {}),
    "kinesis.getRecords.numberOfRecordsPerFetch": ("10000", {}),
    "kinesis.getRecords.fetchIntervalMs": ("200", {}),
}
AWSLABS_SINK = {
    "kinesis.endpointUrl": ("https://kinesis.us-east-1.amazonaws.com", {}),
    "kinesis.region": ("us-east-1", {}),
    "kinesis.streamName": ("sparkSinkTest", {}),
    "kinesis.sink.flushWaitTimeMs": ("100", {}),
    "kinesis.sink.recordMaxBufferedTimeMs": ("1000", {}),
    "kinesis.sink.maxConnections": ("1", {}),
    "kinesis.sink.aggregationEnabled": ("True", {}),
    "kinesis.sink.recordTtl": ("30000", {}),
}
GLUE_SOURCE = {
    "streamARN": (ARN, {}),
    "classification": ("json", {"inferSchema": "true"}),
    "streamName": ("s", {"endpointUrl": "https://kinesis.us-east-1.amazonaws.com"}),
    "endpointUrl": ("https://kinesis.us-east-1.amazonaws.com", {}),
    "delimiter": (",", {"classification": "csv", "inferSchema": "true"}),
    "startingPosition": ("2023-04-04T08:00:00-04:00", {}),
    "failOnDataLoss": ("false", {}),
    "awsSTSRoleARN": (ROLE, {}),
    "awsSTSSessionName": ("optional-session", {"awsSTSRoleARN": ROLE}),
    "awsSTSEndpoint": ("https://sts.us-east-1.amazonaws.com", {"awsSTSRoleARN": ROLE}),
    "maxFetchTimeInMs": ("1000", {}),
    "maxFetchRecordsPerShard": ("100000", {}),
    "maxRecordPerRead": ("10000", {}),
    "addIdleTimeBetweenReads": ("False", {}),
    "idleTimeBetweenReadsInMs": ("1000", {"addIdleTimeBetweenReads": "true"}),
    "describeShardInterval": ("1s", {}),
    "numRetries": ("3", {}),
    "retryIntervalMs": ("1000", {}),
    "maxRetryIntervalMs": ("10000", {}),
    "avoidEmptyBatches": ("False", {}),
    "schema": ("`column1` INT, `column2` STRING , `column3` FLOAT", {"classification": "json"}),
    "inferSchema": ("true", {"classification": "json"}),
    "avroSchema": (
        '{"type": "record", "name": "r", "fields": [{"name": "a", "type": "string"}]}',
        {"classification": "avro"},
    ),
    "addRecordTimestamp": ("true", {}),
    "emitConsumerLagMetrics": ("true", {}),
}
GLUE_SINK = {
    "streamARN": (ARN, {}),
    "partitionKey": ("key", {}),
    "recordMaxBufferedTime": ("1000", {}),
    "aggregationEnabled": ("true", {}),
    "aggregationMaxSize": ("51200", {}),
    "aggregationMaxCount": ("4294967295", {}),
    "producerRateLimit": ("150", {}),
    "collectionMaxCount": ("500", {}),
    "collectionMaxSize": ("5242880", {}),
}
#: Enhanced fan-out: values that ask for it.
FAN_OUT = {
    "consumerMode": "efo",
    "kinesis.consumerType": "SubscribeToShard",
    "fanoutConsumerARN": "arn:aws:kinesis:us-east-1:123456789012:stream/s/consumer/c:1",
}


def _base_for(name: str, sink: bool) -> dict:
    bare = name.lower().replace("kinesis.", "")
    if bare in ("streamname", "streamarn"):
        return {"region": "us-east-1"} if "arn" not in bare else {}
    if bare in ("region", "kinesisregion"):
        return {"streamName": "s"}
    return dict(BASE)


def _cases(table: dict, sink: bool) -> list:
    return [
        pytest.param(name, value, needs, sink, id=name) for name, (value, needs) in table.items()
    ]


@pytest.mark.parametrize(
    "name, value, needs, sink",
    _cases(DATABRICKS_SOURCE, False)
    + _cases(AWSLABS_SOURCE, False)
    + _cases(GLUE_SOURCE, False)
    + _cases(AWSLABS_SINK, True)
    + _cases(GLUE_SINK, True),
)
def test_every_documented_option_is_accepted(name, value, needs, sink):
    options = {**_base_for(name, sink), **needs, name: value}
    if "streamARN" in options or "kinesis.streamName" in options:
        options.pop("streamName", None)
    parsed = (SinkOptions if sink else SourceOptions).parse(options)
    assert parsed.connection.stream_names


@pytest.mark.parametrize("name, value", FAN_OUT.items())
def test_fan_out_values_turn_on_subscribe_to_shard(name, value):
    options = SourceOptions.parse({**BASE, name: value})
    assert options.fan_out is not None
    assert options.fan_out.consumer_arn == (value if name == "fanoutConsumerARN" else None)


def test_fan_out_options_mean_what_they_say():
    databricks = SourceOptions.parse(
        {
            "streamName": "a,b",
            "region": "us-east-1",
            "consumerMode": "efo",
            "consumerName": "ca,cb",
            "requireConsumerDeregistration": "true",
            "consumerRefreshInterval": "10s",
        }
    ).fan_out
    assert databricks.consumer_names == ("ca", "cb") and databricks.require_deregistration
    assert databricks.refresh_interval_ms == 10_000
    assert SourceOptions.parse({**BASE, "consumerMode": "efo"}).fan_out.name_for(0, "q1") == (
        "kinesis_dstream_q1"
    )
    prefixed = SourceOptions.parse(
        {**BASE, "consumerMode": "efo", "consumerNamePrefix": "databricks_"}
    ).fan_out
    assert prefixed.name_for(0, "q1") == "databricks_q1"
    awslabs = SourceOptions.parse(
        {
            **BASE,
            "kinesis.consumerType": "SubscribeToShard",
            "kinesis.consumerName": "TestConsumer",
            "kinesis.subscribeToShard.timeoutSec": "30",
            "kinesis.subscribeToShard.maxRetries": "4",
        }
    ).fan_out
    assert awslabs.name_for(0, "q") == "TestConsumer"
    assert (awslabs.subscribe.subscribe_timeout_s, awslabs.subscribe.subscribe_max_retries) == (
        30.0,
        4,
    )
    assert SourceOptions.parse({**BASE, "consumerMode": "polling"}).fan_out is None
    for bad, words in (
        ({"consumerMode": "efo", "consumerType": "GetRecords"}, "disagree"),
        ({"streamName": "a,b", "consumerMode": "efo", "consumerName": "x,y,z"}, "one per stream"),
        ({"consumerMode": "efo", "consumerRefreshInterval": "2h"}, "3600s"),
    ):
        with pytest.raises(OptionError, match=words):
            SourceOptions.parse({**BASE, **bad})


def test_an_unknown_name_still_fails_listing_the_known_ones():
    with pytest.raises(OptionError) as info:
        SourceOptions.parse({**BASE, "maxFetchRates": "1.0"})
    message = str(info.value)
    assert "unknown option 'maxFetchRates'" in message
    for known in ("maxFetchRate", "shardsPerTask", "maxFetchTimeInMs", "classification"):
        assert known in message
    with pytest.raises(OptionError, match="unknown option 'initialPosition'"):
        SinkOptions.parse({**BASE, "initialPosition": "latest"})


def test_documented_values_mean_what_they_say():
    databricks = SourceOptions.parse(
        {
            "streamName": "a, b ,c",
            "region": "us-east-1",
            "maxFetchRate": "1.5",
            "maxFetchDuration": "10s",
            "fetchBufferSize": "20gb",
            "shardsPerTask": "5",
            "maxShardsPerDescribe": "50",
        }
    )
    assert databricks.connection.stream_names == ("a", "b", "c")
    assert databricks.max_fetch_rate_mb_s == 1.5
    assert databricks.max_fetch_time_ms == 10_000
    assert databricks.fetch_buffer_bytes == 20 * 1024**3
    assert databricks.shards_per_task == 5 and databricks.max_shards_per_describe == 50
    awslabs = SourceOptions.parse(
        {
            **BASE,
            "kinesis.maxFetchTimePerShardSec": "15",
            "kinesis.clientNumRetries": "5",
            "kinesis.clientRetryIntervalsMs": "1000",
            "kinesis.clientMaxRetryIntervalMs": "10000",
            "kinesis.minBatchesToRetain": "7",
            "kinesis.checkNewRecordThreads": "3",
            "kinesis.metadataNumRetries": "2",
        }
    )
    assert awslabs.max_fetch_time_ms == 15_000
    backoff = awslabs.client_backoff
    assert (backoff.max_attempts, backoff.initial_delay_s, backoff.max_delay_s) == (6, 1.0, 10.0)
    assert awslabs.min_batches_to_retain == 7 and awslabs.check_new_record_threads == 3
    assert awslabs.end_store.backoff.max_attempts == 3
    glue = SourceOptions.parse(
        {
            "streamARN": ARN,
            "maxFetchTimeInMs": "1500",
            "addIdleTimeBetweenReads": "true",
            "numRetries": "3",
            "addRecordTimestamp": "true",
            "emitConsumerLagMetrics": "true",
        }
    )
    assert glue.max_fetch_time_ms == 1500 and glue.min_fetch_period_ms == 1000  # Glue default
    assert glue.client_backoff.max_attempts == 4
    assert glue.add_record_timestamp and glue.emit_consumer_lag_metrics
    sink = SinkOptions.parse(
        {
            "streamARN": ARN,
            "partitionKey": "user",
            "recordMaxBufferedTime": "250",
            "aggregationMaxCount": "10",
            "collectionMaxCount": "100",
            "producerRateLimit": "50",
            "kinesis.sink.recordTtl": "30000",
        }
    )
    assert sink.partition_key == "user" and sink.record_max_buffered_time_ms == 250
    assert sink.aggregation_max_count == 10 and sink.collection_max_count == 100
    assert sink.producer_rate_limit_percent == 50 and sink.record_ttl_ms == 30_000


@pytest.mark.parametrize(
    "options, words",
    [
        ({"maxFetchRate": "2.5"}, ["'maxFetchRate'", "(0.0, 2.0]"]),
        ({"kinesis.maxFetchTimePerShardSec": "5"}, ["maxFetchTimePerShardSec", ">= 10"]),
        (
            {"maxFetchDuration": "10s", "maxFetchTimeInMs": "2000"},
            ["'maxFetchDuration'='10s'", "'maxFetchTimeInMs'='2000'"],
        ),
        ({"fetchBufferSize": "lots"}, ["'fetchBufferSize'", "not a size"]),
        ({"maxShardsPerDescribe": "20000"}, ["'maxShardsPerDescribe'", "[1, 10000]"]),
        ({"streamName": "a,,b"}, ["'streamName'", "not a stream name"]),
        ({"streamName": "a,a"}, ["names a stream twice"]),
        ({"addIdleTimeBetweenReads": "true", "idleTimeBetweenReadsInMs": "100"}, ["200 ms"]),
        ({"consumerMode": "push"}, ["polling or efo"]),
        ({"credentialProviderClass": "com.example.Provider"}, ["cannot import", "Provider"]),
        # a relative module path (importlib raised a TypeError)
        ({"credentialProviderClass": ".x.Provider"}, ["'.x.Provider' is not a Python class path"]),
        ({"credentialProviderParam": "x"}, ["needs 'credentialProviderClass'"]),
        ({"clientRetryIntervalsMs": "5000", "clientMaxRetryIntervalMs": "1000"}, ["below"]),
    ],
)
def test_bad_values_fail_naming_the_option(options, words):
    with pytest.raises(ValueError) as info:
        SourceOptions.parse({**BASE, **options})
    for word in words:
        assert word in str(info.value)


SEEDS = Path(__file__).resolve().parents[3] / "shared" / "seeds"


def _seed(prefix: str) -> str:
    [path] = SEEDS.glob(f"{prefix}_*.txt")
    return path.read_text(encoding="utf-8")


@pytest.mark.skipif(not SEEDS.is_dir(), reason="the seeds are not beside this checkout")
def test_the_tables_above_miss_no_name_the_seeds_document():
    glue = set(re.findall(r'^\s*•\s*"([A-Za-z.]+)"', _seed("000"), re.M))
    ours_glue = set(GLUE_SOURCE) | set(GLUE_SINK) | {"fanoutConsumerARN"}
    assert glue and glue - ours_glue == set()
    awslabs = {"kinesis." + n for n in re.findall(r"^kinesis\.([A-Za-z.]+) ", _seed("002"), re.M)}
    ours_awslabs = set(AWSLABS_SOURCE) | set(AWSLABS_SINK)
    assert awslabs and awslabs - ours_awslabs == set()
    databricks_text = _seed("003")
    table = databricks_text[
        databricks_text.index("Option\n") : databricks_text.index("Note\n\nThe default")
    ]
    names = set(re.findall(r"^([a-z][A-Za-z]+)\n\n", table, re.M)) - {
        "String",
        "true",
        "false",
        "latest",
        "polling",
    }
    assert names and names - set(DATABRICKS_SOURCE) == set()
