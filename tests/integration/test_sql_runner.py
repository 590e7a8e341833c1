"""The source's driver and executor halves on moto's server, without Spark.

The runner's calls and ``read()`` are called directly, as Spark's source runner and
executor tasks call them; what the server holds is the ground truth.
"""

import json
import time

import pytest

from kinesis_dstream import KinesisProducer
from kinesis_dstream.errors import RecordsLostError, ThrottledError
from kinesis_dstream.retrieval.streams import ensure_stream
from kinesis_dstream.sql import KinesisStreamReader, SourceOptions
from kinesis_dstream.sql.offsets import Offset, make_offset

from ..support.faults import CallErrors
from ..support.records import put_records
from ..support.waiting import wait_until


class ExecutorThrottling(CallErrors):
    """Throttle the executors' GetRecords (Limit > 2), not the runner's small peeks."""

    def __init__(self, client):
        super().__init__(client, "kinesis", "GetRecords", lambda n: None)

    def _handle(self, params=None, **kwargs):
        if json.loads(params["body"]).get("Limit", 0) > 2:
            self._decide = lambda n: "ProvisionedThroughputExceededException"
        else:
            self._decide = lambda n: None
        return super()._handle(**kwargs)


def reader_for(local_aws, stream, tmp_path, **options):
    opts = SourceOptions.parse(
        {
            "streamName": stream,
            "endpointUrl": local_aws.endpoint_url,
            "region": local_aws.region_name,
            "metadataPath": str(tmp_path / "ends"),
            "initialPosition": "trim_horizon",
            "awsAccessKeyId": local_aws.access_key_id,
            "awsSecretKey": local_aws.secret_access_key,
            **options,
        }
    )
    return KinesisStreamReader(opts)


def rows(reader, start, end):
    """What executor tasks yield for batch (start, end), as (data, shard, seq, sub)."""
    out = []
    for part in reader.partitions(start, end):
        for batch in reader.read(part):
            table = batch.to_pydict()
            out += list(
                zip(
                    table["data"],
                    table["shardId"],
                    table["sequenceNumber"],
                    table["subSequenceNumber"],
                )
            )
    return out


def test_a_replayed_range_yields_exactly_the_first_reads_records(
    local_aws, kinesis, unique_name, tmp_path
):
    ensure_stream(kinesis, unique_name, 1)
    put_records(kinesis, unique_name, 30)
    reader = reader_for(local_aws, unique_name, tmp_path)
    start = reader.initialOffset()
    end = reader.latestOffset(start, _all())
    assert end != start
    first = rows(reader, start, end)
    assert [r[0] for r in first] == [f"r{i}".encode() for i in range(30)]
    put_records(kinesis, unique_name, 20, start=30)
    # a crash before commit: Spark re-plans (start, end) from its offset log in a new
    # process, and the executors read it again
    again = reader_for(local_aws, unique_name, tmp_path)
    assert rows(again, start, end) == first
    following = again.latestOffset(end, _all())
    assert [r[0] for r in rows(again, end, following)] == [f"r{i}".encode() for i in range(30, 50)]
    # no credentials in offsets
    assert "testing" not in json.dumps([start, end, following])


def test_no_new_records_returns_the_start_offset_and_peeks_are_paced(
    local_aws, kinesis, unique_name, tmp_path
):
    ensure_stream(kinesis, unique_name, 2)
    reader = reader_for(local_aws, unique_name, tmp_path, minFetchPeriod="200ms")
    start = reader.initialOffset()
    deadline = time.monotonic() + 1.0
    polls = 0
    while time.monotonic() < deadline:
        assert json.dumps(reader.latestOffset(start, _all())) == json.dumps(start)
        polls += 1
        time.sleep(0.01)
    peeker = reader.runner.peeker
    # at most one GetShardIterator plus one GetRecords per shard per 200 ms
    assert polls > 20 and peeker.calls <= 2 * (2 + 1.0 / 0.2 + 1)
    put_records(kinesis, unique_name, 5)
    # Each shard's peek sees its records in its own time: they may come in several batches.
    deadline = time.monotonic() + 10
    got: list = []
    offset = start
    while len(got) < 5:
        assert time.monotonic() < deadline, f"new records not all seen within 10 s: {got}"
        end = reader.latestOffset(offset, _all())
        if json.dumps(end) != json.dumps(offset):
            got += [r[0] for r in rows(reader, offset, end)]
            offset = end
        time.sleep(0.05)
    assert sorted(got) == sorted(f"r{i}".encode() for i in range(5))  # each exactly once


def test_a_batch_ends_inside_an_aggregate_and_the_next_resumes_at_the_next_sub_record(
    local_aws, kinesis, unique_name, tmp_path
):
    ensure_stream(kinesis, unique_name, 1)
    with KinesisProducer(unique_name, client=kinesis, aggregate=True) as producer:
        for i in range(10):
            producer.put(f"u{i}", f"key{i}")
    reader = reader_for(local_aws, unique_name, tmp_path, maxFetchRecordsPerShard="4")
    offset = reader.initialOffset()
    seen = []
    for _ in range(3):
        end = reader.latestOffset(offset, _all())
        batch = rows(reader, offset, end)
        assert len(batch) == 4 or (len(batch) == 2 and len(seen) == 8)
        seen += batch
        offset = end
    assert [r[0] for r in seen] == [f"u{i}".encode() for i in range(10)]
    assert [r[3] for r in seen] == list(range(10))
    assert len({r[2] for r in seen}) == 1  # one outer record
    assert json.dumps(reader.latestOffset(offset, _all())) == json.dumps(offset)


