"""Loud, isolated failures on local Spark and moto: what a user's job sees when it breaks.

- a record the message handler cannot take fails the stream naming shard and sequence
  number, and is never checkpointed past;
- a failed batch that completes after a later successful one does not let the
  checkpoint pass it (``spark.streaming.concurrentJobs=2``);
- one throttled shard does not hold back the others;
- a stop while DynamoDB or Kinesis is unreachable leaves no thread and returns in bound.
"""

from __future__ import annotations

import threading
import time
from dataclasses import replace

import pytest
from pyspark.streaming import StreamingContext

from kinesis_dstream import InitialPositionInStream, KinesisProducer, KinesisUtils
from kinesis_dstream.dstream.context import _stop_bound_s
from kinesis_dstream.dstream.receiver import KinesisReceiver
from kinesis_dstream.esn import ExtendedSequenceNumber
from kinesis_dstream.retrieval.streams import ensure_stream

from ..support.fault_proxy import DELAYED, THROTTLED, UNREACHABLE, FaultProxy
from ..support.streaming import Collected, leases_of, our_threads, progress_of
from ..support.waiting import wait_until
from .test_dstream import receiver_settings

pytestmark = pytest.mark.spark

SHARD_0, SHARD_1 = "shardId-000000000000", "shardId-000000000001"
DYNAMODB_OPERATIONS = ("DescribeTable", "Scan", "GetItem", "PutItem", "UpdateItem", "DeleteItem")
KINESIS_OPERATIONS = ("GetRecords", "GetShardIterator", "ListShards", "DescribeStreamSummary")


@pytest.fixture
def proxy(local_aws):
    proxy = FaultProxy(local_aws.endpoint_url).start()
    yield proxy
    proxy.stop()


def put_per_shard(kinesis, stream, per_shard):
    """``per_shard`` records on each of two shards (explicit hash keys), returns them."""
    sent = {SHARD_0: [], SHARD_1: []}
    with KinesisProducer(stream, client=kinesis) as producer:
        for i in range(per_shard):
            for shard, hash_key in ((SHARD_0, "1"), (SHARD_1, str(2**127 + 1))):
                data = f"{shard[-1]}-{i}"
                producer.put(data, data, explicit_hash_key=hash_key)
                sent[shard].append(data)
    return sent


def sequence_of(kinesis, stream, shard, data):
    iterator = kinesis.get_shard_iterator(
        StreamName=stream, ShardId=shard, ShardIteratorType="TRIM_HORIZON"
    )["ShardIterator"]
    records = kinesis.get_records(ShardIterator=iterator, Limit=1000)["Records"]
    return next(r["SequenceNumber"] for r in records if r["Data"].decode() == data)


def stream_of(ssc, url, app, stream, dynamodb_url=None, **kw):
    return KinesisUtils.createStream(
        ssc,
        app,
        stream,
        url,
        "us-east-1",
        InitialPositionInStream.TRIM_HORIZON,
        1,
        dynamoDBEndpointUrl=dynamodb_url or url,
        **{"fetchIntervalMs": 200, "failoverTimeMs": 3000, "metricsSink": "log", **kw},
    )


def test_a_poison_record_fails_the_stream_loudly_and_is_never_checkpointed_past(
    spark, local_aws, kinesis, unique_name
):
    ensure_stream(kinesis, unique_name, 2)
    sent = put_per_shard(kinesis, unique_name, 100)
    poison = sequence_of(kinesis, unique_name, SHARD_0, "0-40")
    url = local_aws.endpoint_url

    def refuse_poison(record):  # nested: pickled by value into the Python workers
        data = record.data.decode()
        if data == "0-40":
            raise ValueError(f"cannot parse {data!r}")
        return data

    ssc = StreamingContext(spark, 0.5)
    got = Collected(stream_of(ssc, url, unique_name, unique_name, messageHandler=refuse_poison))
    ssc.start()
    started = time.monotonic()
    try:
        with pytest.raises(Exception) as failure:
            ssc.awaitTerminationOrTimeout(30)
        elapsed = time.monotonic() - started
    finally:
        ssc.stop(stopSparkContext=False, stopGraceFully=True)
    message = str(failure.value)
    assert SHARD_0 in message and poison in message and "cannot parse '0-40'" in message
    assert elapsed < 3.0 + 10, f"took {elapsed:.1f}s to fail"  # failover 3 s, plus Spark
    shard_0 = leases_of(local_aws.client("dynamodb"), unique_name)[SHARD_0].checkpoint
    assert shard_0 < ExtendedSequenceNumber(poison)
    assert not set(got.snapshot()) & set(sent[SHARD_0][40:])

    # A fixed handler on restart delivers the record, and the rest of shard 0.
    again = StreamingContext(spark, 0.5)
    fixed = Collected(stream_of(again, url, unique_name, unique_name))
    again.start()
    try:
        fixed.wait_for(lambda items: set(sent[SHARD_0][40:]) <= set(items), 60, "shard 0 again")
    finally:
        again.stop(stopSparkContext=False, stopGraceFully=True)
    assert set(got.snapshot()) | set(fixed.snapshot()) == set(sent[SHARD_0] + sent[SHARD_1])


