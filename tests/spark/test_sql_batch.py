"""Batch reads (``spark.read.format("kinesis")``) on local Spark: kinesalite for a range
across a split and a merge, moto's server for a live stream and the retention."""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from kinesis_dstream.demo.readback import read_all_records
from kinesis_dstream.retrieval.streams import ensure_stream

from ..support.waiting import wait_until

pytestmark = pytest.mark.spark


def batch(session, server, stream, **options):
    base = {"streamName": stream, "endpointUrl": server.endpoint_url, "region": server.region_name}
    return session.read.format("kinesis").options(**base, **options).load()


def boundary() -> int:
    """Epoch milliseconds between the puts before it and the puts after it.

    Arrival timestamps are whole milliseconds of the server's clock (this machine's): a
    put that returned before the call arrived at or before the millisecond the call
    began, a put made after it returns arrives at or after the next one.
    """
    edge = math.floor(time.time() * 1000) + 1
    while time.time() * 1000 < edge + 1:
        time.sleep(0.001)
    return edge


def put(kinesis, stream, phase, count, spread=True):
    """``count`` records named ``phase-i``; ``spread``: their hash keys evenly over the
    key space (every shard gets some), else hashed from their names."""
    entries = [
        {"Data": f"{phase}-{i}".encode(), "PartitionKey": f"{phase}-{i}"} for i in range(count)
    ]
    if spread:
        for i, entry in enumerate(entries):
            entry["ExplicitHashKey"] = str(i * (2**128 - 1) // count)
    answer = kinesis.put_records(StreamName=stream, Records=entries)
    assert answer.get("FailedRecordCount", 0) == 0
    return [e["Data"].decode() for e in entries]


def open_shards(kinesis, stream):
    shards = kinesis.list_shards(StreamName=stream)["Shards"]
    return [s for s in shards if "EndingSequenceNumber" not in s["SequenceNumberRange"]]


def reshard(kinesis, stream, call, **kwargs):
    """Split or merge, then wait out kinesalite's creation time of the new shards (a second
    after it applies the change, which it does later than the call, on a timer): a record
    put to them before it gets that future moment as its arrival time, which would put it
    after a range's end that it was put before."""
    getattr(kinesis, call)(StreamName=stream, **kwargs)
    wait_until(
        lambda: (
            kinesis.describe_stream_summary(StreamName=stream)["StreamDescriptionSummary"][
                "StreamStatus"
            ]
            == "ACTIVE"
        ),
        60,
        f"stream {stream} ACTIVE",
    )
    # ACTIVE is written with the new shards: the change was applied before this moment
    created = time.time() + 1.0
    while time.time() < created + 0.002:
        time.sleep(0.01)


@pytest.mark.kinesalite
def test_a_range_by_timestamps_across_a_split_and_a_merge_reads_exactly_the_records_inside(
    session, kinesalite, unique_name
):
    kinesis = kinesalite.client("kinesis")
    ensure_stream(kinesis, unique_name, 1)
    before = put(kinesis, unique_name, "before", 20)
    start = boundary()
    inside = put(kinesis, unique_name, "parent", 30)
    (parent,) = open_shards(kinesis, unique_name)
    reshard(
        kinesis,
        unique_name,
        "split_shard",
        ShardToSplit=parent["ShardId"],
        NewStartingHashKey=str(2**127),
    )
    inside += put(kinesis, unique_name, "children", 30)
    low, high = sorted(
        open_shards(kinesis, unique_name), key=lambda s: int(s["HashKeyRange"]["StartingHashKey"])
    )
    reshard(
        kinesis,
        unique_name,
        "merge_shards",
        ShardToMerge=low["ShardId"],
        AdjacentShardToMerge=high["ShardId"],
    )
    inside += put(kinesis, unique_name, "merged", 30)
    end = boundary()
    after = put(kinesis, unique_name, "after", 20)

    rows = (
        batch(
            session,
            kinesalite,
            unique_name,
            startingTimestamp=str(start),
            endingTimestamp=str(end),
        )
        .selectExpr("cast(data as string) d", "shardId")
        .collect()
    )

    got = [row.d for row in rows]
    assert sorted(got) == sorted(inside)  # every record once, none outside
    assert not set(got) & set(before + after)
    shards = {row.shardId for row in rows}
    assert len(shards) == 4  # the parent, both children, the merged shard


def test_a_range_to_latest_on_a_stream_being_written_ends_at_the_planned_moment(
    session, local_aws, kinesis, unique_name
):
    ensure_stream(kinesis, unique_name, 2)
    put(kinesis, unique_name, "old", 50, spread=False)
    stop = threading.Event()
    written: list = []

    def write() -> None:  # the stream's producer, all through the read
        i = 0
        while not stop.is_set():
            written.extend(put(kinesis, unique_name, f"live{i}", 10, spread=False))
            i += 1
            stop.wait(0.02)

    writer = threading.Thread(target=write, name="batch-test-writer")
    writer.start()
    try:
        wait_until(lambda: len(written) >= 50, 60, "the writer's first records")
        planned_after = datetime.now(timezone.utc)
        rows = (
            batch(session, local_aws, unique_name)
            .selectExpr("cast(data as string) d", "approximateArrivalTimestamp t")
            .collect()
        )
        planned_before = datetime.now(timezone.utc)
        count = len(written)
        wait_until(lambda: len(written) > count, 60, "records written after the read")
    finally:
        stop.set()
        writer.join(30)
    truth = {
        r["Data"].decode(): r["ApproximateArrivalTimestamp"]
        for r in read_all_records(kinesis, unique_name)
    }
    got = [row.d for row in rows]
    assert len(got) == len(set(got))
    kept = {d: truth[d] for d in got}
    left = {d: t for d, t in truth.items() if d not in kept}
    # one cut for every shard: each record that arrived before the planned moment, none after
    assert max(kept.values()) < min(left.values())
    assert all(t < planned_before for t in kept.values())
    assert all(d in kept for d, t in truth.items() if t < planned_after - timedelta(milliseconds=1))
    assert any(t >= planned_before for t in left.values())  # written during and after the read


def test_a_range_partly_past_the_retention_says_how_many_hours_were_not_there(
    session, local_aws, kinesis, stream
):
    put(kinesis, stream, "kept", 5, spread=False)
    start = datetime.now(timezone.utc) - timedelta(hours=30)  # retention: 24 hours
    options = {"startingTimestamp": start.isoformat()}
    rows = batch(session, local_aws, stream, **options).collect()
    assert len(rows) == 5  # what is retained is read (the gap is a warning line) ...
    with pytest.raises(Exception) as failed:  # ... or nothing, when loss must fail the read
        batch(session, local_aws, stream, failOnDataLoss="true", **options).collect()
    assert "keeps records 24 hours" in str(failed.value)
    # 6 hours and the minutes the read took to plan
    assert re.search(r"is 6\.\d\d hours before the oldest retained moment", str(failed.value))


def test_a_batch_read_parses_payloads_into_the_streaming_sources_columns(
    session, local_aws, kinesis, stream
):
    kinesis.put_records(
        StreamName=stream,
        Records=[
            {"Data": b'{"user": "ann", "n": 1}', "PartitionKey": "a"},
            {"Data": b"not json", "PartitionKey": "b"},
        ],
    )
    options = {"classification": "json", "schema": "user STRING, n INT"}
    df = batch(session, local_aws, stream, **options)
    streaming = (
        session.readStream.format("kinesis")
        .options(streamName=stream, endpointUrl=local_aws.endpoint_url, **options)
        .load()
    )
    assert df.schema == streaming.schema
    rows = sorted(df.collect(), key=lambda r: r.user or "")
    assert [(r.user, r.n, r._corrupt_record) for r in rows] == [
        (None, None, b"not json"),
        ("ann", 1, None),
    ]


def test_shards_per_task_reads_a_tasks_shards_together_through_spark(
    session, local_aws, kinesis, unique_name
):
    ensure_stream(kinesis, unique_name, 3)
    sent = put(kinesis, unique_name, "g", 30)
    df = batch(session, local_aws, unique_name, shardsPerTask="2")
    assert df.rdd.getNumPartitions() == 2  # a task of two shards, a task of one
    rows = df.select("data", "shardId").collect()
    assert sorted(r.data.decode() for r in rows) == sorted(sent)
    assert len({r.shardId for r in rows}) == 3


@pytest.mark.slow  # a Spark application of its own: a minute on a loaded machine
def test_the_backfill_example_writes_a_day_as_parquet_as_documented(tmp_path):
    example = Path(__file__).resolve().parents[2] / "examples" / "kinesis_batch_backfill.py"
    done = subprocess.run(
        [sys.executable, str(example), "--local"],
        cwd=tmp_path,
        env={**os.environ, "PYSPARK_PYTHON": sys.executable},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "BACKFILLED 1000 records (1000 distinct) of " in done.stdout