def test_a_position_past_retention_fails_or_restarts_at_trim_horizon(
    local_aws, kinesis, unique_name, tmp_path
):
    ensure_stream(kinesis, unique_name, 1)
    put_records(kinesis, unique_name, 3)
    shard = kinesis.list_shards(StreamName=unique_name)["Shards"][0]["ShardId"]
    first_seq = int(
        kinesis.get_records(
            ShardIterator=kinesis.get_shard_iterator(
                StreamName=unique_name, ShardId=shard, ShardIteratorType="TRIM_HORIZON"
            )["ShardIterator"]
        )["Records"][0]["SequenceNumber"]
    )
    # a checkpoint whose position is older than the oldest record the shard retains
    trimmed = make_offset(
        unique_name, "q", 5, {shard: {"seq": str(first_seq - 1), "sub": 0}}
    ).to_json()
    strict = reader_for(local_aws, unique_name, tmp_path, failOnDataLoss="true")
    with pytest.raises(RecordsLostError) as info:
        strict.latestOffset(trimmed, _all())
    assert shard in str(info.value) and str(first_seq - 1) in str(info.value)
    assert unique_name in str(info.value)
    lenient = reader_for(local_aws, unique_name, tmp_path)
    end = lenient.latestOffset(trimmed, _all())
    assert Offset.from_json(end).ranges()[shard].start == "TRIM_HORIZON"
    assert [r[0] for r in rows(lenient, trimmed, end)] == [b"r0", b"r1", b"r2"]


def test_throttling_past_the_budget_ends_ranges_early_then_fails_the_query(
    local_aws, kinesis, unique_name, tmp_path
):
    ensure_stream(kinesis, unique_name, 1)
    put_records(kinesis, unique_name, 10)
    reader = reader_for(local_aws, unique_name, tmp_path)
    client = reader.settings.client_spec.client()  # the executor's (this process's) client
    errors = ExecutorThrottling(client)
    try:
        offset = reader.initialOffset()
        with pytest.raises(ThrottledError) as info:
            for _ in range(5):
                end = reader.latestOffset(offset, _all())
                assert rows(reader, offset, end) == []  # nothing read, nothing lost
                offset = end
    finally:
        errors.remove()
    assert "shard" in str(info.value) and unique_name in str(info.value)
    assert "3 micro-batches in a row" in str(info.value)
    # the budget is per read: once the throttling stops, every record arrives
    end = reader_for(local_aws, unique_name, tmp_path).latestOffset(offset, _all())
    assert len(rows(reader, offset, end)) == 10


def _all():
    from pyspark.sql.streaming.datasource import ReadAllAvailable

    return ReadAllAvailable()


