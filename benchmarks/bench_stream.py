"""createStream end to end against a raw boto3 reader, and latency at a steady rate.

    python -m benchmarks.bench_stream [--records 200000] [--latency-seconds 20]
        [--kinesis-server moto|bench]

One local server (moto's, in a child process) for everything, on this 2-core machine; with
``--kinesis-server bench`` Kinesis is the in-memory benchmark server
(:mod:`benchmarks.kinesis_server`) and moto serves only DynamoDB and CloudWatch (the
leases), for the raw reader and createStream alike. The server's CPU during each read is
printed apart from the client's.

1. Throughput: N records of ~100 bytes preloaded over 4 shards, then in one run
   (a) a raw boto3 reader, one thread per shard, GetRecords(Limit=10000) from
       TRIM_HORIZON until it has read its shard; and once more with its calls on a shard
       200 ms apart, as Kinesis allows (5 a second) and as createStream's rounds keep them;
   (b) ``KinesisUtils.createStream`` from TRIM_HORIZON on local[2] with 1 s batches,
       from ``ssc.start()`` until a ``foreachRDD`` has counted all N.
   Prints records/s for both and (b)/(a); then (b) once more under a new application
   name on the now warm SparkContext, without the JVM's first-job start, and how long
   after its ``ssc.start()`` the first ``foreachRDD`` with records ran (target <= 2 s).
   Then (b) warm at four start phases of the batch interval and (c) Spark's floor at
   the same phases (:mod:`benchmarks.stream_phases`): where a warm run's time goes.
2. Latency: a producer puts 1,000 records/s, each carrying its put time, into a fresh
   4-shard stream read by createStream (LATEST, 1 s batches); the output operation
   records now - put time for every record. Prints p50/p99/max of every record, and of
   those put after the first 2 s: the shards were idle before the producer started, and
   an idle shard's next read may be up to ``idleShardPollMs`` (2 s) away.
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing
import os
import statistics
import sys
import threading
import time
import uuid

from benchmarks import results
from benchmarks.bench_shard_read import process_cpu_s
from benchmarks.kinesis_server import BenchKinesis
from benchmarks.stream_phases import (
    PHASES,
    Timeline,
    floor,
    print_phased,
    run_counted,
    timeline_of,
)
from kinesis_dstream import InitialPositionInStream, KinesisProducer, KinesisUtils
from kinesis_dstream.local import LocalAWS
from kinesis_dstream.retrieval.streams import ensure_stream, list_shard_ids

SHARDS = 4
KINESIS_SERVERS = ("moto", "bench")


def add_server_option(parser: argparse.ArgumentParser, default: str = "moto") -> None:
    parser.add_argument(
        "--kinesis-server",
        choices=KINESIS_SERVERS,
        default=default,
        help="Kinesis served by moto (with DynamoDB) or by the in-memory benchmark server",
    )


def spark_environment(aws: LocalAWS) -> None:
    """This process's environment, inherited by Spark's JVM and Python workers: the local
    servers' credentials and region (not an endpoint: each client is given its own) and
    this Python."""
    os.environ.update({k: v for k, v in aws.env().items() if k != "AWS_ENDPOINT_URL"})
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)


def local_spark_context(app_name: str):
    """A SparkContext on local[2] without the UI or the console's progress bar."""
    from pyspark import SparkConf, SparkContext

    sc = SparkContext(
        conf=SparkConf()
        .setMaster("local[2]")
        .setAppName(app_name)
        .set("spark.ui.enabled", "false")
        .set("spark.ui.showConsoleProgress", "false")
    )
    sc.setLogLevel("ERROR")
    return sc


@contextlib.contextmanager
def kinesis_server(kind: str, aws: LocalAWS):
    """The server Kinesis' calls go to: moto's (``aws`` itself) or the benchmark server."""
    if kind == "moto":
        yield aws
        return
    with BenchKinesis() as bench:
        yield bench