def two_passes_after_the_failure(stream: str) -> None:
    """Wait for a failed batch to be reported, then for two checkpoint passes after it
    (each of which could have moved the checkpoint)."""
    wait_until(lambda: progress_of(stream)["batches_failed"] >= 1, 30, "the failure reported")
    passes = progress_of(stream)["checkpoint_passes"]
    wait_until(
        lambda: progress_of(stream)["checkpoint_passes"] >= passes + 2,
        30,
        "two checkpoint passes after the failure",
    )


_SLOW_FAILURE: dict = {}  # test key -> what the output function needs (never pickled)


def _fail_first_batch_slowly(key, rdd):
    state = _SLOW_FAILURE[key]
    rows = rdd.collect()
    if not rows:
        return
    if state["first"].is_set():
        state["later"].extend(rows)
        return
    state["first"].set()
    state["release"].wait(30)  # until a later batch has completed successfully
    raise RuntimeError("the sink is down for the first batch")


def test_a_slow_failed_batch_holds_the_checkpoint_while_a_later_batch_succeeds(
    spark, local_aws, kinesis, unique_name
):
    ensure_stream(kinesis, unique_name, 1)
    first = put_per_shard(kinesis, unique_name, 50)[SHARD_0]
    conf = spark._jsc.sc().conf()  # a streaming setting read when the context is created
    conf.set("spark.streaming.concurrentJobs", "2")
    state = {"first": threading.Event(), "release": threading.Event(), "later": []}
    _SLOW_FAILURE[unique_name] = state
    ssc = StreamingContext(spark, 0.5)
    stream = stream_of(ssc, local_aws.endpoint_url, unique_name, unique_name)
    stream.foreachRDD(lambda rdd: _fail_first_batch_slowly(unique_name, rdd))
    try:
        ssc.start()
        wait_until(state["first"].is_set, 60, "the first batch reaches the failing output")
        later = put_per_shard(kinesis, unique_name, 50)[SHARD_0]
        wait_until(lambda: set(later) <= set(state["later"]), 60, "the later batch succeeds")
        progress = wait_until(lambda: progress_of(unique_name), 10, "progress")
        passes = progress["checkpoint_passes"]
        wait_until(
            lambda: progress_of(unique_name)["checkpoint_passes"] >= passes + 2,
            30,
            "two checkpoint passes while the first batch is still running",
        )
        state["release"].set()
        two_passes_after_the_failure(unique_name)
    finally:
        state["release"].set()
        ssc.stop(stopSparkContext=False, stopGraceFully=True)
        conf.set("spark.streaming.concurrentJobs", "1")
    lease = leases_of(local_aws.client("dynamodb"), unique_name)[SHARD_0]
    assert lease.checkpoint.is_sentinel, f"checkpoint passed the failed batch: {lease}"

    again = StreamingContext(spark, 0.5)
    replay = Collected(stream_of(again, local_aws.endpoint_url, unique_name, unique_name))
    again.start()
    try:
        replay.wait_for(lambda items: set(first) <= set(items), 60, "the failed batch again")
    finally:
        again.stop(stopSparkContext=False, stopGraceFully=True)


_WINDOW_FAILURE: dict = {}  # test key -> what the window's output needs (never pickled)


def _fail_first_window(key, rdd):
    state = _WINDOW_FAILURE[key]
    if not rdd.collect():
        return
    if not state["failed"].is_set():
        state["failed"].set()
        raise RuntimeError("the window's sink is down")


def test_a_window_whose_job_fails_holds_the_checkpoint_beside_an_output_of_every_batch(
    spark, local_aws, kinesis, unique_name
):
    # Batch 0.5 s: one output runs every batch, a window's output every 2 s. The window's
    # job processes the batches since its last: its failure must hold the checkpoint
    # although the every-batch output succeeded for each of them.
    ensure_stream(kinesis, unique_name, 1)
    put_per_shard(kinesis, unique_name, 30)
    state = {"failed": threading.Event(), "seen": []}
    _WINDOW_FAILURE[unique_name] = state
    ssc = StreamingContext(spark, 0.5)
    stream = stream_of(ssc, local_aws.endpoint_url, unique_name, unique_name)
    stream.foreachRDD(lambda rdd: state["seen"].extend(rdd.collect()))
    stream.window(2, 2).foreachRDD(lambda rdd: _fail_first_window(unique_name, rdd))
    try:
        ssc.start()
        wait_until(lambda: len(state["seen"]) >= 30, 60, "every record at the every-batch output")
        wait_until(state["failed"].is_set, 60, "the window's first job fails")
        two_passes_after_the_failure(unique_name)
    finally:
        ssc.stop(stopSparkContext=False, stopGraceFully=True)
    lease = leases_of(local_aws.client("dynamodb"), unique_name)[SHARD_0]
    assert lease.checkpoint.is_sentinel, f"checkpoint passed the failed window: {lease}"


