"""createStream and the builder on local Spark against moto's server."""

import collections
import logging
import time
from datetime import datetime, timezone

import pytest
from pyspark.storagelevel import StorageLevel
from pyspark.streaming import StreamingContext

from kinesis_dstream import (
    InitialPositionInStream,
    KinesisInitialPositions,
    KinesisInputDStream,
    KinesisUtils,
    MetricsLevel,
    SparkAWSCredentials,
)
from kinesis_dstream.dstream.context import _RECEIVERS
from kinesis_dstream.dstream.pacing import HISTORY
from kinesis_dstream.dstream.receiver import KinesisReceiver
from kinesis_dstream.dstream.settings import StreamSettings
from kinesis_dstream.esn import ExtendedSequenceNumber
from kinesis_dstream.leases.dynamodb import LeaseTable
from kinesis_dstream.leases.lease import Lease
from kinesis_dstream.retrieval.streams import ensure_stream, list_shards

from ..support.kpl_bytes import aggregate, user_record
from ..support.records import put_records
from ..support.streaming import Collected, leases_of, our_threads, progress_of
from ..support.waiting import wait_until

pytestmark = pytest.mark.spark

FAST = {"fetchIntervalMs": 200, "failoverTimeMs": 3000}


def put(kinesis, stream, n, prefix="r", aggregate=False):
    """``n`` records ``{prefix}{i}`` with keys ``pk-{i}``; their data, in order."""
    return list(
        put_records(kinesis, stream, n, data=prefix + "{i}", key="pk-{i}", aggregate=aggregate)
    )


def create(ssc, local_aws, app, stream, position=InitialPositionInStream.TRIM_HORIZON, **kw):
    return KinesisUtils.createStream(
        ssc,
        app,
        stream,
        local_aws.endpoint_url,
        local_aws.region_name,
        position,
        1,
        dynamoDBEndpointUrl=local_aws.endpoint_url,
        cloudWatchEndpointUrl=local_aws.endpoint_url,
        **{**FAST, **kw},
    )


def leases(local_aws, app):
    return leases_of(local_aws.client("dynamodb"), app)


def test_ten_thousand_records_over_four_shards_arrive_exactly_and_are_checkpointed(
    ssc, local_aws, kinesis, unique_name
):
    ensure_stream(kinesis, unique_name, 4)
    sent = put(kinesis, unique_name, 10_000)
    got = Collected(create(ssc, local_aws, unique_name, unique_name))
    ssc.start()
    items = got.wait_for(lambda items: len(items) >= 10_000, 90, "10,000 records")
    got.wait_batches(3)  # a few more batches: nothing extra may arrive
    ssc.stop(stopSparkContext=False, stopGraceFully=True)
    assert sorted(got.snapshot()) == sorted(sent)
    assert len(items) == 10_000
    held = leases(local_aws, unique_name)
    assert len(held) == 4
    for lease in held.values():
        assert not lease.checkpoint.is_sentinel  # every shard checkpointed at a record
        assert lease.lease_owner is None  # graceful stop: released
    assert our_threads() == []


def test_a_message_handler_gets_whole_records_also_from_kpl_aggregates(
    ssc, local_aws, kinesis, unique_name
):
    ensure_stream(kinesis, unique_name, 2)
    sent = put(kinesis, unique_name, 500, aggregate=True)
    stream = create(
        ssc,
        local_aws,
        unique_name,
        unique_name,
        messageHandler=lambda r: (
            r.data.decode(),
            r.partition_key,
            r.shard_id,
            r.stream_name,
            r.sequence_number,
            r.sub_sequence_number,
            r.approximate_arrival_timestamp,
        ),
    )
    got = Collected(stream)
    ssc.start()
    items = got.wait_for(lambda items: len(items) >= 500, 60, "500 user records")
    assert sorted(i[0] for i in items) == sorted(sent)
    assert {i[1] for i in items} == {f"pk-{n}" for n in range(500)}
    assert {i[2] for i in items} == {"shardId-000000000000", "shardId-000000000001"}
    assert {i[3] for i in items} == {unique_name}
    assert max(i[5] for i in items) > 0  # sub-sequence numbers inside aggregates
    assert all(isinstance(i[6], datetime) for i in items)


