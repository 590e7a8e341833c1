"""Cost that should follow the data, not the shard count: a fixed trickle over many shards.

    python -m benchmarks.bench_shards [--shards 4,32,128] [--rate 500] [--seconds 30]
                                      [--warmup 5] [--paths createStream,source]
                                      [--kinesis-server bench|moto]
                                      [--idle-poll-ms 0] [--fetch-interval-ms N]
                                      [--free-rounds] [--lease-server]
                                      [--no-heap-freeze]

Kinesis is served by ``--kinesis-server``: ``bench`` (the default),
:mod:`benchmarks.kinesis_server`, in memory with kept-alive connections, so that the
figures measure the library rather than the test server; ``moto``, moto's server (the
figures of the pages before 2026-11-27). createStream's DynamoDB (the lease table) and
CloudWatch calls go to a moto server: a second one with ``bench`` (or with
``--lease-server``), else Kinesis' own. Every server runs in a child process, and its CPU
is printed apart from ours.

For each shard count and each ``--rate`` (a list: ``0,500`` measures the idle shards and
then the trickle), a producer in its own process puts ``--rate`` records a second (spread
over every shard by key), each carrying its put time, for ``--seconds``; the reader under
test runs from LATEST with 1 s batches (createStream) or a 1 s trigger (the source, into
foreachBatch). Printed per path, shard count and rate: records put and delivered, latency
put -> output p50/p99 of the records put after the first ``--warmup`` seconds (the
reader's first rounds, Python workers and JIT are not the steady state), the CPU seconds
per second of our processes (in total, and for this driver, its JVM and the Python
workers) and of each server apart, the library's shard reads per second (createStream:
shard reads in rounds; the source: the driver's peeks) and, on the benchmark server, every
GetRecords call it served per second. Then, derived: our CPU ms per 1,000 GetRecords calls
at rate 0 (every read is an idle shard's, Spark's empty batches included; with two shard
counts at rate 0, also the slope between them, which leaves Spark's fixed cost out) and per 1,000
records (all-in, and above the same path's rate-0 run: the records' own cost).
``--idle-poll-ms 0`` (the library's default) reads every shard every round; ``--idle-poll-ms
2000`` reads quiet shards less often (the option: run both in one session to see what it
saves and what it costs in latency).
``--free-rounds`` runs createStream's rounds unaligned to batch times, with
``--fetch-interval-ms 500`` the library's behaviour before the round pacer (the baseline
for it); by default rounds come once per 1 s batch, timed to end just before it.

``--no-heap-freeze`` sets ``KINESIS_DSTREAM_FREEZE_WORKER_HEAP=0`` for the Python workers:
PySpark's per-task ``gc.collect()`` then walks the whole worker heap (the baseline for
:mod:`kinesis_dstream.executor_heap`).

``--lease-server`` gives createStream's DynamoDB and CloudWatch calls a second moto server
of their own (as on AWS, where they are other services; both servers' CPU is left out of
ours); by default one server takes every call.

Leases: from 256 shards on, createStream runs with ``failoverTimeMs=30000``: moto's
server takes 7-9 s for a renewal pass of 512 leases (one UpdateItem each), longer than
the default 10 s failover allows (on DynamoDB a pass takes milliseconds).
"""


from __future__ import annotations

import argparse
import contextlib
import functools
import json
import multiprocessing
import os
import statistics
import tempfile
import threading
import time
import uuid
from typing import Optional

import botocore.exceptions

from benchmarks import results
from benchmarks.bench_shard_read import process_cpu_s
from benchmarks.bench_stream import (
    add_server_option,
    kinesis_server,
    local_spark_context,
    spark_environment,
)
from benchmarks.kinesis_server import BenchKinesis
from kinesis_dstream import InitialPositionInStream, KinesisProducer, KinesisUtils
from kinesis_dstream.executor_heap import FREEZE_ENV
from kinesis_dstream.local import LocalAWS
from kinesis_dstream.retrieval.streams import ensure_stream

TICKS = os.sysconf("SC_CLK_TCK")


