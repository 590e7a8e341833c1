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
   Then (b) warm four more times, started 0, 0.25, 0.5 and 0.75 s after a batch time
   (the wait for the first batch time, and so for every later one, depends on it by up
   to a whole interval): their mean, and per run when every record was fetched (the
   rounds), the last batch time and its output; and (c) **Spark's floor** at the same
   phases: the same records already cached in RDDs of a round's size and shape, in a
   ``queueStream`` with the same 1 s batches and the same count, i.e. the wait for the
   first batch time and one batch job: Spark's own share, measured in every run.
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
from typing import NamedTuple, Optional

from benchmarks import results
from benchmarks.bench_shard_read import process_cpu_s
from benchmarks.kinesis_server import BenchKinesis
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


class Timeline(NamedTuple):
    """One createStream (or floor) run, in perf_counter seconds."""

    elapsed: float  # from ssc.start() until all n records were output
    start: float
    first_output: float  # the first output with records
    steady: float  # records/s from the first output to the last
    fetched: float  # every record fetched (rounds recorded); nan for the floor
    last_batch: float  # the batch time of the last output with records
    phase: float  # ssc.start()'s offset into the batch interval, seconds


def start_at_phase(phase: Optional[float], interval_s: float = 1.0) -> None:
    """Sleep until ``phase`` seconds past a batch time (epoch multiples of the interval)."""
    if phase is not None:
        time.sleep((phase - time.time()) % interval_s)


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

    elapsed, start, outputs = _run(ssc, lines, n, phase, fetched_all)
    return _timeline(elapsed, start, outputs, fetched[0] if fetched else float("nan"))


def _run(ssc, dstream, n: int, phase: Optional[float], poll=None) -> tuple:
    """Start ``ssc`` (at ``phase``), count ``dstream`` until n; stop gracefully. Returns
    (seconds, start, [(time, running total, batch time)] of each output with records);
    ``poll()`` runs every 10 ms until it returns True."""
    counted = []
    outputs: list = []
    done = threading.Event()

    def count(batch_time, rdd):
        counted.append(rdd.count())
        if counted[-1]:
            outputs.append((time.perf_counter(), sum(counted), batch_time.timestamp()))
        if sum(counted) >= n:
            done.set()

    dstream.foreachRDD(count)
    start_at_phase(phase)
    start = time.perf_counter()
    ssc.start()
    if poll is not None:
        while not done.is_set() and time.perf_counter() - start < 600 and not poll():
            time.sleep(0.01)
    if not done.wait(600):
        raise SystemExit(f"counted only {sum(counted)} of {n} in 600 s")
    elapsed = time.perf_counter() - start
    ssc.stop(stopSparkContext=False, stopGraceFully=True)
    assert sum(counted) == n, sum(counted)
    return elapsed, start, outputs


def _timeline(elapsed: float, start: float, outputs: list, fetched: float) -> Timeline:
    (first_at, first_total, _), (last_at, last_total, last_batch) = outputs[0], outputs[-1]
    steady = (last_total - first_total) / (last_at - first_at) if last_at > first_at else 0.0
    # the batch time in perf_counter terms: wall-clock batch time less the wall-clock start
    wall_start = time.time() - (time.perf_counter() - start)
    return Timeline(
        elapsed,
        start,
        first_at,
        steady,
        fetched,
        start + (last_batch - wall_start),
        wall_start % 1.0,
    )