def test_a_restart_inside_a_kpl_aggregate_resumes_at_the_next_sub_record(
    ssc, local_aws, kinesis, unique_name
):
    ensure_stream(kinesis, unique_name, 1)
    sent = put(kinesis, unique_name, 50, aggregate=True)  # one aggregate of 50
    (outer,) = kinesis.get_records(
        ShardIterator=kinesis.get_shard_iterator(
            StreamName=unique_name,
            ShardId="shardId-000000000000",
            ShardIteratorType="TRIM_HORIZON",
        )["ShardIterator"]
    )["Records"]
    table = LeaseTable(local_aws.client("dynamodb"), unique_name)
    table.create_if_missing()
    # what a JVM KCL worker leaves after processing user records 0..19 of the aggregate
    table.create_lease(
        Lease(
            "shardId-000000000000",
            checkpoint=ExtendedSequenceNumber(outer["SequenceNumber"], 19),
            lease_owner="jvm-worker",
            lease_counter=7,
        )
    )
    # the file's 3 s failover: with 1 s a renewal stalled by load fenced the lease and the
    # retake read the aggregate again
    got = Collected(create(ssc, local_aws, unique_name, unique_name))
    ssc.start()
    got.wait_for(lambda items: len(items) >= 30, 60, "the last 30 sub-records")
    got.wait_batches(3)
    assert got.snapshot() == sent[20:]


def test_the_builder_builds_bytes_and_message_handler_streams(ssc, local_aws, kinesis, unique_name):
    ensure_stream(kinesis, unique_name, 1)
    sent = put(kinesis, unique_name, 20)

    def builder(app):
        return (
            KinesisInputDStream.builder()
            .streamingContext(ssc)
            .streamName(unique_name)
            .checkpointAppName(app)
            .endpointUrl(local_aws.endpoint_url)
            .regionName(local_aws.region_name)
            .dynamoDBEndpointUrl(local_aws.endpoint_url)
            .initialPosition(KinesisInitialPositions.TrimHorizon())
            .checkpointInterval(1)
            .storageLevel(StorageLevel.MEMORY_AND_DISK_2)
            .metricsLevel(MetricsLevel.NONE)
            .metricsEnabledDimensions({"Operation", "ShardId"})
            .kinesisCredentials(
                SparkAWSCredentials.builder()
                .basicCredentials(local_aws.access_key_id, local_aws.secret_access_key)
                .build()
            )
        )

    raw = Collected(builder(f"{unique_name}-a").build())
    keyed = Collected(
        builder(f"{unique_name}-b").buildWithMessageHandler(lambda r: (r.partition_key, r.data))
    )
    ssc.start()
    raw.wait_for(lambda items: len(items) >= 20, 60, "20 raw records")
    keyed.wait_for(lambda items: len(items) >= 20, 60, "20 handled records")
    assert sorted(raw.snapshot()) == sorted(s.encode() for s in sent)
    assert sorted(keyed.snapshot()) == sorted((f"pk-{i}", f"r{i}".encode()) for i in range(20))


def test_the_builder_names_a_missing_required_value(ssc):
    with pytest.raises(ValueError, match=r"streamName\(\.\.\.\) is required"):
        KinesisInputDStream.builder().streamingContext(ssc).checkpointAppName("a").build()


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"awsAccessKeyId": "AKIA"}, "awsSecretKey is missing"),
        ({"awsSecretKey": "s"}, "awsAccessKeyId is missing"),
        ({"stsAssumeRoleArn": "arn:aws:iam::1:role/r"}, "stsSessionName and stsExternalId"),
        ({"initialPositionInStream": 7}, r"unknown initial position 7; accepted: .*LATEST"),
        ({"initialPositionInStream": "EARLIEST"}, "unknown initial position 'EARLIEST'"),
        ({"initialPositionInStream": 2}, "AT_TIMESTAMP needs initialTimestamp"),
        ({"checkpointInterval": 0}, "checkpointInterval must be a positive"),
        ({"metricsLevel": 9}, "unknown metricsLevel 9"),
        ({"kinesisAppName": ""}, "kinesisAppName must be a non-empty string"),
        ({"maxRecordsPerFetch": 20_000}, r"max_records_per_fetch must be in \[1, 10000\]"),
        ({"idleShardPollMs": 600_000}, r"idleShardPollMs / 1000\) must be in \[0, 60\], got 600"),
        ({"retrievalMode": "EFO"}, "retrievalMode must be POLLING or FANOUT, got 'EFO'"),
        ({"consumerName": "c"}, "consumerName needs retrievalMode='FANOUT'"),
    ],
)
def test_bad_arguments_raise_before_anything_starts(ssc, local_aws, unique_name, kwargs, match):
    args = {
        "ssc": ssc,
        "kinesisAppName": unique_name,
        "streamName": unique_name,
        "endpointUrl": local_aws.endpoint_url,
        "regionName": local_aws.region_name,
        "initialPositionInStream": InitialPositionInStream.LATEST,
        "checkpointInterval": 2,
        **kwargs,
    }
    with pytest.raises(ValueError, match=match):
        KinesisUtils.createStream(**args)
    tables = local_aws.client("dynamodb").list_tables()["TableNames"]
    assert unique_name not in tables and our_threads() == []