def _tree_cpu(root: int, skip: set) -> dict:
    """pid -> CPU seconds (user + system) of ``root`` and its descendants, minus ``skip``'s
    trees."""
    children: dict = {}
    times: dict = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid, ppid = int(entry), int(fields[1])
        children.setdefault(ppid, []).append(pid)
        times[pid] = (int(fields[11]) + int(fields[12])) / TICKS
    found, pending = {}, [root]
    while pending:
        pid = pending.pop()
        if pid in skip:
            continue
        found[pid] = times.get(pid, 0.0)
        pending.extend(children.get(pid, []))
    return found


class CpuSampler:
    """CPU our process tree spends between start() and stop(), sampled every 0.2 s.

    Python workers come and go (their CPU leaves the tree with them, and PySpark's daemon
    reaps them without adding to its own children's times), so each pid's last sample
    counts: a process that lived less than a sample period is missed.
    """

    def __init__(self, root: int, skip: set) -> None:
        self.root, self.skip = root, skip
        self.first = _tree_cpu(root, skip)
        self.last = dict(self.first)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="cpu-sampler", daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.2):
            self.last.update(_tree_cpu(self.root, self.skip))

    def start(self) -> CpuSampler:
        self._thread.start()
        return self

    def stop(self, skip: set) -> dict:
        """CPU seconds spent by role (driver, JVM, Python workers), without the trees of
        ``skip`` (the producer)."""
        self._stop.set()
        self._thread.join(5)
        self.last.update(_tree_cpu(self.root, self.skip | skip))
        spent = {"driver": 0.0, "JVM": 0.0, "Python workers": 0.0}
        for pid, seconds in self.last.items():
            if pid not in skip:
                spent[self._roles.get(pid, "Python workers")] += seconds - self.first.get(pid, 0.0)
        return spent

    @property
    def _roles(self) -> dict:
        """pid -> role of the processes seen: this driver, the JVM, else a Python worker."""
        roles = {self.root: "driver"}
        for pid in self.last:
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as handle:
                    if handle.read().split(b"\0", 1)[0].endswith(b"java"):
                        roles[pid] = "JVM"
            except OSError:
                pass  # gone: a Python worker that ended
        return roles