class ServerCPU:
    """CPU seconds the Kinesis server spent between two marks (apart from the client's)."""

    def __init__(self, server: LocalAWS) -> None:
        self.pid = server.pid
        self.label = "moto" if not isinstance(server, BenchKinesis) else "benchmark server"
        self.last = process_cpu_s(self.pid) if self.pid else 0.0

    def since_last(self) -> float:
        now = process_cpu_s(self.pid) if self.pid else 0.0
        spent, self.last = now - self.last, now
        return spent


def preload(kinesis, stream: str, n: int) -> None:
    payload = "x" * 90
    with KinesisProducer(stream, client=kinesis) as producer:
        for i in range(n):
            producer.put(f"{i:09d}{payload}", f"key-{i}")


#: Kinesis allows 5 GetRecords a second per shard: the Spark paths keep their calls on a
#: shard this far apart (the source's and batch read's minFetchPeriod, createStream's
#: shortest round interval); the raw reader does only when asked (``paced``).
KINESIS_CALL_GAP_S = 0.2


def raw_boto3(kinesis, stream: str, n: int, paced: bool = False) -> float:
    """Seconds for one thread per shard to read the whole stream; ``paced``: its calls on
    a shard at least :data:`KINESIS_CALL_GAP_S` apart, start to start, as Kinesis allows."""
    counts: dict = {}

    def read(shard_id: str) -> None:
        iterator = kinesis.get_shard_iterator(
            StreamName=stream, ShardId=shard_id, ShardIteratorType="TRIM_HORIZON"
        )["ShardIterator"]
        got = 0
        last_call = None
        while iterator:
            if paced and last_call is not None:
                time.sleep(max(0.0, last_call + KINESIS_CALL_GAP_S - time.monotonic()))
            last_call = time.monotonic()
            page = kinesis.get_records(ShardIterator=iterator, Limit=10_000)
            got += len(page["Records"])
            iterator = page.get("NextShardIterator")
            if not page["Records"] and page.get("MillisBehindLatest", 0) == 0:
                break
        counts[shard_id] = got

    threads = [
        threading.Thread(target=read, args=(shard,)) for shard in list_shard_ids(kinesis, stream)
    ]
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - start
    assert sum(counts.values()) == n, counts
    return elapsed


def raw_baselines(kinesis, stream: str, n: int, cpu: ServerCPU) -> tuple:
    """(seconds, the server's CPU seconds) of the raw reader, and seconds of it paced."""
    raw_s = raw_boto3(kinesis, stream, n)
    raw_cpu = cpu.since_last()
    paced_s = raw_boto3(kinesis, stream, n, paced=True)
    cpu.since_last()
    return raw_s, raw_cpu, paced_s


def met(ratio: float) -> str:
    return "met" if ratio >= 0.9 else "not met"


def paced_line(n: int, paced_s: float, ours_rate: float, ours: str) -> str:
    """The paced raw reader's rate and ``ours`` (records/s ``ours_rate``) against it."""
    paced = n / paced_s
    return (
        f"raw boto3 paced as Kinesis allows ({KINESIS_CALL_GAP_S * 1000:.0f} ms between a "
        f"shard's calls): {paced:,.0f} records/s ({paced_s:.2f} s); {ours} / paced raw "
        f"{ours_rate / paced:.2f}"
    )


def grouped_line(lead: str, per_task: str, n: int, seconds: float, raw_rate: float) -> str:
    """A read with ``shardsPerTask`` against the raw reader."""
    rate = n / seconds
    return (
        f"{lead}, shardsPerTask={per_task} (one wave of tasks): {rate:,.0f} records/s "
        f"({seconds:.2f} s), {rate / raw_rate:.2f} of raw (target >= 0.9: {met(rate / raw_rate)})"
    )