@pytest.mark.parametrize(
    "batch_s, explicit_ms, expected_s",
    [(0.5, None, 0.5), (1, None, 1.0), (5, None, 1.0), (1, 300, 0.3), (0.5, 2000, 2.0)],
)
def test_rounds_default_to_one_per_batch_at_most_a_second_apart_and_align_to_batches(
    spark, local_aws, unique_name, batch_s, explicit_ms, expected_s
):
    context = StreamingContext(spark, batch_s)
    try:
        options = {} if explicit_ms is None else {"fetchIntervalMs": explicit_ms}
        KinesisUtils.createStream(
            context,
            unique_name,
            unique_name,
            local_aws.endpoint_url,
            local_aws.region_name,
            InitialPositionInStream.LATEST,
            1,
            **options,
        )
        (receiver,) = [r for r in _RECEIVERS.values() if r.settings.stream_name == unique_name]
        assert receiver.settings.fetch_interval_s == expected_s
        assert receiver.round_thread.pacer.batch_interval_s == batch_s
        # in the settings, which Spark's checkpoint carries: aligned after a restart too
        assert receiver.settings.batch_interval_s == batch_s
    finally:
        context.stop(stopSparkContext=False, stopGraceFully=False)


def test_at_timestamp_from_python_reads_only_later_records(ssc, local_aws, kinesis, unique_name):
    ensure_stream(kinesis, unique_name, 1)
    put(kinesis, unique_name, 10, prefix="old")
    time.sleep(1.1)
    cut = datetime.now(timezone.utc)
    time.sleep(0.1)
    later = put(kinesis, unique_name, 10, prefix="new")
    got = Collected(
        create(
            ssc,
            local_aws,
            unique_name,
            unique_name,
            InitialPositionInStream.AT_TIMESTAMP,
            initialTimestamp=cut,
        )
    )
    ssc.start()
    got.wait_for(lambda items: len(items) >= 10, 60, "the 10 later records")
    got.wait_batches(3)
    assert sorted(got.snapshot()) == sorted(later)


def test_a_failed_output_is_not_checkpointed_and_a_restart_delivers_it_again(
    spark, local_aws, kinesis, unique_name
):
    ensure_stream(kinesis, unique_name, 1)
    sent = put(kinesis, unique_name, 100)
    first = StreamingContext(spark, 0.5)
    seen = Collected()

    def fail_after_seeing(rdd):
        rows = rdd.collect()
        if rows:
            seen.add(rdd)
            raise RuntimeError("the sink is down")

    create(first, local_aws, unique_name, unique_name).foreachRDD(fail_after_seeing)
    first.start()
    seen.wait_for(lambda items: len(items) >= 100, 60, "records reach the failing output")
    passes = wait_until(lambda: progress_of(unique_name).get("checkpoint_passes"), 30, "a pass")
    wait_until(
        lambda: progress_of(unique_name)["checkpoint_passes"] >= passes + 2,
        30,
        "two more checkpoint passes after the failed batch",
    )
    assert progress_of(unique_name)["blocked_shards"], "the failed batch blocks its shard"
    first.stop(stopSparkContext=False, stopGraceFully=True)
    assert leases(local_aws, unique_name)["shardId-000000000000"].checkpoint == (
        ExtendedSequenceNumber("TRIM_HORIZON")
    )

    second = StreamingContext(spark, 0.5)
    again = Collected(create(second, local_aws, unique_name, unique_name))
    second.start()
    try:
        again.wait_for(lambda items: len(items) >= 100, 60, "the records again")
    finally:
        second.stop(stopSparkContext=False, stopGraceFully=True)
    assert sorted(again.snapshot()) == sorted(sent)
    assert not leases(local_aws, unique_name)["shardId-000000000000"].checkpoint.is_sentinel


