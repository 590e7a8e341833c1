"""Polling ShardReader vs FanOutShardReader on one ministack stream, and subscribe latency.

    python -m benchmarks.bench_fanout [--records 10000] [--subscriptions 12]

Starts ministack (from its cached virtualenv, as the tests do), writes ``--records``
1 KiB records to a one-shard stream, then reads them all from TRIM_HORIZON with each
transport in the same run (records/s; the ratio is fan-out over polling, same server and
data). Then measures the time from a SubscribeToShard call to its first event, over
``--subscriptions`` fresh subscriptions (each on its own shard), and the time to the first
*record* of a range read the way a micro-batch reads one (a new reader per range).

This is ministack, on this machine: it sends a shard's whole backlog in one event and
never paces a consumer, so the ratio says what our code costs per transport, not what
Kinesis delivers (2 MiB/s per shard per EFO consumer; GetRecords shares 2 MiB/s).
Keep ``--records`` under ~16,000: ministack puts the whole backlog in one event, and
botocore refuses an event-stream message over 24 MiB.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from benchmarks import results
from kinesis_dstream.retrieval.fanout import FanOutConfig, FanOutShardReader
from kinesis_dstream.retrieval.reader import ReaderConfig, ShardReader, StartPosition
from kinesis_dstream.retrieval.streams import ensure_stream
from tests.support.ministack_server import MINISTACK_VERSION, MinistackServer

SHARD0 = "shardId-000000000000"
RECORD = b"x" * 1024


def _fill(client: object, stream: str, count: int) -> None:
    for start in range(0, count, 500):
        batch = [
            {"Data": RECORD, "PartitionKey": str(i)} for i in range(start, min(count, start + 500))
        ]
        answer = client.put_records(StreamName=stream, Records=batch)  # type: ignore[attr-defined]
        assert answer["FailedRecordCount"] == 0


def _drain(reader: object, count: int) -> float:
    started = time.perf_counter()
    got = 0
    while got < count:
        got += len(reader.read(max_records=10_000).records)  # type: ignore[attr-defined]
    return time.perf_counter() - started


def _consumer(client: object, stream: str, name: str) -> str:
    arn = client.describe_stream_summary(StreamName=stream)["StreamDescriptionSummary"]["StreamARN"]  # type: ignore[attr-defined]
    return client.register_stream_consumer(StreamARN=arn, ConsumerName=name)["Consumer"][
        "ConsumerARN"
    ]  # type: ignore[attr-defined]


def main(argv: list) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--subscriptions", type=int, default=12)
    args = parser.parse_args(argv)
    with MinistackServer() as server:
        client = server.client("kinesis")
        ensure_stream(client, "bench", 1)
        _fill(client, "bench", args.records)
        consumer = _consumer(client, "bench", "bench-efo")
        polling = ShardReader(
            client,
            "bench",
            SHARD0,
            StartPosition.trim_horizon(),
            config=ReaderConfig(min_call_interval_s=0.0),
        )
        poll_s = _drain(polling, args.records)
        with FanOutShardReader(
            client, "bench", SHARD0, StartPosition.trim_horizon(), consumer_arn=consumer
        ) as fanout:
            efo_s = _drain(fanout, args.records)
        print(f"ministack {MINISTACK_VERSION}, {args.records} records of 1 KiB, one shard")
        print(f"  polling  ShardReader       {args.records / poll_s:>10,.0f} records/s")
        print(f"  fan-out  FanOutShardReader {args.records / efo_s:>10,.0f} records/s")
        print(f"  ratio fan-out / polling    {poll_s / efo_s:>10.2f}")

        n = args.subscriptions
        ensure_stream(client, "latency", n)
        latency_consumer = _consumer(client, "latency", "latency-efo")
        first_event, first_record = [], []
        for index in range(n):
            shard = f"shardId-{index:012d}"
            started = time.perf_counter()
            events = client.subscribe_to_shard(
                ConsumerARN=latency_consumer, ShardId=shard, StartingPosition={"Type": "LATEST"}
            )["EventStream"]
            next(iter(events))
            first_event.append(time.perf_counter() - started)
            events.close()
        for index in range(n):  # a range read: a new reader, one record waiting
            shard = f"shardId-{index:012d}"
            client.put_record(
                StreamName="latency",
                Data=b"r",
                PartitionKey="k",
                ExplicitHashKey=str(
                    int(
                        client.list_shards(StreamName="latency")["Shards"][index]["HashKeyRange"][
                            "StartingHashKey"
                        ]
                    )
                ),
            )
            started = time.perf_counter()
            with FanOutShardReader(
                client,
                "latency",
                shard,
                StartPosition.trim_horizon(),
                consumer_arn=latency_consumer,
                fanout=FanOutConfig(),
            ) as reader:
                assert reader.read(max_records=10, max_calls=1).records
            first_record.append(time.perf_counter() - started)
        # The next range of a shard, right after: paced to 5 s after the previous subscribe,
        # as Kinesis requires (ministack itself would accept it at once).
        started = time.perf_counter()
        with FanOutShardReader(
            client,
            "latency",
            SHARD0,
            StartPosition.trim_horizon(),
            consumer_arn=latency_consumer,
        ) as reader:
            assert reader.read(max_records=10, max_calls=1).records
        print(
            f"  next range of the same shard -> first record {time.perf_counter() - started:.2f} s"
        )
        for label, values in (
            ("subscribe -> first event", first_event),
            ("new reader -> first record", first_record),
        ):
            ms = sorted(v * 1000 for v in values)
            print(
                f"  {label:<27} median {statistics.median(ms):6.1f} ms, "
                f"max {ms[-1]:6.1f} ms over {n}"
            )
    return 0


if __name__ == "__main__":
    results.run(lambda: main(sys.argv[1:]), "fanout", "SubscribeToShard against GetRecords")