def streaming(sc, aws, stream: str, n: int, kinesis_at=None, phase=None) -> Timeline:
    """createStream from ``ssc.start()`` until it delivered all n records (a
    :class:`Timeline`; ``[0]`` the seconds); Kinesis at ``kinesis_at`` (default ``aws``),
    leases on ``aws``; ``phase``: started that far into a 1 s batch interval."""
    from pyspark.streaming import StreamingContext

    from kinesis_dstream.dstream.context import progress

    kinesis_at = kinesis_at or aws
    ssc = StreamingContext(sc, 1)
    lines = KinesisUtils.createStream(
        ssc,
        f"bench-{uuid.uuid4().hex[:8]}",
        stream,
        kinesis_at.endpoint_url,
        aws.region_name,
        InitialPositionInStream.TRIM_HORIZON,
        5,
        dynamoDBEndpointUrl=aws.endpoint_url,
        cloudWatchEndpointUrl=aws.endpoint_url,
    )
    fetched: list = []

    def fetched_all() -> bool:
        if sum(p["records_fetched"] for p in progress() if p["stream"] == stream) >= n:
            fetched.append(time.perf_counter())
            return True
        return False

    elapsed, start, outputs = run_counted(ssc, lines, n, phase, fetched_all)
    return timeline_of(elapsed, start, outputs, fetched[0] if fetched else float("nan"))