def test_a_stop_that_is_not_graceful_leaves_leases_to_expire(
    spark, local_aws, kinesis, unique_name
):
    ensure_stream(kinesis, unique_name, 2)
    context = StreamingContext(spark, 0.5)
    Collected(create(context, local_aws, unique_name, unique_name))
    context.start()
    wait_until(
        lambda: len([x for x in leases(local_aws, unique_name).values() if x.lease_owner]) == 2,
        30,
        "both leases taken",
    )
    context.stop(stopSparkContext=False, stopGraceFully=False)
    assert all(lease.lease_owner for lease in leases(local_aws, unique_name).values())
    assert our_threads() == []


def receiver_settings(local_aws, name, transform, **overrides):
    """Settings for a receiver driven by hand: TRIM_HORIZON, no timed checkpoints,
    0.5 s rounds (what maxRate's per-round budget below is counted in)."""
    overrides.setdefault("fetch_interval_s", 0.5)
    return StreamSettings(
        stream_id=name,
        app_name=name,
        stream_name=name,
        endpoint_url=local_aws.endpoint_url,
        region_name=local_aws.region_name,
        initial_position="TRIM_HORIZON",
        checkpoint_interval_s=60,
        storage_level=StorageLevel.MEMORY_ONLY,
        transform=transform,
        dynamodb_endpoint_url=local_aws.endpoint_url,
        **overrides,
    )


@pytest.mark.parametrize("per_task", [1, 2, 3])
def test_a_lost_block_recomputes_to_exactly_the_recorded_range(
    spark, local_aws, kinesis, unique_name, per_task
):
    ensure_stream(kinesis, unique_name, 3)
    put(kinesis, unique_name, 450, prefix="first")
    settings = receiver_settings(
        local_aws,
        unique_name,
        lambda record: (record.shard_id, record.data.decode()),
        max_records_per_fetch=100,  # a round stops part-way through each shard
        shards_per_task=per_task,  # 1: a partition a shard; 2 and 3: shards grouped
    )
    receiver = KinesisReceiver(settings)
    receiver.start(spark, round_thread=False)  # rounds are driven by hand below
    try:
        assert receiver.fetch_round() == 300
        [round_] = receiver.state.rounds()
        assert [len(g) for g in round_.groups] == {1: [1, 1, 1], 2: [2, 1], 3: [3]}[per_task]
        batch = receiver.batch_rdd(1000, spark)
        before = batch.collect()
        assert len(before) == 300
        put(kinesis, unique_name, 300, prefix="second")  # the shards grow meanwhile
        for round_ in receiver.state.rounds():
            round_.rdd.unpersist(blocking=True)  # the cached blocks are lost
        assert batch.collect() == before  # recomputed: the same records, in order
        assert receiver.batch_rdd(1000, spark).collect() == before  # asked again: same batch
        assert receiver.fetch_round() == 300  # the next round goes on after the range
        after = receiver.batch_rdd(2000, spark).collect()
        assert not set(after) & set(before)
    finally:
        receiver.stop(release=True)


def _noting(path, record):
    """A message handler that notes each record it handles (the shard, a line in ``path``):
    a round's task handles what it reads; a batch handles only what it reads again from
    Kinesis (a lost block's ranges) or a recomputed block's task reads. The Python
    workers' log lines go to the JVM's stderr, which no capture of the test sees."""
    with open(path, "a") as noted:
        noted.write(record.shard_id + "\n")
    return record.shard_id, record.data.decode()


def handled(path):
    """The shards of the records handled so far, a line each (see _noting)."""
    return path.read_text().split() if path.exists() else []


