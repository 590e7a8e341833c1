"""A batch read's planning and shard slices on moto's server, without Spark: the calls
Spark makes (``partitions()`` on the driver, ``read(partition)`` in a task) made directly."""

from __future__ import annotations

import json

import pytest

from kinesis_dstream import KinesisProducer
from kinesis_dstream.errors import RecordsLostError
from kinesis_dstream.retrieval.streams import ensure_stream
from kinesis_dstream.sql.config.options import SourceOptions
from kinesis_dstream.sql.schema import OutputColumns


def batch_reader(local_aws, stream, **given_options):
    from kinesis_dstream.sql.batch.reader import KinesisBatchReader

    given = {
        "streamName": stream,
        "endpointUrl": local_aws.endpoint_url,
        "region": local_aws.region_name,
        "awsAccessKeyId": local_aws.access_key_id,
        "awsSecretKey": local_aws.secret_access_key,
        **given_options,
    }
    options = SourceOptions.parse(given)
    return KinesisBatchReader(options, given, OutputColumns.for_source("kinesis", False))


def read(local_aws, stream, **bounds):
    reader = batch_reader(local_aws, stream, **bounds)
    return [
        (row["data"].decode(), row["sequenceNumber"])
        for part in reader.partitions()
        for batch in reader.read(part)
        for row in batch.to_pylist()
    ]


def test_sequence_numbers_bound_a_shard_start_inclusive_end_exclusive(
    local_aws, kinesis, unique_name
):
    ensure_stream(kinesis, unique_name, 1)
    with KinesisProducer(unique_name, client=kinesis) as producer:
        for i in range(10):
            producer.put(f"r{i}", "one-key")
    everything = read(local_aws, unique_name)
    assert [d for d, _ in everything] == [f"r{i}" for i in range(10)]
    shard = "shardId-000000000000"
    start = json.dumps({unique_name: {shard: everything[3][1]}})
    end = json.dumps({unique_name: {shard: everything[7][1]}})
    got = read(local_aws, unique_name, startingOffsets=start, endingOffsets=end)
    assert [d for d, _ in got] == ["r3", "r4", "r5", "r6"]


def test_a_shard_the_offsets_name_that_the_stream_does_not_list_is_reported(
    local_aws, kinesis, stream
):
    start = json.dumps({stream: {"shardId-000000000042": "1"}})
    assert read(local_aws, stream, startingOffsets=start) == []  # warned, read what is listed
    with pytest.raises(
        RecordsLostError, match=r"does not list shard\(s\) \['shardId-000000000042'\]"
    ):
        read(local_aws, stream, startingOffsets=start, failOnDataLoss="true")


def test_shards_per_task_reads_a_tasks_shards_together_every_record_once(
    local_aws, kinesis, unique_name
):
    from kinesis_dstream.sql.batch.group import SliceGroup

    ensure_stream(kinesis, unique_name, 3)
    with KinesisProducer(unique_name, client=kinesis) as producer:
        for i in range(60):
            producer.put(f"r{i}", f"key-{i}")
    alone = read(local_aws, unique_name, shardsPerTask="1")
    grouped = read(local_aws, unique_name, shardsPerTask="2")
    assert sorted(d for d, _ in grouped) == sorted(f"r{i}" for i in range(60))
    assert sorted(grouped) == sorted(alone)
    tasks = batch_reader(local_aws, unique_name, shardsPerTask="2")
    kinds = [type(t).__name__ for t in tasks.partitions()]
    assert kinds == [SliceGroup.__name__, "ShardSlice"]
    alone_kinds = [
        type(t).__name__
        for t in batch_reader(local_aws, unique_name, shardsPerTask="1").partitions()
    ]
    assert alone_kinds == ["ShardSlice"] * 3
    # By default, as the source groups shards behind: two a task, at least two tasks.
    default = [type(t).__name__ for t in batch_reader(local_aws, unique_name).partitions()]
    assert default == [SliceGroup.__name__, "ShardSlice"]


def test_a_slice_that_fails_fails_its_group_task_and_stops_the_others(
    local_aws, kinesis, unique_name
):
    import threading
    from dataclasses import replace

    from kinesis_dstream.errors import KinesisDStreamError
    from kinesis_dstream.sql.batch.group import SliceGroup

    ensure_stream(kinesis, unique_name, 1)
    with KinesisProducer(unique_name, client=kinesis) as producer:
        for i in range(5):
            producer.put(f"r{i}", "one-key")
    reader = batch_reader(local_aws, unique_name)
    (real,) = reader.partitions()
    gone = replace(real, shard_id="shardId-000000000099")
    with pytest.raises(KinesisDStreamError, match="shardId-000000000099"):
        list(reader.read(SliceGroup((real, gone))))
    assert not [t for t in threading.enumerate() if t.name.startswith("kinesis-slice-")]
