"""Cost that should follow the data, not the shard count: a fixed trickle over many shards.

    python -m benchmarks.bench_shards [--shards 4,32,128] [--rate 500] [--seconds 30]
                                      [--warmup 5] [--paths createStream,source]
                                      [--idle-poll-ms 2000] [--fetch-interval-ms N]
                                      [--free-rounds] [--lease-server]
                                      [--no-heap-freeze]

One local server (moto's, in a child process). For each shard count, a producer in its
own process puts ``--rate`` records a second (spread over every shard by key), each
carrying its put time, for ``--seconds``; the reader under test runs from LATEST with 1 s
batches (createStream) or a 1 s trigger (the source, into foreachBatch). Printed per shard
count: records put and delivered, latency put -> output p50/p99 of the records put after
the first ``--warmup`` seconds (the reader's first rounds, Python workers and JIT are not
the steady state), the CPU seconds per second of our processes apart from the server's
(in total, and for this driver, its JVM and the Python workers), and GetRecords calls
(createStream: shard reads in rounds; the source: the driver's peeks) per second.
``--idle-poll-ms 0`` reads every shard every round (the baseline for idle polling: run
both in one session).
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
import sys
import tempfile
import threading
import time
import uuid

from benchmarks import results
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
        self, aws, shards: int, rate: int, seconds: int, warmup: float, servers: set
    ) -> None:
        self.aws, self.shards, self.rate, self.seconds = aws, shards, rate, seconds
        self.servers = servers  # pids of the local servers: not our CPU
        self.warmup = warmup
        self.measure_from = float("inf")  # put time (epoch s) of the first measured record
        self.delivered = 0
        self.reads = lambda: 0  # GetRecords calls so far
        self.stream = f"bench-shards-{shards}-{uuid.uuid4().hex[:6]}"
        self.delays: list = []
        self.lock = threading.Lock()
        ensure_stream(aws.client("kinesis"), self.stream, shards)

    def add(self, put_times: list) -> None:
        now = time.time()
        with self.lock:
            self.delivered += len(put_times)
            self.delays.extend(now - t for t in put_times if t >= self.measure_from)

    def drive(self, started: threading.Event) -> dict:
        """Produce, wait for delivery (bounded), and measure CPU while producing."""
        if not started.wait(120):
            raise SystemExit(f"{self.stream}: the reader did not start within 120 s")
        time.sleep(2.0)  # the reader is past its start-up
        server = set(self.servers)
        with self.lock:
            self.delivered = 0
            self.delays.clear()
        self.measure_from = time.time() + self.warmup
        sampler = CpuSampler(os.getpid(), server).start()
        t0, reads0 = time.monotonic(), self.reads()
        producer = multiprocessing.get_context("spawn").Process(
            target=produce, args=(self.aws.env(), self.stream, self.seconds, self.rate)
        )
        producer.start()
        producer.join(self.seconds + 120)
        spent, t1 = sampler.stop({producer.pid}), time.monotonic()
        reads1 = self.reads()
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
            "p50": statistics.median(delays) if delays else float("nan"),
            "p99": delays[max(0, int(len(delays) * 0.99) - 1)] if delays else float("nan"),
            "cpu_per_s": sum(spent.values()) / (t1 - t0),
            "cpu_roles": {role: seconds / (t1 - t0) for role, seconds in spent.items()},
        }


def run_create_stream(sc, aws, lease_aws, shards: int, args) -> dict:
    from pyspark.streaming import StreamingContext

    from kinesis_dstream.dstream.context import progress

    run = Run(aws, shards, args.rate, args.seconds, args.warmup, {aws.pid, lease_aws.pid})
    ssc = StreamingContext(sc, 1)
    app = f"bench-{uuid.uuid4().hex[:8]}"
    lines = KinesisUtils.createStream(
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
        idleShardPollMs=args.idle_poll_ms,
        fetchIntervalMs=args.fetch_interval_ms,
    )

    def reads() -> int:  # shard reads made: every planned read of every round
        mine = [p for p in progress() if p["stream"] == run.stream]
        return sum(p["shard_reads"] for p in mine)

    run.reads = reads
    lines.foreachRDD(lambda rdd: run.add(rdd.map(lambda x: float(x.split(" ")[0])).collect()))
    started = threading.Event()
    ssc.start()
    dynamodb = lease_aws.client("dynamodb")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not started.is_set():  # every lease held
        try:
            items = dynamodb.scan(TableName=app, ConsistentRead=True)["Items"]
        except dynamodb.exceptions.ResourceNotFoundException:
            items = []
        if len([i for i in items if "leaseOwner" in i]) == shards:
            started.set()
        time.sleep(0.2)
    try:
        return run.drive(started)
    finally:
        ssc.stop(stopSparkContext=False, stopGraceFully=False)


def run_source(spark, aws, shards: int, args) -> dict:
    run = Run(aws, shards, args.rate, args.seconds, args.warmup, {aws.pid})
    started = threading.Event()

    def each(batch_df, _batch_id):
        started.set()
        run.add(
            [
                float(r[0].split(" ")[0])
                for r in batch_df.selectExpr("cast(data as string)").collect()
            ]
        )

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
    parser.add_argument("--rate", type=int, default=500)
    parser.add_argument("--seconds", type=int, default=30)
    parser.add_argument("--warmup", type=float, default=5.0)
    parser.add_argument("--idle-poll-ms", type=int, default=2000)
    parser.add_argument("--paths", default="createStream,source")
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
        help="createStream's DynamoDB and CloudWatch on a second moto server",
    )
    args = parser.parse_args()
    if args.free_rounds:
        from kinesis_dstream.dstream.pacing import RoundPacer

        RoundPacer.align = lambda self, batch_interval_s: None  # type: ignore[method-assign]
    counts = [int(n) for n in args.shards.split(",")]
    with contextlib.ExitStack() as servers:
        aws = servers.enter_context(LocalAWS())
        lease_aws = servers.enter_context(LocalAWS()) if args.lease_server else aws
        os.environ.update({k: v for k, v in aws.env().items() if k != "AWS_ENDPOINT_URL"})
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        if args.no_heap_freeze:  # inherited by the JVM and its Python workers
            os.environ[FREEZE_ENV] = "0"
        from pyspark import SparkConf, SparkContext
        from pyspark.sql import SparkSession

        from kinesis_dstream.sql import KinesisDataSource

        sc = SparkContext(
            conf=SparkConf()
            .setMaster("local[2]")
            .setAppName("bench-shards")
            .set("spark.ui.enabled", "false")
            .set("spark.ui.showConsoleProgress", "false")
        )
        sc.setLogLevel("ERROR")
        spark = SparkSession(sc)
        spark.dataSource.register(KinesisDataSource)
        print(
            f"{args.rate} records/s for {args.seconds} s (latency after the first "
            f"{args.warmup:g} s), moto's server, local[2], 1 s batches, idleShardPollMs="
            f"{args.idle_poll_ms}; createStream: fetchIntervalMs="
            f"{args.fetch_interval_ms or 'default'}, rounds "
            f"{'free-running' if args.free_rounds else 'aligned to batch times'}, leases on "
            f"{'a second server' if args.lease_server else 'the same server'}, worker heaps "
            f"{'not frozen' if args.no_heap_freeze else 'frozen'}"
        )
        print(
            "path          shards      put  delivered   p50 s   p99 s   our CPU s/s  reads/s"
            "   of which (CPU s/s)"
        )
        for path in args.paths.split(","):
            for shards in counts:
                if path == "createStream":
                    result = run_create_stream(sc, aws, lease_aws, shards, args)
                else:
                    result = run_source(spark, aws, shards, args)
                print(
                    f"{path:<13} {shards:>6} {result['sent']:>8,} {result['delivered']:>10,} "
                    f"{result['p50']:>7.2f} {result['p99']:>7.2f} {result['cpu_per_s']:>13.2f} "
                    f"{result['reads_per_s']:>8.0f}   "
                    + ", ".join(f"{k} {v:.2f}" for k, v in result["cpu_roles"].items()),
                    flush=True,
                )
        sc.stop()


if __name__ == "__main__":
    results.run(main, "shards", "createStream and the source at 4 to 512 shards")