def test_a_round_of_more_blocks_than_cores_is_one_wave_of_batch_tasks_and_recomputes_the_same(
    spark, local_aws, kinesis, unique_name, tmp_path
):
    """Three cached blocks (a round of three one-shard tasks) make a batch of one task per
    core, a task reading its blocks one after another, each as it was recorded (nothing
    read again); lost, they recompute to the same. A batch of several rounds keeps them
    in round order (a shard's records in order)."""
    import functools

    ensure_stream(kinesis, unique_name, 3)
    sent = put(kinesis, unique_name, 600)
    noted = tmp_path / "handled"
    settings = receiver_settings(
        local_aws,
        unique_name,
        functools.partial(_noting, str(noted)),
        max_records_per_fetch=50,
        shards_per_task=1,
    )
    receiver = KinesisReceiver(settings)
    receiver.start(spark, round_thread=False)  # rounds are driven by hand below
    try:
        assert receiver.fetch_round() == 150
        assert len(handled(noted)) == 150  # the round's tasks handled what they read
        batch = receiver.batch_rdd(1000, spark)
        assert batch.getNumPartitions() == spark.defaultParallelism  # not 3: one wave
        got = batch.collect()
        assert len(handled(noted)) == 150, "the batch read cached blocks again from Kinesis"
        assert len(set(got)) == 150 and {data for _, data in got} <= set(sent)
        assert len({s for s, _ in got}) == 3
        for round_ in receiver.state.rounds():
            round_.rdd.unpersist(blocking=True)  # the cached blocks are lost
        assert batch.collect() == got  # recomputed: the same records, in the same order
        # each block's task ran again (the shards did not grow: the same ranges), and no
        # range was read a third time
        assert len(handled(noted)) == 300
        assert [receiver.fetch_round() for _ in range(2)] == [150, 150]
        later = receiver.batch_rdd(2000, spark).collect()
        for shard in {s for s, _ in later}:  # each shard's records in the order put
            numbers = [int(data[1:]) for s, data in later if s == shard]
            assert numbers == sorted(numbers) and len(numbers) == 100
    finally:
        receiver.stop(release=True)


def test_one_changed_block_of_a_coalesced_batch_task_is_read_again_alone(
    spark, local_aws, kinesis, unique_name, tmp_path
):
    """Six shards two a task: three cached blocks, a batch of two tasks, one of which reads
    two blocks. The blocks are lost after the shards of that task's first block grew: each
    block's task runs again, the first block's now reads more than the record, so the batch
    reads that block's ranges again from Kinesis; the block after it recomputed to the
    record, and is not read a third time."""
    import functools

    from kinesis_dstream.spark_internals import coalesced_parents

    ensure_stream(kinesis, unique_name, 6)
    put(kinesis, unique_name, 120, prefix="first")
    noted = tmp_path / "handled"
    settings = receiver_settings(
        local_aws,
        unique_name,
        functools.partial(_noting, str(noted)),
        max_records_per_fetch=1000,  # a round reads each shard to its end
        shards_per_task=2,
    )
    receiver = KinesisReceiver(settings)
    receiver.start(spark, round_thread=False)  # rounds are driven by hand below
    try:
        assert receiver.fetch_round() == 120
        [round_] = receiver.state.rounds()
        assert [len(g) for g in round_.groups] == [2, 2, 2]
        batch = receiver.batch_rdd(1000, spark)
        assert batch.getNumPartitions() == spark.defaultParallelism == 2
        got = batch.collect()
        assert len(set(got)) == 120 and len(handled(noted)) == 120  # nothing read again
        [(changed, after)] = [p for p in coalesced_parents(batch.prev) if len(p) == 2]
        grown = [round_.plans[i] for i in round_.groups[changed]]
        for plan in grown:  # 5 more records in each shard of the first block
            for n in range(5):
                kinesis.put_record(
                    StreamName=unique_name,
                    Data=f"second-{plan.shard_id}-{n}".encode(),
                    PartitionKey="any",
                    ExplicitHashKey=str(plan.hash_key_range[0]),
                )
        for round_ in receiver.state.rounds():
            round_.rdd.unpersist(blocking=True)  # the cached blocks are lost
        assert batch.collect() == got  # the same records, in the same order
        again = collections.Counter(handled(noted)[120:])
        recorded = {r.shard_id: r.records for r in round_.ranges}
        for plan in grown:  # its task read 5 more; then the batch its recorded range
            assert again[plan.shard_id] == recorded[plan.shard_id] + 5 + recorded[plan.shard_id]
        # the other blocks' tasks ran again to the same ranges: each record handled once
        # more, none read a third time (the block after the changed one included)
        assert after not in (changed,) and round_.groups[after]
        for plan in round_.plans:
            if plan not in grown:
                assert again[plan.shard_id] == recorded[plan.shard_id], plan.shard_id
    finally:
        receiver.stop(release=True)