def produce(env: dict, stream: str, seconds: int, rate: int) -> None:
    """``rate`` records a second in ten flushes a second; keys spread over every shard."""
    os.environ.update(env)
    sent = 0
    with KinesisProducer(stream) as producer:
        start = time.monotonic()
        for tick in range(seconds * 10):
            for _ in range(rate // 10):
                producer.put(f"{time.time():.6f} {sent}", f"key-{sent}")
                sent += 1
            producer.flush()
            wait = start + (tick + 1) / 10 - time.monotonic()
            if wait > 0:
                time.sleep(wait)


class Run:
    """One shard count on one path: delays of delivered records and the CPU spent."""

    def __init__(
        self, aws, shards: int, rate: int, seconds: int, warmup: float, servers: dict
    ) -> None:
        self.aws, self.shards, self.rate, self.seconds = aws, shards, rate, seconds
        self.servers = servers  # name -> pid of each local server: not our CPU
        self.warmup = warmup
        self.measure_from = float("inf")  # put time (epoch s) of the first measured record
        self.delivered = 0
        self.reads = lambda: 0  # GetRecords calls so far
        self.stream = f"bench-shards-{shards}-{uuid.uuid4().hex[:6]}"
        self.delays: list = []
        self.lock = threading.Lock()
        ensure_stream(aws.client("kinesis"), self.stream, shards)

    def add(self, texts: list) -> None:
        """Records delivered, as their texts: "<put time> <n>" (the source's warm-up
        records, "<put time> w", are not the producer's and are not counted)."""
        now = time.time()
        put_times = [float(t.split(" ")[0]) for t in texts if not t.endswith(" w")]
        with self.lock:
            self.delivered += len(put_times)
            self.delays.extend(now - t for t in put_times if t >= self.measure_from)

    def drive(self, started: threading.Event) -> dict:
        """Produce, wait for delivery (bounded), and measure CPU while producing."""
        if not started.wait(120):
            raise SystemExit(f"{self.stream}: the reader did not start within 120 s")
        time.sleep(2.0)  # the reader is past its start-up
        server = set(self.servers.values())
        with self.lock:
            self.delivered = 0
            self.delays.clear()
        self.measure_from = time.time() + self.warmup
        sampler = CpuSampler(os.getpid(), server).start()
        served0 = {name: process_cpu_s(pid) for name, pid in self.servers.items()}
        t0, reads0, calls0 = time.monotonic(), self.reads(), _get_records_served(self.aws)
        producer = multiprocessing.get_context("spawn").Process(
            target=produce, args=(self.aws.env(), self.stream, self.seconds, self.rate)
        )
        producer.start()
        producer.join(self.seconds + 120)
        spent, t1 = sampler.stop({producer.pid}), time.monotonic()
        served = {n: process_cpu_s(pid) - served0[n] for n, pid in self.servers.items()}
        reads1, calls1 = self.reads(), _get_records_served(self.aws)
        sent = self.seconds * self.rate
        deadline = time.monotonic() + 30
        while self.delivered < sent and time.monotonic() < deadline:
            time.sleep(0.2)
        with self.lock:
            delays = sorted(self.delays)
            delivered = self.delivered
        return {
            "sent": sent,
            "delivered": delivered,
            "reads_per_s": (reads1 - reads0) / (t1 - t0),
            "get_records_per_s": (
                None if calls0 is None else (calls1 - calls0) / (t1 - t0)  # type: ignore[operator]
            ),
            "server_cpu": {name: seconds / (t1 - t0) for name, seconds in served.items()},
            "p50": statistics.median(delays) if delays else float("nan"),
            "p99": delays[max(0, int(len(delays) * 0.99) - 1)] if delays else float("nan"),
            "cpu_per_s": sum(spent.values()) / (t1 - t0),
            "cpu_roles": {role: seconds / (t1 - t0) for role, seconds in spent.items()},
        }


def _get_records_served(aws) -> Optional[int]:
    """GetRecords calls the server has served, where it counts them (the benchmark server)."""
    return aws.calls().get("GetRecords", 0) if isinstance(aws, BenchKinesis) else None


def server_pids(aws, lease_aws) -> dict:
    """The servers' processes whose CPU each figure reports apart from ours."""
    if lease_aws is aws:
        return {"server": aws.pid}
    return {"Kinesis server": aws.pid, "lease server": lease_aws.pid}


def create_stream(ssc, run: Run, aws, lease_aws, app: str, shards: int, **options):
    """The benchmarks' createStream: LATEST, 2 s checkpoints, leases and detailed metrics on
    ``lease_aws``; ``options`` are createStream's keyword arguments on top."""
    return KinesisUtils.createStream(
        ssc,
        app,
        run.stream,
        aws.endpoint_url,
        aws.region_name,
        InitialPositionInStream.LATEST,
        2,
        dynamoDBEndpointUrl=lease_aws.endpoint_url,
        cloudWatchEndpointUrl=lease_aws.endpoint_url,
        metricsLevel=2,
        failoverTimeMs=30_000 if shards >= 256 else 10_000,
        **options,
    )


def wait_for_leases(dynamodb, app: str, shards: int, started: threading.Event) -> None:
    """Set ``started`` once every one of ``shards`` leases has an owner (at most 120 s)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not started.is_set():
        try:
            items = dynamodb.scan(TableName=app, ConsistentRead=True)["Items"]
        except dynamodb.exceptions.ResourceNotFoundException:
            items = []
        except botocore.exceptions.ClientError as error:
            if error.response.get("ResponseMetadata", {}).get("HTTPStatusCode") != 500:
                raise
            items = []  # moto's server now and then answers a scan with an HTML 500
        if len([i for i in items if "leaseOwner" in i]) == shards:
            started.set()
        time.sleep(0.2)


def run_create_stream(sc, aws, lease_aws, shards: int, rate: int, args) -> dict:
    from pyspark.streaming import StreamingContext

    from kinesis_dstream.dstream.context import progress

    run = Run(aws, shards, rate, args.seconds, args.warmup, server_pids(aws, lease_aws))
    ssc = StreamingContext(sc, 1)
    app = f"bench-{uuid.uuid4().hex[:8]}"
    lines = create_stream(
        ssc,
        run,
        aws,
        lease_aws,
        app,
        shards,
        idleShardPollMs=args.idle_poll_ms,
        fetchIntervalMs=args.fetch_interval_ms,
    )

    def reads() -> int:  # shard reads made: every planned read of every round
        mine = [p for p in progress() if p["stream"] == run.stream]
        return sum(p["shard_reads"] for p in mine)

    run.reads = reads
    lines.foreachRDD(lambda rdd: run.add(rdd.collect()))
    started = threading.Event()
    ssc.start()
    wait_for_leases(lease_aws.client("dynamodb"), app, shards, started)
    try:
        return run.drive(started)
    finally:
        ssc.stop(stopSparkContext=False, stopGraceFully=False)


def run_source(spark, aws, lease_aws, shards: int, rate: int, args) -> dict:
    run = Run(aws, shards, rate, args.seconds, args.warmup, server_pids(aws, lease_aws))
    started = threading.Event()

    def each(batch_df, _batch_id):
        started.set()
        run.add([r[0] for r in batch_df.selectExpr("cast(data as string)").collect()])

    ends = tempfile.mkdtemp(prefix="bench-shards-")
    df = (
        spark.readStream.format("kinesis")
        .option("streamName", run.stream)
        .option("endpointUrl", aws.endpoint_url)
        .option("region", aws.region_name)
        .option("metadataPath", ends)
        .option("initialPosition", "latest")
        .option("idleShardPollMs", str(args.idle_poll_ms))
        .load()
    )
    query = (
        df.writeStream.foreachBatch(each)
        .option("checkpointLocation", os.path.join(ends, "cp"))
        .trigger(processingTime="1 second")
        .start()
    )
    try:
        kinesis = aws.client("kinesis")
        deadline = time.monotonic() + 120
        while not started.is_set() and time.monotonic() < deadline:  # a first batch
            kinesis.put_record(
                StreamName=run.stream, Data=f"{time.time():.6f} w".encode(), PartitionKey="w"
            )
            time.sleep(0.5)
        time.sleep(1.0)
        run.reads = functools.partial(_peeks, query)
        return run.drive(started)
    finally:
        query.stop()


def _peeks(query) -> int:
    """The driver's peek calls so far, from the source's reported latest offset."""
    progress = query.lastProgress or {}
    for source in progress.get("sources", []):
        report = source.get("latestOffset")
        if isinstance(report, str):
            report = json.loads(report)
        if isinstance(report, dict) and "peekCalls" in report:
            return int(report["peekCalls"])
    return 0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--shards", default="4,32,128")
    parser.add_argument(
        "--rate", default="500", help="records a second in all; a list (0,500) runs each"
    )
    parser.add_argument("--seconds", type=int, default=30)
    parser.add_argument("--warmup", type=float, default=5.0)
    parser.add_argument("--idle-poll-ms", type=int, default=0)
    parser.add_argument("--paths", default="createStream,source")
    add_server_option(parser, default="bench")
    parser.add_argument(
        "--fetch-interval-ms", type=int, default=None, help="default: the library's"
    )
    parser.add_argument(
        "--free-rounds",
        action="store_true",
        help="the baseline: rounds not aligned to batch times (as before the pacer)",
    )
    parser.add_argument(
        "--no-heap-freeze",
        action="store_true",
        help="the baseline: Python workers' heaps not frozen (PySpark's per-task gc walks them)",
    )
    parser.add_argument(
        "--lease-server",
        action="store_true",
        help="with --kinesis-server moto: DynamoDB and CloudWatch on a second moto server",
    )
    args = parser.parse_args()
    if args.free_rounds:
        from kinesis_dstream.dstream.pacing import RoundPacer

        RoundPacer.align = lambda self, batch_interval_s: None  # type: ignore[method-assign]
    counts = [int(n) for n in args.shards.split(",")]
    rates = [int(n) for n in args.rate.split(",")]
    with contextlib.ExitStack() as servers:
        moto = servers.enter_context(LocalAWS())
        aws = servers.enter_context(kinesis_server(args.kinesis_server, moto))
        # with moto serving Kinesis, --lease-server gives the leases a moto of their own
        lease_aws = servers.enter_context(LocalAWS()) if args.lease_server and aws is moto else moto
        spark_environment(aws)
        if args.no_heap_freeze:  # inherited by the JVM and its Python workers
            os.environ[FREEZE_ENV] = "0"
        from pyspark.sql import SparkSession

        from kinesis_dstream.sql import KinesisDataSource

        sc = local_spark_context("bench-shards")
        spark = SparkSession(sc)
        spark.dataSource.register(KinesisDataSource)
        print(
            f"{args.rate} records/s for {args.seconds} s (latency after the first "
            f"{args.warmup:g} s), Kinesis on {aws.label}, leases and metrics on "
            f"{lease_aws.label if lease_aws is not aws else 'the same server'}, local[2], "
            f"1 s batches, idleShardPollMs={args.idle_poll_ms}; createStream: "
            f"fetchIntervalMs={args.fetch_interval_ms or 'default'}, rounds "
            f"{'free-running' if args.free_rounds else 'aligned to batch times'}, worker "
            f"heaps {'not frozen' if args.no_heap_freeze else 'frozen'}. Load average at "
            f"start: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores."
        )
        print(
            "path          shards rate      put  delivered   p50 s   p99 s   our CPU s/s  "
            "reads/s  GetRecords/s   of which (CPU s/s); servers apart (CPU s/s)"
        )
        measured: dict = {}
        for path in args.paths.split(","):
            for shards in counts:
                for rate in rates:
                    if path == "createStream":
                        result = run_create_stream(sc, aws, lease_aws, shards, rate, args)
                    else:
                        result = run_source(spark, aws, lease_aws, shards, rate, args)
                    measured[path, shards, rate] = result
                    print(_row(path, shards, rate, result), flush=True)
        _print_derived(measured)
        print(f"Load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        sc.stop()


def _row(path: str, shards: int, rate: int, result: dict) -> str:
    calls = result["get_records_per_s"]
    return (
        f"{path:<13} {shards:>6} {rate:>4} {result['sent']:>8,} {result['delivered']:>10,} "
        f"{result['p50']:>7.2f} {result['p99']:>7.2f} {result['cpu_per_s']:>13.2f} "
        f"{result['reads_per_s']:>8.0f} {'-' if calls is None else f'{calls:.0f}':>13}   "
        + ", ".join(f"{k} {v:.2f}" for k, v in result["cpu_roles"].items())
        + "; "
        + ", ".join(f"{k} {v:.2f}" for k, v in result["server_cpu"].items())
    )


def _print_derived(measured: dict) -> None:
    """Our CPU per 1,000 idle reads (rate-0 runs) and per 1,000 records (the others)."""
    if not measured:
        return
    print(
        "\nDerived, our CPU (driver, JVM, Python workers; servers apart):\n"
        "path          shards rate   ms/1,000 GetRecords   ms/1,000 records (all-in, "
        "above rate 0)"
    )
    for (path, shards, rate), result in measured.items():
        calls = result["get_records_per_s"] or result["reads_per_s"]
        per_read = 1e3 * result["cpu_per_s"] / calls * 1000 if calls else float("nan")
        per_records = "-"
        if rate:
            all_in = 1e3 * result["cpu_per_s"] / rate * 1000
            idle = measured.get((path, shards, 0))
            above = (
                f"{1e3 * (result['cpu_per_s'] - idle['cpu_per_s']) / rate * 1000:.0f}"
                if idle
                else "-"
            )
            per_records = f"{all_in:.0f}, {above}"
        print(f"{path:<13} {shards:>6} {rate:>4} {per_read:>21.1f}   {per_records}")
    for path in dict.fromkeys(path for path, _, _ in measured):
        idle = sorted((s, r) for (p, s, rate), r in measured.items() if p == path and not rate)
        if len(idle) >= 2:  # the slope: Spark's fixed cost of empty batches cancels out
            (few, low), (many, high) = idle[0], idle[-1]
            calls = [r["get_records_per_s"] or r["reads_per_s"] for r in (low, high)]
            if calls[1] > calls[0]:
                slope = 1e6 * (high["cpu_per_s"] - low["cpu_per_s"]) / (calls[1] - calls[0])
                print(
                    f"{path}: {slope:.1f} ms of our CPU per 1,000 idle GetRecords more, "
                    f"{few} -> {many} shards at rate 0"
                )


if __name__ == "__main__":
    results.run(main, "shards", "createStream and the source at 4 to 512 shards")