def test_the_reported_latest_offset_carries_the_databricks_lag_names(
    local_aws, kinesis, unique_name, tmp_path
):
    """``avgMsBehindLatest``, ``maxMsBehindLatest``, ``minMsBehindLatest``,
    ``numTotalShards``, ``numClosedShards`` (the Databricks source's metric names)."""
    ensure_stream(kinesis, unique_name, 2)
    reader = reader_for(local_aws, unique_name, tmp_path, describeShardInterval="100ms")
    start = reader.initialOffset()
    put_records(kinesis, unique_name, 20)
    end = reader.latestOffset(start, _all())
    report = reader.reportLatestOffset()
    lags = [v for v in report["millisBehindLatest"].values() if v is not None]
    assert lags and report["maxMsBehindLatest"] == max(lags) == report["maxMillisBehindLatest"]
    assert report["minMsBehindLatest"] == min(lags)
    assert report["avgMsBehindLatest"] == sum(lags) / len(lags)
    assert (report["numTotalShards"], report["numClosedShards"]) == (2, 0)
    shard = kinesis.list_shards(StreamName=unique_name)["Shards"][0]
    low, high = int(shard["HashKeyRange"]["StartingHashKey"]), int(
        shard["HashKeyRange"]["EndingHashKey"]
    )
    kinesis.split_shard(
        StreamName=unique_name,
        ShardToSplit=shard["ShardId"],
        NewStartingHashKey=str((low + high) // 2),
    )
    time.sleep(0.2)  # past describeShardInterval: the next plan lists the shards again
    reader.latestOffset(end, _all())
    report = reader.reportLatestOffset()
    assert (report["numTotalShards"], report["numClosedShards"]) == (4, 1)


@pytest.mark.kinesalite
def test_under_fan_out_a_shard_gets_its_next_range_five_seconds_after_its_last(
    efo_kinesalite, efo, unique_name, tmp_path
):
    """Kinesis refuses a subscription within 5 s of the last: a batch must not wait on it
    (its tasks would retry in backoff). The shard waits out the 5 s between ranges."""
    ensure_stream(efo, unique_name, 1)
    reader = reader_for(
        efo_kinesalite, unique_name, tmp_path, consumerMode="efo", consumerName=unique_name
    )
    start = reader.initialOffset()
    put_records(efo, unique_name, 5, data="a{i}")
    first = wait_until(lambda: _new_offset(reader, start), 20, "the first records' range")
    assert sorted(r[0] for r in rows(reader, start, first)) == [f"a{i}".encode() for i in range(5)]
    read_at = time.monotonic()  # the range's subscription was made by now
    put_records(efo, unique_name, 3, data="b{i}")
    assert json.dumps(reader.latestOffset(first, _all())) == json.dumps(first)  # not yet
    second = wait_until(lambda: _new_offset(reader, first), 20, "the next range")
    waited = time.monotonic() - read_at
    assert waited >= 4.5, f"a second range {waited:.2f} s after the first's subscription"
    assert sorted(r[0] for r in rows(reader, first, second)) == [f"b{i}".encode() for i in range(3)]
    # A trigger longer than 5 s: the next batch, 5 s after the last subscription, reads
    # the shard at once (paced from the last batch's planning, every other one skipped it)
    time.sleep(5.5)
    put_records(efo, unique_name, 2, data="c{i}")
    third = reader.latestOffset(second, _all())
    assert json.dumps(third) != json.dumps(second), "the shard was skipped a batch"
    assert sorted(r[0] for r in rows(reader, second, third)) == [b"c0", b"c1"]


def _new_offset(reader, start):
    end = reader.latestOffset(start, _all())
    return end if json.dumps(end) != json.dumps(start) else None


def test_a_position_after_dropped_records_is_no_data_loss_and_reads_only_what_is_new(
    local_aws, kinesis, unique_name, tmp_path
):
    """A batch whose last raw record gave no user record (an aggregate of another shard's
    records, dropped by the KCL's rule) ends at that record, whole. The peek proves the next
    position is still retained by reading that record first; read AFTER it, the check took
    the next record for the oldest retained and reported a data loss, and the batch read
    the shard again from TRIM_HORIZON (found by an independent review)."""
    from kinesis_dstream.kpl.aggregation import RecordAggregator

    ensure_stream(kinesis, unique_name, 2)
    low, high = sorted(
        kinesis.list_shards(StreamName=unique_name)["Shards"],
        key=lambda s: int(s["HashKeyRange"]["StartingHashKey"]),
    )
    in_high = str(int(high["HashKeyRange"]["StartingHashKey"]) + 5)
    kinesis.put_record(StreamName=unique_name, Data=b"p0", PartitionKey="x", ExplicitHashKey="1")
    aggregator = RecordAggregator()
    for i in range(3):
        aggregator.add(f"stale{i}".encode(), f"k{i}", explicit_hash_key=in_high)
    (entry,) = aggregator.flush()
    entry["ExplicitHashKey"] = "2"  # a stale shard map: the aggregate lands on the low shard
    put = kinesis.put_record(StreamName=unique_name, **entry)
    assert put["ShardId"] == low["ShardId"]
    reader = reader_for(local_aws, unique_name, tmp_path, dropAggregatesOutsideShard="true")
    start = reader.initialOffset()
    first = wait_until(lambda: _new_offset(reader, start), 20, "the first batch")
    assert [r[0] for r in rows(reader, start, first)] == [b"p0"]
    kinesis.put_record(StreamName=unique_name, Data=b"p1", PartitionKey="x", ExplicitHashKey="1")
    second = wait_until(lambda: _new_offset(reader, first), 20, "the second batch")
    assert [r[0] for r in rows(reader, first, second)] == [b"p1"]  # not p0 again
    assert reader.reportLatestOffset()["dataLossEvents"] == 0


@pytest.mark.kinesalite
def test_available_now_under_fan_out_reads_everything_there_at_its_start(
    efo_kinesalite, efo, unique_name, tmp_path
):
    """AvailableNow ends at the first offset equal to its start: a shard waiting out the
    5 s between its subscriptions must not look like a shard with nothing left (the run
    ended after its first range, 10 of 20 records, found by an independent review)."""
    ensure_stream(efo, unique_name, 1)
    put_records(efo, unique_name, 20, data="n{i}")
    reader = reader_for(
        efo_kinesalite,
        unique_name,
        tmp_path,
        consumerMode="efo",
        consumerName=unique_name,
        maxFetchRecordsPerShard="10",
    )
    offset = reader.initialOffset()
    reader.prepareForTriggerAvailableNow()
    got: list = []
    for _ in range(10):  # what Spark does: batches until the offset stops moving
        end = reader.latestOffset(offset, _all())
        if json.dumps(end) == json.dumps(offset):
            break
        got += [r[0] for r in rows(reader, offset, end)]
        offset = end
    assert sorted(got) == sorted(f"n{i}".encode() for i in range(20))