def floor(sc, n: int, phase: Optional[float]) -> Timeline:
    """Spark's own share: the same records (strings of ~100 B) already cached, in RDDs the
    size and shape of createStream's rounds (a shard's 10,000-record page a partition
    ... grouped a task per core, MEMORY_AND_DISK_2), in a queue stream with the same 1 s
    batches and the same count; from ``ssc.start()`` until counted. What is left is the
    wait for the first batch time and a batch job over the cached records."""
    from pyspark.storagelevel import StorageLevel
    from pyspark.streaming import StreamingContext

    payload = "x" * 90
    per_round = SHARDS * 10_000
    tasks = min(SHARDS, max(1, sc.defaultParallelism))
    rdds = []
    for first in range(0, n, per_round):
        size = min(per_round, n - first)
        rdd = sc.parallelize(range(first, first + size), tasks).map(lambda i: f"{i:09d}{payload}")
        rdd.persist(StorageLevel.MEMORY_AND_DISK_2)
        rdd.count()
        rdds.append(rdd)
    ssc = StreamingContext(sc, 1)
    try:
        elapsed, start, outputs = _run(ssc, ssc.queueStream(rdds, oneAtATime=False), n, phase)
    finally:
        for rdd in rdds:
            rdd.unpersist()
    return _timeline(elapsed, start, outputs, float("nan"))


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
        from pyspark import SparkConf, SparkContext

        sc = SparkContext(
            conf=SparkConf()
            .setMaster("local[2]")
            .setAppName("bench-stream")
            .set("spark.ui.enabled", "false")
            .set("spark.ui.showConsoleProgress", "false")
        )
        sc.setLogLevel("ERROR")
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
        floors = [floor(sc, n, phase) for phase in PHASES]
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
        print_phased(n, phased, floors, raw_s, paced_s)
        if args.latency_seconds:
            measured = latency(sc, aws, kinesis_at, args.latency_seconds, 1000)
            print_latency(measured)
        sc.stop()


#: Where in a 1 s batch interval the phased warm runs and the floor start: the time to the
#: first batch time, and so to every later one, depends on it by up to a whole interval.
PHASES = (0.0, 0.25, 0.5, 0.75)


def print_phased(n: int, runs: list, floors: list, raw_s: float, paced_s: float) -> None:
    """The warm runs started at :data:`PHASES`, where their time went, and the floor."""
    mean = statistics.fmean(r.elapsed for r in runs)
    print(
        f"  warm, started at {len(runs)} phases of the batch interval "
        f"({', '.join(f'{p:.2f}' for p in PHASES)} s after a batch time): mean {mean:.2f} s, "
        f"{n / mean:,.0f} records/s; ratio to raw {raw_s / mean:.2f}, to paced raw "
        f"{paced_s / mean:.2f} (target >= 0.9: {met(raw_s / mean)})"
    )
    print("    phase  total s  first output  all fetched  last batch time  its output")
    for r in runs:
        print(
            f"    {r.phase:5.2f}  {r.elapsed:7.2f}  {r.first_output - r.start:12.2f}  "
            f"{r.fetched - r.start:11.2f}  {r.last_batch - r.start:15.2f}  "
            f"{r.start + r.elapsed - r.last_batch:10.2f}"
        )
    fetched = statistics.fmean(r.fetched - r.start for r in runs)
    waited = statistics.fmean(r.last_batch - r.fetched for r in runs)
    job = statistics.fmean(r.start + r.elapsed - r.last_batch for r in runs)
    floor_mean = statistics.fmean(f.elapsed for f in floors)
    floor_wait = statistics.fmean(f.last_batch - f.start for f in floors)
    floor_job = statistics.fmean(f.start + f.elapsed - f.last_batch for f in floors)
    print(
        f"  Spark's floor (the same {n:,} records already cached in round-sized RDDs, a queue "
        f"stream, 1 s batches, the same count), at the same phases: mean {floor_mean:.2f} s = "
        f"the wait for the first batch time {floor_wait:.2f} s + the batch's job "
        f"{floor_job:.2f} s; createStream / floor {mean / floor_mean:.2f}"
    )
    print(
        f"  where the warm time went (means): leases and rounds until every record was "
        f"fetched {fetched:.2f} s (paced raw reader {paced_s:.2f} s: ratio "
        f"{paced_s / fetched:.2f}), then the wait for the next batch time {waited:.2f} s and "
        f"the last batch's job {job:.2f} s"
    )


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