def test_no_credential_reaches_the_logs_or_the_spark_checkpoint(
    spark, local_aws, kinesis, unique_name, tmp_path, caplog, capfd
):
    ensure_stream(kinesis, unique_name, 1)
    sent = put(kinesis, unique_name, 50)
    secret = f"SECRET{unique_name.replace('-', '')}"
    key_id = f"AKIA{unique_name[-8:].upper()}"
    caplog.set_level(logging.DEBUG, logger="kinesis_dstream")
    context = StreamingContext(spark, 0.5)
    context.checkpoint(str(tmp_path / "checkpoint"))
    stream = create(
        context,
        local_aws,
        unique_name,
        unique_name,
        awsAccessKeyId=key_id,
        awsSecretKey=secret,
    )
    counts = stream.map(lambda word: (word, 1)).updateStateByKey(
        lambda new, old: sum(new) + (old or 0)
    )
    got = Collected(counts)
    context.start()
    got.wait_for(lambda items: sum(n for _, n in items) >= 50, 60, "50 records counted")
    wait_until(
        lambda: any((tmp_path / "checkpoint").rglob("checkpoint-*")),
        30,
        "a Spark checkpoint written",
    )
    got.wait_batches(2)
    context.stop(stopSparkContext=False, stopGraceFully=True)
    assert any((tmp_path / "checkpoint").rglob("checkpoint-*")), "no Spark checkpoint written"
    for path in (tmp_path / "checkpoint").rglob("*"):
        if path.is_file():
            content = path.read_bytes()
            assert secret.encode() not in content and key_id.encode() not in content, path
    logged = caplog.text + "".join(capfd.readouterr())
    assert secret not in logged and key_id not in logged
    assert sorted(dict(got.snapshot())) == sorted(sent)


def test_a_missing_stream_fails_the_batches_loudly_naming_it(spark, local_aws, unique_name):
    context = StreamingContext(spark, 0.5)
    Collected(create(context, local_aws, unique_name, f"{unique_name}-missing"))
    context.start()
    try:
        with pytest.raises(Exception, match=f"stream '{unique_name}-missing' does not exist"):
            context.awaitTerminationOrTimeout(20)
    finally:
        context.stop(stopSparkContext=False, stopGraceFully=False)
    assert our_threads() == []


def test_the_buffer_bound_pauses_fetching_and_max_rate_caps_rounds(
    spark, local_aws, kinesis, unique_name
):
    ensure_stream(kinesis, unique_name, 1)
    put(kinesis, unique_name, 500)
    settings = receiver_settings(
        local_aws,
        unique_name,
        lambda record: record.data,
        max_records_per_fetch=60,
        max_buffer_records=100,
    )
    receiver = KinesisReceiver(settings)
    receiver.start(spark, round_thread=False)  # rounds are driven by hand below
    try:
        assert [receiver.fetch_round() for _ in range(3)] == [60, 60, 0]  # 120 >= 100: pause
        assert receiver.stats.rounds_skipped_full_buffer == 1
        assert receiver.progress()["buffered_records"] == 120
        assert len(receiver.batch_rdd(1000, spark).collect()) == 120
        receiver.batch_completed(1000, True)
        receiver.round_thread.max_rate = 40  # spark.streaming.receiver.maxRate, records/s
        assert receiver.fetch_round() == 20  # 40/s x a 0.5 s round, one shard
    finally:
        receiver.stop(release=True)


def _gated(gate, reached, record):
    """A message handler that holds its round until ``gate`` exists (in the task)."""
    import os
    import time as clock

    open(reached, "a").close()
    while not os.path.exists(gate):
        clock.sleep(0.01)
    return record.data.decode()


