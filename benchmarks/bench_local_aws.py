"""What serializing the embedded local AWS costs: one workload on the server as users get it
(Kinesis, DynamoDB and S3 one request at a time) and on the same server serializing
nothing, alternately, in one run.

    python -m benchmarks.bench_local_aws [--records N] [--rounds R]

The workload: 2 writer threads put N records (PutRecords of 500, 100-byte records) on a
4-shard stream; 4 reader threads follow the shards (GetRecords, Limit 10,000, 0.1 s
between empty pages) until they have read what was put; 1 lease thread renews one lease
(the lease table's conditional UpdateItem on its counter and owner) until the writers
finish. Prints, per server and round: seconds from the first put to the last
record read, records put and read per second, PutRecords and renewal latencies (p50 / p99),
GetRecords calls that failed (moto's 500 when a put lands while it walks a shard; retried)
and records acknowledged but never read (lost to moto's race when nothing is serialized).
"""

from __future__ import annotations

import argparse
import os
import threading
import time

from botocore.exceptions import ClientError

from benchmarks import results
from benchmarks.bench_leases import percentile
from kinesis_dstream.leases.dynamodb import LeaseTable
from kinesis_dstream.leases.lease import Lease
from kinesis_dstream.local import LocalAWS
from kinesis_dstream.retrieval.streams import ensure_stream

WRITERS, SHARDS, BATCH = 2, 4, 500


class UnserializedLocalAWS(LocalAWS):
    """The baseline: the same child, every request served as moto serves it."""

    label = "local AWS (moto, nothing serialized)"
    serialized_services = ()


def run_workload(aws: LocalAWS, records: int, name: str) -> dict:
    kinesis = aws.client("kinesis")
    ensure_stream(kinesis, name, SHARDS)
    shards = [s["ShardId"] for s in kinesis.list_shards(StreamName=name)["Shards"]]
    leases = LeaseTable(aws.client("dynamodb"), name)
    leases.create_if_missing()
    assert leases.create_lease(Lease("shardId-000000000000", lease_owner="bench"))
    writers_done = threading.Event()
    put_latency: list = []
    renew_latency: list = []
    read = [0] * len(shards)
    failed = [0] * len(shards)
    payload = os.urandom(100)

    def write(writer: int) -> None:
        client = aws.client("kinesis")
        for call in range(records // WRITERS // BATCH):
            keys = [f"{writer}-{call}-{n}" for n in range(BATCH)]
            batch = [{"Data": payload, "PartitionKey": key} for key in keys]
            started = time.perf_counter()
            answer = client.put_records(StreamName=name, Records=batch)
            put_latency.append(time.perf_counter() - started)
            assert answer.get("FailedRecordCount", 0) == 0

    def follow(index: int) -> None:
        client = aws.client("kinesis")
        iterator = client.get_shard_iterator(
            StreamName=name, ShardId=shards[index], ShardIteratorType="TRIM_HORIZON"
        )["ShardIterator"]
        while True:
            finished = writers_done.is_set()  # read before the page: no record put after it
            try:
                page = client.get_records(ShardIterator=iterator, Limit=10000)
            except ClientError:  # moto's 500 when a put lands mid-read: retried, counted
                failed[index] += 1
                continue
            read[index] += len(page["Records"])
            iterator = page["NextShardIterator"]
            if not page["Records"]:
                if finished:
                    return
                time.sleep(0.1)

    def renew() -> None:
        lease = leases.get_lease("shardId-000000000000")
        while not writers_done.is_set():
            started = time.perf_counter()
            lease = leases.renew(lease)
            renew_latency.append(time.perf_counter() - started)
            assert lease is not None, "the benchmark's one lease was lost"

    writers = [threading.Thread(target=write, args=(w,)) for w in range(WRITERS)]
    others = [threading.Thread(target=follow, args=(i,)) for i in range(len(shards))]
    others.append(threading.Thread(target=renew))
    started = time.perf_counter()
    for thread in writers + others:
        thread.start()
    for thread in writers:
        thread.join()
    put_s = time.perf_counter() - started
    writers_done.set()
    for thread in others:
        thread.join()
    elapsed_s = time.perf_counter() - started
    put = records // WRITERS // BATCH * BATCH * WRITERS
    return {
        "elapsed_s": elapsed_s,
        "put_per_s": put / put_s,
        "read_per_s": sum(read) / elapsed_s,
        "put_p50_ms": 1000 * percentile(put_latency, 50),
        "put_p99_ms": 1000 * percentile(put_latency, 99),
        "renewals_per_s": len(renew_latency) / put_s,
        "renew_p50_ms": 1000 * percentile(renew_latency, 50),
        "renew_p99_ms": 1000 * percentile(renew_latency, 99),
        "lost": put - sum(read),
        "failed": sum(failed),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    print(
        f"server: moto (embedded LocalAWS, child process); {args.records:,} records of 100 "
        f"bytes by {WRITERS} writers, {SHARDS} shards followed, 1 lease renewed; "
        f"load before: {os.getloadavg()[0]:.2f}"
    )
    header = (
        "| server | round | seconds | put/s | read/s | PutRecords p50 / p99 ms | "
        "renewals/s | renewal p50 / p99 ms | GetRecords failed | lost |"
    )
    print(header)
    print("| --- " * 10 + "|")
    for round_ in range(1, args.rounds + 1):
        for server in (UnserializedLocalAWS, LocalAWS):
            with server() as aws:
                r = run_workload(aws, args.records, f"bench-{round_}")
            print(
                f"| {'serialized' if server is LocalAWS else 'nothing serialized'} | {round_} "
                f"| {r['elapsed_s']:.1f} | {r['put_per_s']:,.0f} | {r['read_per_s']:,.0f} "
                f"| {r['put_p50_ms']:.0f} / {r['put_p99_ms']:.0f} | {r['renewals_per_s']:.0f} "
                f"| {r['renew_p50_ms']:.1f} / {r['renew_p99_ms']:.1f} "
                f"| {r['failed']} | {r['lost']} |"
            )
    print(f"load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    results.run(main, "local-aws", "the embedded local AWS, serialized and not")
