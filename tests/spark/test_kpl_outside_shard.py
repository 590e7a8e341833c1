"""Aggregates from AWS's own aggregator over multi-shard streams: nothing is lost.

``aws-kinesis-agg`` is not shard-aware: an aggregate lands in the shard of its first key
and holds keys of every shard. The KCL drops such aggregates whole; we deliver every user
record and count those outside the shard's range, in ``deaggregate()``, ``createStream``
and the Structured Streaming source. The KCL's drop is opt-in, and counted exactly.
"""

from __future__ import annotations

import json
import time

import pytest

from kinesis_dstream import InitialPositionInStream, KinesisUtils
from kinesis_dstream.retrieval.reader import ReaderConfig, ShardReader, StartPosition
from kinesis_dstream.retrieval.streams import ensure_stream, list_shards

from ..support.kpl_streams import put_agg_aggregates
from ..support.streaming import Collected, progress_of
from ..support.waiting import wait_until


def _read_every_shard(kinesis, stream, config):
    got, stats = [], {}
    for shard in list_shards(kinesis, stream):
        keys = shard["HashKeyRange"]
        reader = ShardReader(
            kinesis,
            stream,
            shard["ShardId"],
            StartPosition.trim_horizon(),
            hash_key_range=(keys["StartingHashKey"], keys["EndingHashKey"]),
            config=config,
        )
        while True:
            batch = reader.read(max_records=10_000)
            got += [r.data.decode() for r in batch.records]
            if not batch.records and not batch.millis_behind_latest:
                break
        stats[shard["ShardId"]] = reader.stats
    return got, stats


@pytest.mark.parametrize("drop", [False, True])
def test_deaggregate_delivers_every_user_record_and_counts_the_ones_outside(
    kinesis, unique_name, drop
):
    ensure_stream(kinesis, unique_name, 4)
    put = put_agg_aggregates(kinesis, unique_name, aggregates=20, per=50, plain=200)
    assert put.aggregates_outside == 20  # every aggregate straddles shards

    got, stats = _read_every_shard(
        kinesis, unique_name, ReaderConfig(min_call_interval_s=0, drop_outside_shard=drop)
    )

    outside = {s: st.user_records_outside_shard for s, st in stats.items()}
    assert {s: n for s, n in outside.items() if n} == put.outside_by_shard
    dropped = sum(st.user_records_dropped for st in stats.values())
    if drop:
        assert len(got) == put.kept_by_kcl_rule() == 200
        assert sum(st.aggregates_dropped for st in stats.values()) == put.aggregates_outside
        assert dropped == put.records_in_those == 1_000
    else:
        assert sorted(got) == sorted(put.sent) and len(got) == 1_200
        assert dropped == 0


def _outside_totals(stream):
    per_shard = progress_of(stream).get("kpl_outside_shard", {})
    return tuple(
        sum(c[key] for c in per_shard.values())
        for key in ("user_records_outside_shard", "aggregates_dropped", "user_records_dropped")
    )


@pytest.mark.spark
@pytest.mark.parametrize("drop", [False, True])
def test_create_stream_delivers_every_word_of_aws_kinesis_agg_aggregates(
    ssc, local_aws, kinesis, unique_name, drop
):
    ensure_stream(kinesis, unique_name, 4)
    put = put_agg_aggregates(kinesis, unique_name, aggregates=20, per=50, plain=200)
    stream = KinesisUtils.createStream(
        ssc,
        unique_name,
        unique_name,
        local_aws.endpoint_url,
        local_aws.region_name,
        InitialPositionInStream.TRIM_HORIZON,
        1,
        dynamoDBEndpointUrl=local_aws.endpoint_url,
        cloudWatchEndpointUrl=local_aws.endpoint_url,
        fetchIntervalMs=200,
        failoverTimeMs=3000,
        dropAggregatesOutsideShard=drop,
    )
    got = Collected(stream.flatMap(lambda line: line.split()))
    ssc.start()
    expected = sorted(put.sent) if not drop else None
    want = len(put.sent) if not drop else put.kept_by_kcl_rule()
    items = got.wait_for(lambda items: len(items) >= want, 90, f"{want} words")
    counts = put.counts(drop)
    wait_until(lambda: _outside_totals(unique_name) == counts, 30, f"counts {counts}")
    got.wait_batches(2)  # nothing more may arrive
    ssc.stop(stopSparkContext=False, stopGraceFully=True)
    items = got.snapshot()
    if expected is not None:
        assert sorted(items) == expected
    else:
        assert sorted(items) == sorted(f"plain-{i}" for i in range(200))


@pytest.mark.spark
@pytest.mark.parametrize("drop", [False, True])
def test_the_source_delivers_every_record_of_aws_kinesis_agg_aggregates(
    session, local_aws, kinesis, unique_name, tmp_path, drop
):
    ensure_stream(kinesis, unique_name, 3)
    put = put_agg_aggregates(kinesis, unique_name, aggregates=10, per=100)
    rows: list = []

    def each(batch_df, _batch_id):
        rows.extend(r.data.decode() for r in batch_df.select("data").collect())

    df = (
        session.readStream.format("kinesis")
        .option("streamName", unique_name)
        .option("endpointUrl", local_aws.endpoint_url)
        .option("metadataPath", str(tmp_path / "ends"))
        .option("initialPosition", "trim_horizon")
        .option("dropAggregatesOutsideShard", str(drop).lower())
        .load()
    )
    query = (
        df.writeStream.foreachBatch(each)
        .option("checkpointLocation", str(tmp_path / "cp"))
        .trigger(processingTime="300 milliseconds")
        .start()
    )
    want = put.kept_by_kcl_rule() if drop else len(put.sent)
    counts = put.counts(drop)

    def reported():
        progress = query.lastProgress
        offset = progress and progress["sources"][0].get("latestOffset")
        if isinstance(offset, str):
            offset = json.loads(offset)
        if not offset:
            return None
        return (
            offset.get("userRecordsOutsideShard"),
            offset.get("aggregatesDroppedOutsideShard"),
            offset.get("userRecordsDroppedOutsideShard"),
        )

    try:
        deadline = time.monotonic() + 120
        n = 0
        while reported() != counts or len(rows) < want:
            assert query.exception() is None, query.exception()
            assert time.monotonic() < deadline, (reported(), counts, len(rows), want)
            # a new plain record makes a batch, whose planning reads the previous ends
            kinesis.put_record(StreamName=unique_name, Data=f"tick-{n}".encode(), PartitionKey="t")
            n += 1
            time.sleep(1.0)
    finally:
        query.stop()
    data = sorted(r for r in rows if not r.startswith("tick-"))
    if drop:
        assert data == []  # all ten aggregates straddle the shards: the KCL drops them all
    else:
        assert data == sorted(put.sent)
    assert reported() == counts