def test_a_batch_cut_while_a_round_runs_waits_for_it_bounded(
    spark, local_aws, kinesis, unique_name, tmp_path
):
    """The round that started before a batch time goes into that batch, not a batch
    interval later: the batch waits for it, at most ``cut_wait_s``."""
    import functools
    import threading

    ensure_stream(kinesis, unique_name, 2)
    sent = put(kinesis, unique_name, 40)
    gate, reached = tmp_path / "gate", tmp_path / "reached"
    handler = functools.partial(_gated, str(gate), str(reached))
    receiver = KinesisReceiver(receiver_settings(local_aws, unique_name, handler))
    receiver.start(spark, round_thread=False)  # rounds are driven by hand below
    try:
        receiver.round_thread.cut_wait_s = 30.0  # wide: the machine may be slow
        fetched: list = []
        round_ = threading.Thread(target=lambda: fetched.append(receiver.fetch_round()))
        round_.start()
        wait_until(reached.exists, 60, "the round reading")
        cut: list = []
        batch = threading.Thread(
            target=lambda: cut.append(receiver.batch_rdd(int(time.time() * 1000), spark))
        )
        batch.start()
        time.sleep(0.5)
        assert batch.is_alive()  # the batch waits for the round running at its time
        gate.touch()
        batch.join(60)
        round_.join(60)
        assert fetched == [40]
        assert sorted(cut[0].collect()) == sorted(sent)  # the round is in this batch
        # bounded: a round that runs on past the wait goes to the next batch. The pacer
        # expects a short round (the gated one above was long, and a round expected to run
        # past the bound is not waited for at all): the wait begins and runs out.
        gate.unlink()
        reached.unlink()
        put(kinesis, unique_name, 10, prefix="late")
        bound_s = receiver.round_thread.cut_wait_s = 0.3
        for _ in range(HISTORY):  # the pacer's whole history of round lengths
            receiver.round_thread.pacer.round_took(0.01)
        round_ = threading.Thread(target=receiver.fetch_round)
        round_.start()
        wait_until(reached.exists, 60, "the second round reading")
        started = time.monotonic()
        early = receiver.batch_rdd(int(time.time() * 1000), spark)
        waited_s = time.monotonic() - started
        # waited the whole bound (not skipped), and not much more: the margin is for a
        # loaded 2-core machine (the waiter's wake-up, the empty batch's py4j calls)
        margin_s = 1.5
        assert bound_s <= waited_s < bound_s + margin_s, waited_s
        gate.touch()
        round_.join(60)
        assert early.collect() == []
        later = receiver.batch_rdd(int(time.time() * 1000) + 1000, spark).collect()
        assert sorted(later) == sorted(f"late{i}" for i in range(10))
    finally:
        gate.touch()
        receiver.stop(release=True)


def test_max_rate_counts_user_records_and_a_round_may_end_inside_an_aggregate(
    spark, local_aws, kinesis, unique_name
):
    ensure_stream(kinesis, unique_name, 1)
    sent = put(kinesis, unique_name, 100, aggregate=True)  # one or two KPL aggregates
    settings = receiver_settings(local_aws, unique_name, lambda record: record.data.decode())
    receiver = KinesisReceiver(settings)
    receiver.start(spark, round_thread=False)  # rounds are driven by hand below
    try:
        receiver.round_thread.max_rate = 40  # spark.streaming.receiver.maxRate: user records/s
        assert [receiver.fetch_round() for _ in range(5)] == [20] * 5  # 40/s x 0.5 s rounds
        assert receiver.batch_rdd(1000, spark).collect() == sent  # each sub-record once
    finally:
        receiver.stop(release=True)


def test_the_batch_log_keeps_what_the_graph_remembers(ssc, local_aws, kinesis, unique_name):
    ensure_stream(kinesis, unique_name, 1)
    put(kinesis, unique_name, 10)
    windowed = create(ssc, local_aws, unique_name, unique_name).window(1200, 0.5)  # 20 min
    got = Collected(windowed)
    ssc.start()
    got.wait_for(lambda items: len(items) >= 10, 60, "10 records")
    (receiver,) = [r for r in _RECEIVERS.values() if r.settings.stream_name == unique_name]
    assert receiver.state.batch_log_retention_ms() >= 1_200_000  # not the old fixed 900 s


def test_a_window_that_runs_jobs_every_fourth_batch_still_checkpoints(
    ssc, local_aws, kinesis, unique_name
):
    ensure_stream(kinesis, unique_name, 1)
    sent = put(kinesis, unique_name, 50)
    # Jobs run every 2 s only; the batch times between produce RDDs but no completion.
    got = Collected(create(ssc, local_aws, unique_name, unique_name).window(2, 2))
    ssc.start()
    got.wait_for(lambda items: len(items) >= 50, 60, "50 records")
    lease = wait_until(
        lambda: next(
            (x for x in leases(local_aws, unique_name).values() if not x.checkpoint.is_sentinel),
            None,
        ),
        30,
        "a checkpoint at a record",
    )
    assert lease.checkpoint.sequence_number == max(
        (r["SequenceNumber"] for r in _records(kinesis, unique_name)), key=int
    )
    assert sorted(got.snapshot()) == sorted(sent)
    assert progress_of(unique_name)["batches_awaiting_completion"] == []


