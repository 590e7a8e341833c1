"""Metrics at each level against moto's CloudWatch; progress without CloudWatch."""

import logging
import time

import pytest
from pyspark.streaming import StreamingContext

from kinesis_dstream import InitialPositionInStream, KinesisUtils, MetricsLevel
from kinesis_dstream.aws import create_client
from kinesis_dstream.metrics import (
    DETAILED,
    NONE,
    SUMMARY,
    CloudWatchMetrics,
    LogMetrics,
    NullMetrics,
)
from kinesis_dstream.retrieval.streams import ensure_stream

from ..support.streaming import Collected, progress_of
from ..support.waiting import wait_until
from .test_dstream import put


@pytest.fixture
def cloudwatch(local_aws):
    return local_aws.client("cloudwatch")


def published(cloudwatch, namespace):
    """{metric name: [dimension dicts]} in the namespace."""
    found: dict = {}
    for metric in cloudwatch.list_metrics(Namespace=namespace)["Metrics"]:
        dims = {d["Name"]: d["Value"] for d in metric["Dimensions"]}
        found.setdefault(metric["MetricName"], []).append(dims)
    return found


def fill(metrics):
    for shard in ("shardId-000000000000", "shardId-000000000001"):
        metrics.add("RecordsProcessed", 10, "Count", "ProcessTask", shard)
        metrics.add("RecordsProcessed", 5, "Count", "ProcessTask", shard)
        metrics.add("MillisBehindLatest", 300, "Milliseconds", "ProcessTask", shard)
    metrics.add("CurrentLeases", 2, "Count", "LeaseCoordinator")


def total(cloudwatch, namespace, name, dims):
    stats = cloudwatch.get_metric_statistics(
        Namespace=namespace,
        MetricName=name,
        Dimensions=[{"Name": k, "Value": v} for k, v in dims.items()],
        StartTime=time.time() - 600,
        EndTime=time.time() + 600,
        Period=60,
        Statistics=["Sum", "SampleCount", "Maximum"],
    )["Datapoints"]
    return sum(p["Sum"] for p in stats), sum(p["SampleCount"] for p in stats)


def test_detailed_adds_the_shard_dimension(cloudwatch, unique_name):
    metrics = CloudWatchMetrics(cloudwatch, unique_name, level=DETAILED)
    fill(metrics)
    assert metrics.publish() == 5
    found = published(cloudwatch, unique_name)
    assert sorted(d["ShardId"] for d in found["RecordsProcessed"]) == [
        "shardId-000000000000",
        "shardId-000000000001",
    ]
    assert found["CurrentLeases"] == [{"Operation": "LeaseCoordinator"}]
    shard0 = {"Operation": "ProcessTask", "ShardId": "shardId-000000000000"}
    assert total(cloudwatch, unique_name, "RecordsProcessed", shard0) == (15, 2)
    assert metrics.calls == 1


def test_summary_aggregates_per_receiver_and_none_publishes_nothing(cloudwatch, unique_name):
    summary = CloudWatchMetrics(cloudwatch, f"{unique_name}-s", level=SUMMARY)
    fill(summary)
    summary.publish()
    found = published(cloudwatch, f"{unique_name}-s")
    assert found["RecordsProcessed"] == [{"Operation": "ProcessTask"}]
    assert total(
        cloudwatch, f"{unique_name}-s", "RecordsProcessed", {"Operation": "ProcessTask"}
    ) == (30, 4)
    none = CloudWatchMetrics(cloudwatch, f"{unique_name}-n", level=NONE)
    fill(none)
    assert none.publish() == 0 and none.calls == 0
    assert published(cloudwatch, f"{unique_name}-n") == {}
    null = NullMetrics()
    fill(null)
    assert null.publish() == 0


def test_enabled_dimensions_limit_detailed_and_can_add_the_worker(cloudwatch, unique_name):
    metrics = CloudWatchMetrics(
        cloudwatch,
        unique_name,
        level=DETAILED,
        dimensions=frozenset({"Operation", "WorkerIdentifier"}),
        worker_id="host:1",
    )
    fill(metrics)
    metrics.publish()
    found = published(cloudwatch, unique_name)
    assert found["RecordsProcessed"] == [{"Operation": "ProcessTask", "WorkerIdentifier": "host:1"}]