def test_a_throttled_shard_does_not_hold_back_the_others(
    spark, local_aws, kinesis, proxy, unique_name
):
    ensure_stream(kinesis, unique_name, 2)
    proxy.set("GetRecords", THROTTLED, 1.0, shard=SHARD_0)
    ssc = StreamingContext(spark, 0.5)
    got = Collected(
        stream_of(ssc, proxy.endpoint_url, unique_name, unique_name, local_aws.endpoint_url)
    )
    ssc.start()
    try:
        wait_until(lambda: len(progress_of(unique_name).get("shards_held", [])) == 2, 30, "leases")
        sent = put_per_shard(kinesis, unique_name, 100)
        got.wait_for(lambda items: set(sent[SHARD_1]) <= set(items), 30, "shard 1's records")
        assert not set(got.snapshot()) & set(sent[SHARD_0])  # shard 0 is still throttled
        assert progress_of(unique_name)["transient_read_failures"] >= 1
        proxy.clear()
        got.wait_for(lambda items: set(sent[SHARD_0]) <= set(items), 60, "shard 0's records")
    finally:
        ssc.stop(stopSparkContext=False, stopGraceFully=True)
    assert sorted(got.snapshot()) == sorted(sent[SHARD_0] + sent[SHARD_1])


@pytest.mark.parametrize("service", ["dynamodb", "kinesis"])
def test_a_stop_while_a_service_is_unreachable_leaves_no_thread(
    spark, local_aws, kinesis, proxy, unique_name, service
):
    ensure_stream(kinesis, unique_name, 2)
    sent = put_per_shard(kinesis, unique_name, 20)
    url = local_aws.endpoint_url
    kinesis_url, dynamodb_url = (url, proxy.endpoint_url)
    if service == "kinesis":
        kinesis_url, dynamodb_url = proxy.endpoint_url, url
    ssc = StreamingContext(spark, 0.5)
    got = Collected(stream_of(ssc, kinesis_url, unique_name, unique_name, dynamodb_url))
    ssc.start()
    try:
        got.wait_for(lambda items: len(items) >= 40, 60, "the records")
        bound = _stop_bound_s([])  # failover time plus the join bounds
        for operation in DYNAMODB_OPERATIONS if service == "dynamodb" else KINESIS_OPERATIONS:
            proxy.set(operation, UNREACHABLE, 1.0)
        started = time.monotonic()
        ssc.stop(stopSparkContext=False, stopGraceFully=True)
        ssc.awaitTerminationOrTimeout(1)
        elapsed = time.monotonic() - started
    finally:
        proxy.clear()
        ssc.stop(stopSparkContext=False, stopGraceFully=False)
    assert our_threads() == []
    assert elapsed < bound, f"stop took {elapsed:.1f}s, bound {bound:.1f}s"
    assert sorted(got.snapshot()) == sorted(sent[SHARD_0] + sent[SHARD_1])


def test_a_stop_during_a_slow_start_leaves_no_worker_behind(
    spark, local_aws, kinesis, proxy, unique_name
):
    ensure_stream(kinesis, unique_name, 1)
    # The lease table answers slowly, yet inside the lease client's 0.5 s read timeout.
    proxy.set("DescribeTable", f"{DELAYED}0.4", 1.0)
    settings = receiver_settings(local_aws, unique_name, lambda r: r.data)
    receiver = KinesisReceiver(replace(settings, dynamodb_endpoint_url=proxy.endpoint_url))
    errors: list = []

    def start():
        try:
            receiver.start(spark)
        except Exception as exc:  # the start must succeed: only the stop may end it
            errors.append(exc)

    starting = threading.Thread(target=start, name="test-start")
    starting.start()
    wait_until(lambda: proxy.injected.get("DescribeTable"), 10, "the start reached DynamoDB")
    receiver.stop(release=True)  # while the start is still waiting for the table
    starting.join(30)
    assert not starting.is_alive() and errors == []
    assert proxy.injected["DescribeTable"] >= 2  # the start went on after the stop
    assert our_threads() == []
    leases = leases_of(local_aws.client("dynamodb"), unique_name)
    assert not any(lease.lease_owner for lease in leases.values())