def _records(kinesis, stream):
    iterator = kinesis.get_shard_iterator(
        StreamName=stream, ShardId="shardId-000000000000", ShardIteratorType="TRIM_HORIZON"
    )["ShardIterator"]
    return kinesis.get_records(ShardIterator=iterator, Limit=1000)["Records"]


def test_poison_kpl_aggregates_are_read_as_the_kcl_does_and_every_good_record_arrives(
    ssc, local_aws, kinesis, unique_name
):
    """Issue 52: an aggregate whose key table is not UTF-8 stopped every reader of a
    multi-shard stream (AttributeError on each read of its shard, after every restart).
    Between good aggregates, poison ones of every kind: keys not UTF-8 (read as the KCL
    reads them), a wrong MD5 and a cut one (plain records, as the KCL passes them), an
    index past the key table and an explicit hash key not UTF-8 (malformed: passed through
    whole, counted in progress())."""
    ensure_stream(kinesis, unique_name, 2)
    shards = list_shards(kinesis, unique_name)
    low = [s["HashKeyRange"]["StartingHashKey"] for s in shards]
    good = put(kinesis, unique_name, 300, prefix="good-", aggregate=True)
    clean = aggregate([b"k"], [user_record(0, b"x"), user_record(0, b"y")])
    poison = {
        "bad key": aggregate(
            [b"\xff\xfe", b"a\xed\xa0\x80"], [user_record(0, b"kept-0"), user_record(1, b"kept-1")]
        ),
        "wrong md5": clean[:-1] + bytes([clean[-1] ^ 1]),
        "cut": clean[:-7],
        "index past the table": aggregate([b"k"], [user_record(0, b"a"), user_record(3, b"b")]),
        "explicit key not utf-8": aggregate(
            [b"k"], [user_record(0, b"c", 0), user_record(0, b"d")], [b"1\xff"]
        ),
    }
    for shard_low in low:  # every poison aggregate in both shards
        entries = [
            {"Data": data, "PartitionKey": "poison", "ExplicitHashKey": shard_low}
            for data in poison.values()
        ]
        assert (
            kinesis.put_records(StreamName=unique_name, Records=entries)["FailedRecordCount"] == 0
        )
    stream = create(
        ssc,
        local_aws,
        unique_name,
        unique_name,
        messageHandler=lambda r: (r.data, r.partition_key, r.sub_sequence_number),
    )
    got = Collected(stream)
    ssc.start()
    want = len(good) + 2 * (2 + 4)  # the bad keys' two user records, four passed through
    got.wait_for(lambda items: len(items) >= want, 90, f"{want} records")
    later = put(kinesis, unique_name, 100, prefix="later-", aggregate=True)
    items = got.wait_for(lambda items: len(items) >= want + 100, 60, "the records put after")
    wait_until(lambda: _kpl_totals(unique_name).get("malformed_aggregates") == 4, 30, "4 malformed")
    got.wait_batches(2)  # nothing more may arrive
    totals = _kpl_totals(unique_name)
    ssc.stop(stopSparkContext=False, stopGraceFully=True)
    items = got.snapshot()
    assert len(items) == want + 100
    texts = sorted(d.decode() for d, _, _ in items if d.startswith((b"good-", b"later-")))
    assert texts == sorted(good + later)
    kept = sorted((d, k, s) for d, k, s in items if d.startswith(b"kept-"))
    assert kept == sorted(2 * [(b"kept-0", "\ufffd\ufffd", 0), (b"kept-1", "a\ufffd", 1)])
    whole = collections.Counter(d for d, k, s in items if k == "poison")
    assert whole == {poison[name]: 2 for name in poison if name != "bad key"}
    # each bad key's copy in the other shard is outside it: delivered, and counted
    assert totals["malformed_aggregates"] == 4 and totals["user_records_outside_shard"] == 2


def _kpl_totals(stream: str) -> dict:
    """progress()'s per-shard KPL counts, summed."""
    totals: collections.Counter = collections.Counter()
    for counts in progress_of(stream).get("kpl_outside_shard", {}).values():
        totals.update(counts)
    return dict(totals)
