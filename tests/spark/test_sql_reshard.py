"""Resharding under a running Structured Streaming query, on kinesalite (correct split/merge)."""

import threading
import time
from collections import defaultdict

import pytest

from kinesis_dstream import KinesisProducer
from kinesis_dstream.retrieval.streams import ensure_stream, wait_active

from ..support.streaming import running

pytestmark = [pytest.mark.spark, pytest.mark.kinesalite]

KEYS = [f"key-{i}" for i in range(20)]


def open_shards(kinesis, stream):
    return [
        s
        for s in kinesis.list_shards(StreamName=stream)["Shards"]
        if "EndingSequenceNumber" not in s["SequenceNumberRange"]
    ]


def test_a_split_and_a_merge_lose_nothing_and_keep_per_key_order(
    session,
    kinesalite,
    unique_name,
    tmp_path,
):
    kinesis = kinesalite.client("kinesis")
    ensure_stream(kinesis, unique_name, 1)
    batches = []
    lock = threading.Lock()

    def each(batch_df, batch_id):
        rows = batch_df.selectExpr("cast(data as string) d", "shardId", "sequenceNumber").collect()
        with lock:
            batches.append((batch_id, rows))

    df = (
        session.readStream.format("kinesis")
        .options(
            streamName=unique_name,
            endpointUrl=kinesalite.endpoint_url,
            initialPosition="trim_horizon",
            describeShardInterval="1s",
            metadataPath=str(tmp_path / "ends"),
        )
        .load()
    )
    query = (
        df.writeStream.foreachBatch(each)
        .option("checkpointLocation", str(tmp_path / "cp"))
        .trigger(processingTime="200 milliseconds")
        .start()
    )
    sent = defaultdict(int)
    stop = threading.Event()

    def produce():
        with KinesisProducer(unique_name, client=kinesalite.client("kinesis")) as producer:
            while not stop.is_set():
                for key in KEYS:
                    producer.put(f"{key}:{sent[key]}", key)
                    sent[key] += 1
                producer.flush()
                time.sleep(0.05)

    producer_thread = threading.Thread(target=produce)
    with running(query):
        producer_thread.start()
        try:
            time.sleep(1.5)
            parent = open_shards(kinesis, unique_name)[0]
            keys = parent["HashKeyRange"]
            middle = (int(keys["StartingHashKey"]) + int(keys["EndingHashKey"])) // 2
            kinesis.split_shard(
                StreamName=unique_name,
                ShardToSplit=parent["ShardId"],
                NewStartingHashKey=str(middle),
            )
            wait_active(kinesis, unique_name)
            time.sleep(1.5)
            left, right = sorted(
                open_shards(kinesis, unique_name),
                key=lambda s: int(s["HashKeyRange"]["StartingHashKey"]),
            )
            kinesis.merge_shards(
                StreamName=unique_name,
                ShardToMerge=left["ShardId"],
                AdjacentShardToMerge=right["ShardId"],
            )
            wait_active(kinesis, unique_name)
            time.sleep(1.5)
        finally:
            stop.set()
            producer_thread.join(60)
        total = sum(sent.values())
        deadline = time.monotonic() + 120
        while True:
            with lock:
                got = sum(len(rows) for _, rows in batches)
            if got >= total:
                break
            assert query.exception() is None, query.exception()
            assert time.monotonic() < deadline, f"{got} of {total} records within 120 s"
            time.sleep(0.2)
    shards_read = {row.shardId for _, rows in batches for row in rows}
    assert len(shards_read) == 4, shards_read  # parent, two children, merged child
    per_key = defaultdict(list)
    for _batch_id, rows in sorted(batches, key=lambda b: b[0]):
        for row in sorted(rows, key=lambda r: int(r.sequenceNumber)):
            key, n = row.d.split(":")
            per_key[key].append(int(n))
    for key in KEYS:
        assert per_key[key] == list(range(sent[key])), f"{key}: lost, repeated or out of order"
