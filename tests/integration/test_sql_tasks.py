"""Several streams, several shards a task and the read bounds, on moto without Spark.

The reader's calls are made directly, as Spark's source runner and executor tasks make
them (see test_sql_runner.py); what the server holds is the ground truth.
"""

from __future__ import annotations

import json
import time

import pytest

from kinesis_dstream.retrieval.streams import ensure_stream
from kinesis_dstream.sql.driver.lag import CONSUMER_LAG_METRIC
from kinesis_dstream.sql.executor.group import GroupPartition, plan_tasks
from kinesis_dstream.sql.executor.partition import RangePartition
from kinesis_dstream.sql.offsets import ShardRange

from ..support.records import put_records
from ..support.waiting import wait_until
from .test_sql_runner import _all, reader_for


def data_of(reader, start, end):
    out = []
    for part in reader.partitions(start, end):
        for batch in reader.read(part):
            out += batch.column(0).to_pylist()
    return out


def next_offset(reader, offset, timeout_s=10):
    """The first offset past ``offset`` (peeks are paced: new records show in time)."""

    def moved():
        end = reader.latestOffset(offset, _all())
        return end if json.dumps(end) != json.dumps(offset) else None

    return wait_until(moved, timeout_s, "a new offset", interval_s=0.05)


def offset_reading(reader, offset, count, timeout_s=10):
    """The first offset past ``offset`` whose batch holds ``count`` records.

    Each shard's peek is paced on its own, so the first offset that moves may cover one
    shard's new records and leave another's to the next batch (nothing is lost).
    """

    def covers():
        end = reader.latestOffset(offset, _all())
        return end if len(data_of(reader, offset, end)) >= count else None

    return wait_until(covers, timeout_s, f"an offset covering {count} records", interval_s=0.05)


def drain(reader, offset, rounds=20):
    """Batches until nothing is new: (records, the last offset)."""
    got = []
    for _ in range(rounds):
        end = reader.latestOffset(offset, _all())
        if json.dumps(end) == json.dumps(offset):
            return got, offset
        got += data_of(reader, offset, end)
        reader.commit(end)
        offset = end
    raise AssertionError(f"still new records after {rounds} batches")


def test_two_streams_never_re_read_a_quiet_streams_last_ranges(
    local_aws, kinesis, unique_name, tmp_path
):
    a, b = f"{unique_name}-a", f"{unique_name}-b"
    for stream in (a, b):
        ensure_stream(kinesis, stream, 2)
    put_records(kinesis, a, 20, key="a{i}")
    put_records(kinesis, b, 30, start=100, key="b{i}")
    reader = reader_for(local_aws, f"{a},{b}", tmp_path)
    start = reader.initialOffset()
    assert [p["stream"] for p in start["streams"]] == [a, b]
    got, offset = drain(reader, start)
    assert sorted(got) == sorted(
        [f"r{i}".encode() for i in range(20)] + [f"r{i}".encode() for i in range(100, 130)]
    )
    # only stream a gets new records: b's part keeps its last ranges, which must not be
    # read again, neither now nor in a replay of the batch after a crash
    put_records(kinesis, a, 5, start=20, key="a{i}")
    end = offset_reading(reader, offset, 5)
    assert end["streams"][1] == offset["streams"][1]
    assert sorted(data_of(reader, offset, end)) == [f"r{i}".encode() for i in range(20, 25)]
    replay = reader_for(local_aws, f"{a},{b}", tmp_path)
    assert sorted(data_of(replay, offset, end)) == [f"r{i}".encode() for i in range(20, 25)]
    reader.commit(end)
    # and nothing is left over afterwards
    assert drain(reader, end)[0] == []


def test_a_row_limit_is_shared_by_the_streams(local_aws, kinesis, unique_name, tmp_path):
    from pyspark.sql.streaming.datasource import ReadMaxRows

    a, b = f"{unique_name}-a", f"{unique_name}-b"
    for stream in (a, b):
        ensure_stream(kinesis, stream, 1)
        put_records(kinesis, stream, 40)
    reader = reader_for(local_aws, f"{a},{b}", tmp_path)
    offset = reader.initialOffset()
    total = 0
    for _ in range(20):
        end = reader.latestOffset(offset, ReadMaxRows(15))
        if end == offset:
            break
        batch = data_of(reader, offset, end)
        assert len(batch) <= 15
        total += len(batch)
        offset = end
    assert total == 80


