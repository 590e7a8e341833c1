"""Producer throughput on the embedded local AWS (moto's server), against a baseline.

    python -m benchmarks.bench_producer [--records N]

(a) baseline: raw boto3 PutRecords in ready-made 500-record batches;
(b) KinesisProducer.put() one record at a time, then flush();
(c) the word producer's loop at 1,000 records/s x 10 words for 5 rounds: does it keep
    the one-second rounds (it must sustain 1,000 records/s)?
Each writes to its own 4-shard stream. Prints records/s and the ratio (b)/(a).
"""

from __future__ import annotations

import argparse
import io
import random
import time

from benchmarks import results
from kinesis_dstream.demo.word_producer import make_record, produce
from kinesis_dstream.local import LocalAWS
from kinesis_dstream.producer import KinesisProducer
from kinesis_dstream.retrieval.streams import ensure_stream


def payloads(n: int) -> list:
    rng = random.Random(1)
    return [(make_record(rng, 10).encode(), f"partitionKey-{i}") for i in range(n)]


def bench_raw(client, stream: str, records: list) -> float:
    start = time.perf_counter()
    for i in range(0, len(records), 500):
        batch = [{"Data": d, "PartitionKey": k} for d, k in records[i : i + 500]]
        response = client.put_records(StreamName=stream, Records=batch)
        assert response["FailedRecordCount"] == 0
    return time.perf_counter() - start


def bench_producer(client, stream: str, records: list) -> float:
    start = time.perf_counter()
    with KinesisProducer(stream, client=client) as producer:
        for data, key in records:
            producer.put(data, key)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=20000)
    args = parser.parse_args()
    records = payloads(args.records)
    with LocalAWS() as aws:
        client = aws.client("kinesis")
        for name in ("raw", "ours", "words"):
            ensure_stream(client, f"bench-{name}", 4)
        raw_s = bench_raw(client, "bench-raw", records)
        ours_s = bench_producer(client, "bench-ours", records)
        rate = 1000
        start = time.perf_counter()
        with KinesisProducer("bench-words", client=client) as producer:
            produce(producer, rate, 10, 5, random.Random(2), out=io.StringIO())
        words_s = time.perf_counter() - start
    n = len(records)
    print("server: moto (embedded LocalAWS, child process), 4 shards, ~60-byte records")
    print(f"(a) raw boto3 PutRecords x500:  {n / raw_s:10,.0f} records/s")
    print(f"(b) KinesisProducer.put+flush:  {n / ours_s:10,.0f} records/s")
    print(f"ratio (b)/(a): {raw_s / ours_s:.2f}")
    print(
        f"(c) word producer at {rate}/s x 5 rounds: {5 * rate / words_s:,.0f} records/s "
        f"sustained, {words_s:.2f}s for 5 one-second rounds"
    )


if __name__ == "__main__":
    results.run(main, "producer", "KinesisProducer against raw PutRecords")