def produce_steady(env: dict, stream: str, seconds: int, rate: int) -> None:
    """Put ``rate`` records a second, each starting with its put time, ten flushes a second."""
    os.environ.update(env)
    sent = 0
    with KinesisProducer(stream) as producer:
        start = time.monotonic()
        for second in range(seconds):
            for i in range(10):
                for _ in range(rate // 10):
                    producer.put(f"{time.time():.6f} {sent}", f"k-{sent}")
                    sent += 1
                producer.flush()
                wait = start + second + (i + 1) / 10 - time.monotonic()
                if wait > 0:
                    time.sleep(wait)


def latency(sc, aws, kinesis_at, seconds: int, rate: int) -> list:
    from pyspark.streaming import StreamingContext

    kinesis = kinesis_at.client("kinesis")
    stream = f"bench-latency-{uuid.uuid4().hex[:8]}"
    ensure_stream(kinesis, stream, SHARDS)
    ssc = StreamingContext(sc, 1)
    app = f"bench-{uuid.uuid4().hex[:8]}"
    lines = KinesisUtils.createStream(
        ssc,
        app,
        stream,
        kinesis_at.endpoint_url,
        aws.region_name,
        InitialPositionInStream.LATEST,
        2,
        dynamoDBEndpointUrl=aws.endpoint_url,
        cloudWatchEndpointUrl=aws.endpoint_url,
    )
    delays: list = []

    def measure(rdd):
        put_times = rdd.map(lambda line: float(line.split(" ")[0])).collect()
        now = time.time()
        delays.extend((t, now - t) for t in put_times)

    lines.foreachRDD(measure)
    ssc.start()
    dynamodb = aws.client("dynamodb")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # until every shard's lease is held: LATEST pinned
        try:
            items = dynamodb.scan(TableName=app, ConsistentRead=True)["Items"]
        except dynamodb.exceptions.ResourceNotFoundException:
            items = []
        if len([i for i in items if "leaseOwner" in i]) == SHARDS:
            break
        time.sleep(0.2)
    time.sleep(1)
    # The producer runs in its own process, as producers do: in this one it would compete
    # for the driver's GIL with Spark's callbacks and skew what is measured.
    producer = multiprocessing.get_context("spawn").Process(
        target=produce_steady, args=(kinesis_at.env(), stream, seconds, rate)
    )
    producer.start()
    producer.join(seconds + 120)
    sent = seconds * rate
    deadline = time.monotonic() + 60
    while len(delays) < sent and time.monotonic() < deadline:
        time.sleep(0.2)
    ssc.stop(stopSparkContext=False, stopGraceFully=True)
    assert len(delays) >= sent, (len(delays), sent)
    return delays


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--latency-seconds", type=int, default=20, help="0: no latency run")
    add_server_option(parser)
    args = parser.parse_args()
    n = args.records
    with LocalAWS() as aws, kinesis_server(args.kinesis_server, aws) as kinesis_at:
        spark_environment(aws)
        sc = local_spark_context("bench-stream")
        kinesis = kinesis_at.client("kinesis")
        stream = f"bench-{uuid.uuid4().hex[:8]}"
        ensure_stream(kinesis, stream, SHARDS)
        preload(kinesis, stream, n)
        cpu = ServerCPU(kinesis_at)
        raw_s, raw_cpu, paced_s = raw_baselines(kinesis, stream, n, cpu)
        ours_s, started, first_output, steady, *_ = streaming(sc, aws, stream, n, kinesis_at)
        ours_cpu = cpu.since_last()
        # The same stream again under a new application name (its own leases, from
        # TRIM_HORIZON) on the now warm SparkContext: what a second stream of one
        # application pays, without the JVM's and PySpark's first-job start.
        warm_s, warm_started, warm_first, warm_steady, *_ = streaming(
            sc, aws, stream, n, kinesis_at
        )
        warm_cpu = cpu.since_last()
        phased = [streaming(sc, aws, stream, n, kinesis_at, phase) for phase in PHASES]
        floors = [floor(sc, n, phase, SHARDS) for phase in PHASES]
        raw_rate, ours_rate, warm_rate = n / raw_s, n / ours_s, n / warm_s
        first_delay = warm_first - warm_started
        print(f"{n:,} records of ~100 B over {SHARDS} shards, {cpu.label}, local[2]")
        print(
            f"  raw boto3, a thread per shard: {raw_rate:>9,.0f} records/s ({raw_s:.1f} s; "
            f"server CPU {raw_cpu:.1f} s)"
        )
        print(
            f"  createStream, 1 s batches:     {ours_rate:>9,.0f} records/s ({ours_s:.1f} s; "
            f"server CPU {ours_cpu:.1f} s)"
        )
        print(f"  ratio createStream / raw: {ours_rate / raw_rate:.2f} (target >= 0.9)")
        print(
            f"  of which {first_output - started:.1f} s until the first batch output "
            f"(Spark's first jobs, Python workers, leases); after it {steady:,.0f} records/s "
            f"(ratio {steady / raw_rate:.2f})"
            if steady
            else "  (all records arrived in one batch: no steady-state figure)"
        )
        ratio = warm_rate / raw_rate
        print(
            f"  the same again on the warm SparkContext: {warm_rate:,.0f} records/s "
            f"({warm_s:.1f} s; server CPU {warm_cpu:.1f} s), ratio {ratio:.2f} "
            f"(target >= 0.9: {met(ratio)})"
        )
        print(
            f"  warm: first output with records {first_delay:.2f} s after ssc.start() "
            f"(target <= 2 s: {'met' if first_delay <= 2 else 'not met'})"
            + (
                f"; after it {warm_steady:,.0f} records/s (ratio {warm_steady / raw_rate:.2f})"
                if warm_steady
                else ""
            )
        )
        print("  " + paced_line(n, paced_s, warm_rate, "warm createStream"))
        print_phased(n, phased, floors, raw_s, paced_s, met)
        if args.latency_seconds:
            measured = latency(sc, aws, kinesis_at, args.latency_seconds, 1000)
            print_latency(measured)
        sc.stop()


def print_latency(measured: list) -> None:
    first_put = min(t for t, _ in measured)
    print("latency put -> batch output at 1,000 records/s, 1 s batches (target p99 <= 1.5 s)")
    for label, cut in (("every record", first_put), ("after the first 2 s", first_put + 2)):
        delays = sorted(d for t, d in measured if t >= cut)
        p50 = statistics.median(delays)
        p99 = delays[int(len(delays) * 0.99) - 1]
        print(
            f"  {label} ({len(delays):,} records): p50 {p50:.2f} s, p99 {p99:.2f} s, "
            f"max {delays[-1]:.2f} s"
        )


if __name__ == "__main__":
    results.run(main, "stream", "createStream throughput, latency and start-up")