def test_shards_per_task_groups_ranges_and_delivers_each_once(
    local_aws, kinesis, unique_name, tmp_path
):
    ensure_stream(kinesis, unique_name, 5)
    put_records(kinesis, unique_name, 500)
    reader = reader_for(local_aws, unique_name, tmp_path, shardsPerTask="2", fetchBufferSize="10mb")
    start = reader.initialOffset()
    end = reader.latestOffset(start, _all())
    tasks = reader.partitions(start, end)
    assert [len(t.parts) for t in tasks] == [2, 2, 1]
    assert all(isinstance(t, GroupPartition) for t in tasks)
    shares = {p.max_bytes for t in tasks for p in t.parts}
    assert shares == {10 * 1024 * 1024 // 5}
    got = data_of(reader, start, end)
    assert sorted(got) == sorted(f"r{i}".encode() for i in range(500))
    again = reader_for(local_aws, unique_name, tmp_path, shardsPerTask="2")
    assert sorted(data_of(again, start, end)) == sorted(got)  # replay: the recorded ends


def test_a_read_time_bound_ends_a_range_and_its_replay_is_exact(
    local_aws, kinesis, unique_name, tmp_path
):
    ensure_stream(kinesis, unique_name, 1)
    put_records(kinesis, unique_name, 300)
    # 10 records a call, 200 ms apart: 1 s lets about 5 calls through, not 30
    options = {"maxRecordsPerFetch": "10", "maxFetchTimeInMs": "1000"}
    reader = reader_for(local_aws, unique_name, tmp_path, **options)
    start = reader.initialOffset()
    end = reader.latestOffset(start, _all())
    [part] = reader.partitions(start, end)
    assert isinstance(part, RangePartition)
    began = time.monotonic()
    first = data_of(reader, start, end)
    assert time.monotonic() - began < 20
    assert 0 < len(first) < 300
    replay = reader_for(local_aws, unique_name, tmp_path, **options)
    assert data_of(replay, start, end) == first
    rest, _ = drain(reader, end, rounds=100)
    assert first + rest == [f"r{i}".encode() for i in range(300)]


def test_max_fetch_rate_paces_a_range_read(local_aws, kinesis, unique_name, tmp_path):
    ensure_stream(kinesis, unique_name, 1)
    with_payload = [("x" * 10_000) for _ in range(60)]  # 600 kB
    for i, data in enumerate(with_payload):
        kinesis.put_record(StreamName=unique_name, Data=data.encode(), PartitionKey=str(i))
    reader = reader_for(
        local_aws, unique_name, tmp_path, maxFetchRate="0.25", maxRecordsPerFetch="10"
    )
    start = reader.initialOffset()
    end = reader.latestOffset(start, _all())
    began = time.monotonic()
    assert len(data_of(reader, start, end)) == 60
    # 600 kB at 0.25 MiB/s: the last page may go once 500 kB are paced, about 1.9 s
    assert time.monotonic() - began >= 1.8


def test_consumer_lag_metric_is_published_per_batch(
    local_aws, kinesis, unique_name, tmp_path, monkeypatch
):
    # CloudWatch's endpoint comes from botocore's environment conventions, as on AWS
    monkeypatch.setenv("AWS_ENDPOINT_URL_CLOUDWATCH", local_aws.endpoint_url)
    ensure_stream(kinesis, unique_name, 1)
    put_records(kinesis, unique_name, 10)
    reader = reader_for(local_aws, unique_name, tmp_path, emitConsumerLagMetrics="true")
    start = reader.initialOffset()
    end = reader.latestOffset(start, _all())
    assert len(data_of(reader, start, end)) == 10
    reader.latestOffset(end, _all())  # planning the next batch reads the ends back
    assert reader.runner.lag.metrics_published == 1
    cloudwatch = local_aws.client("cloudwatch")
    metrics = cloudwatch.list_metrics(Namespace="Glue", MetricName=CONSUMER_LAG_METRIC)
    dimensions = [m["Dimensions"] for m in metrics["Metrics"]]
    assert [{"Name": "StreamName", "Value": unique_name}] in dimensions


def test_a_python_credentials_provider_signs_the_calls(local_aws, kinesis, unique_name, tmp_path):
    from kinesis_dstream.sql import KinesisStreamReader, SourceOptions

    ensure_stream(kinesis, unique_name, 1)
    put_records(kinesis, unique_name, 5)
    options = SourceOptions.parse(
        {
            "kinesis.streamName": unique_name,
            "kinesis.endpointUrl": local_aws.endpoint_url,
            "kinesis.region": local_aws.region_name,
            "kinesis.metadataPath": str(tmp_path / "ends"),
            "kinesis.startingPosition": "TRIM_HORIZON",
            "kinesis.credentialProviderClass": "tests.support.credentials_provider.StaticProvider",
            "kinesis.credentialProviderParam": "AKIDFROMPROVIDER",
        }
    )
    client = options.connection.client_spec().client()
    assert client._request_signer._credentials.access_key == "AKIDFROMPROVIDER"
    assert "AKIDFROMPROVIDER" not in repr(options)
    reader = KinesisStreamReader(options)
    start = reader.initialOffset()
    end = next_offset(reader, start)
    assert sorted(data_of(reader, start, end)) == [f"r{i}".encode() for i in range(5)]


def test_a_deleted_stream_fails_the_query_naming_it(local_aws, kinesis, unique_name, tmp_path):
    from kinesis_dstream.errors import StreamNotFoundError

    a, b = f"{unique_name}-a", f"{unique_name}-b"
    for stream in (a, b):
        ensure_stream(kinesis, stream, 1)
    put_records(kinesis, a, 3)
    reader = reader_for(local_aws, f"{a},{b}", tmp_path, describeShardInterval="1ms")
    start = reader.initialOffset()
    kinesis.delete_stream(StreamName=b)
    deadline = time.monotonic() + 30
    with pytest.raises(StreamNotFoundError, match=b):
        while time.monotonic() < deadline:  # ListShards answers for a deleting stream
            reader.latestOffset(start, _all())
            time.sleep(0.1)


def _ranges(stream, count):
    return [
        RangePartition(stream, f"shard-{i:03d}", f"k{i}", "q", ShardRange("TRIM_HORIZON", 10))
        for i in range(count)
    ]


def test_by_default_ranges_near_their_tip_are_grouped_and_a_backlog_goes_two_a_task():
    quiet = _ranges("s", 128)
    lags = {("s", p.shard_id): 200 for p in quiet}
    tasks = plan_tasks(quiet, None, None, lags)
    assert [len(t.parts) for t in tasks] == [64] * 2  # 128 quiet shards: 2 tasks
    assert [p for t in tasks for p in t.parts] == quiet  # each range once, in order
    few = _ranges("s", 4)
    tasks = plan_tasks(few, None, None, {("s", p.shard_id): 0 for p in few})
    assert [t.parts for t in tasks] == [tuple(few[:2]), tuple(few[2:])]  # one wave on 2 slots
    behind = {("s", p.shard_id): (60_000 if i < 3 else 0) for i, p in enumerate(quiet)}
    tasks = plan_tasks(quiet, None, None, behind)
    # catching up: two a task at most (a read mostly waits for Kinesis' pace), 2 tasks
    assert tasks[0].parts == (quiet[0],) and tasks[1].parts == tuple(quiet[1:3])
    assert [len(t.parts) for t in tasks[2:]] == [62, 63]
    assert [p for t in tasks[2:] for p in t.parts] == quiet[3:]
    many = _ranges("s", 512)
    grouped = plan_tasks(many, None, None, {("s", p.shard_id): 0 for p in many})
    assert [len(t.parts) for t in grouped] == [64] * 8  # 512 quiet shards: 8 tasks
    for count, sizes in ((5, [2, 3]), (9, [4, 5]), (20, [10, 10])):
        parts = _ranges("s", count)  # at least 2 tasks, as even as can be
        grouped = plan_tasks(parts, None, None, {("s", p.shard_id): 0 for p in parts})
        assert [len(t.parts) for t in grouped] == sizes
    two = _ranges("s", 2)
    assert plan_tasks(two, None, None, {("s", p.shard_id): 0 for p in two}) == two
    # unknown lag (a replay after a restart: no peek yet): two a task
    tasks = plan_tasks(quiet, None, None, {})
    assert [t.parts for t in tasks] == [tuple(quiet[i : i + 2]) for i in range(0, 128, 2)]
    # another stream's lag does not count for this one: behind, two a task
    others = plan_tasks(few, None, None, {("other", p.shard_id): 0 for p in few})
    assert [len(t.parts) for t in others] == [2, 2]
    # an explicit shardsPerTask wins
    assert [len(t.parts) for t in plan_tasks(few, 3, None, {})] == [3, 1]