def test_one_call_carries_at_most_a_thousand_points(cloudwatch, unique_name, caplog):
    metrics = CloudWatchMetrics(cloudwatch, unique_name, level=DETAILED)
    for shard in range(1200):
        metrics.add("RecordsProcessed", 1, "Count", "ProcessTask", f"shardId-{shard:012d}")
    assert metrics.publish() == 1000
    assert metrics.calls == 1 and metrics.dropped_datums == 200
    assert "200 metric data points" in caplog.text


def test_a_failing_endpoint_is_counted_and_logged_once_a_minute(local_aws, caplog):
    client = create_client(
        "cloudwatch", region_name=local_aws.region_name, endpoint_url="http://127.0.0.1:9"
    )
    metrics = CloudWatchMetrics(client, "app", level=SUMMARY)
    for _ in range(3):
        fill(metrics)
        assert metrics.publish() == 0
    assert metrics.failures == 3
    assert caplog.text.count("publishing") == 1


def test_the_log_sink_writes_each_point(caplog):
    caplog.set_level(logging.INFO, logger="kinesis_dstream.metrics")
    metrics = LogMetrics(SUMMARY)
    fill(metrics)
    assert metrics.publish() == 3
    assert "metric RecordsProcessed[Operation=ProcessTask] n=4 sum=30" in caplog.text


def detailed_stream(ssc, local_aws, name, **kwargs):
    return KinesisUtils.createStream(
        ssc,
        name,
        name,
        local_aws.endpoint_url,
        local_aws.region_name,
        InitialPositionInStream.TRIM_HORIZON,
        1,
        MetricsLevel.DETAILED,
        dynamoDBEndpointUrl=local_aws.endpoint_url,
        **kwargs,
    )


@pytest.mark.spark
def test_a_detailed_stream_on_eight_shards_publishes_at_most_once_an_interval(
    spark, local_aws, kinesis, cloudwatch, unique_name, caplog
):
    caplog.set_level(logging.INFO, logger="kinesis_dstream.dstream")
    ensure_stream(kinesis, unique_name, 8)
    sent = put(kinesis, unique_name, 800)
    ssc = StreamingContext(spark, 0.5)
    got = Collected(
        detailed_stream(
            ssc,
            local_aws,
            unique_name,
            cloudWatchEndpointUrl=local_aws.endpoint_url,
            metricsIntervalMs=2000,
            fetchIntervalMs=200,
        )
    )
    started = time.monotonic()
    ssc.start()
    try:
        got.wait_for(lambda items: len(items) >= 800, 60, "800 records")
        calls = progress_of(unique_name)["metrics_calls"]
        wait_until(  # two more intervals, seen as two more publishing calls
            lambda: progress_of(unique_name)["metrics_calls"] >= calls + 2, 30, "2 more calls"
        )
        snapshot = progress_of(unique_name)
        elapsed = time.monotonic() - started
    finally:
        ssc.stop(stopSparkContext=False, stopGraceFully=True)
    assert sorted(got.snapshot()) == sorted(sent)
    assert 1 <= snapshot["metrics_calls"] <= elapsed / 2.0 + 1
    assert len(snapshot["shards_held"]) == 8 and snapshot["records_fetched"] == 800
    assert snapshot["batches_completed"] >= 1 and snapshot["last_batch"]["shards_held"] == 8
    found = published(cloudwatch, unique_name)
    shards = {d.get("ShardId") for d in found["RecordsProcessed"]}
    assert len(shards) == 8
    for name in (
        "MillisBehindLatest",
        "GetRecords.Success",
        "Checkpoints",
        "CurrentLeases",
        "TakenLeases",
    ):
        assert name in found, name
    assert f"stream {unique_name} batch" in caplog.text and "8 shards held" in caplog.text


@pytest.mark.spark
def test_a_failing_cloudwatch_leaves_the_stream_running(spark, local_aws, kinesis, unique_name):
    ensure_stream(kinesis, unique_name, 2)
    sent = put(kinesis, unique_name, 200)
    ssc = StreamingContext(spark, 0.5)
    got = Collected(
        detailed_stream(
            ssc,
            local_aws,
            unique_name,
            cloudWatchEndpointUrl="http://127.0.0.1:9",
            metricsIntervalMs=500,
        )
    )
    ssc.start()
    try:
        got.wait_for(lambda items: len(items) >= 200, 60, "200 records")
        snapshot = wait_until(
            lambda: progress_of(unique_name)["metrics_failures"] >= 1 and progress_of(unique_name),
            30,
            "a failed publish counted",
        )
    finally:
        ssc.stop(stopSparkContext=False, stopGraceFully=True)
    assert sorted(got.snapshot()) == sorted(sent)
    assert snapshot["metrics_failures"] >= 1
