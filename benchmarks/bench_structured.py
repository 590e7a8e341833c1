"""The Structured Streaming source against a raw boto3 reader and createStream.

    python -m benchmarks.bench_structured [--records 200000] [--server moto|ministack]
        [--kinesis-server moto|bench] [--trace FILE]

One local server (moto's, in a child process; with ``--kinesis-server bench`` Kinesis is
the in-memory benchmark server, :mod:`benchmarks.kinesis_server`, and moto keeps only
createStream's leases) and one preloaded stream for all three, on this 2-core machine:
N records of ~100 bytes over 4 shards, then in one run

(a) a raw boto3 reader, one thread per shard, GetRecords(Limit=10000) from TRIM_HORIZON
    until it has read its shard (``bench_stream.raw_boto3``); and once more with its calls
    on a shard 200 ms apart, as Kinesis allows and as the source keeps them;
(b) ``spark.readStream.format("kinesis")`` from TRIM_HORIZON on local[2] into the
    ``noop`` sink, from ``start()`` until the query's progress counts all N;
(c) ``KinesisUtils.createStream`` from TRIM_HORIZON, 1 s batches, until a foreachRDD has
    counted all N (``bench_stream.streaming``).

Prints records/s of each and the ratios (b)/(a) and (b)/(c); and (b) once more, a second
query on the now warm session, which does not pay the JVM's first Python data source query,
and a third with ``shardsPerTask`` set so that every shard is read in one wave of tasks.
(c) runs after both, on a warm session, so (b)/(c) is printed for each of (b)'s queries.

Spark's own share, the floor: (f) a trivial Python streaming source with the source's columns
(:mod:`benchmarks.spark_floor`) whose one micro-batch has as many tasks as (b)'s warm query
had and yields the same N records from memory, on the same session. Where each warm query's
time went is printed beside it: from ``start()`` to its first trigger (the query's start: the
source runner's Python process, PySpark's and the source's imports), Spark's ``durationMs``
of the batches with records (latestOffset, walCommit, getBatch, queryPlanning, addBatch: the
tasks; commitOffsets; triggerExecution in all) and the rest (until the progress was seen).
``--trace FILE`` also prints the warm query's timeline, process by process
(:mod:`benchmarks.source_trace`: the source runner's start and imports, its calls, the tasks).

With ``--server ministack`` (the local server that speaks SubscribeToShard; see
tests/support/ministack_server.py) it runs (a), (b) and (d): the source with enhanced fan-out
(``consumerMode=efo``) on the same data, and prints (d)/(b) for each of (b)'s queries.
createStream needs DynamoDB for its leases and is left out there.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Optional

from benchmarks import results, source_trace
from kinesis_dstream.local import LocalAWS
from kinesis_dstream.retrieval.streams import ensure_stream

from .bench_stream import (
    SHARDS,
    ServerCPU,
    add_server_option,
    grouped_line,
    kinesis_server,
    met,
    paced_line,
    preload,
    raw_baselines,
    spark_environment,
    streaming,
)

#: Spark's durationMs fields of a micro-batch, in the order a trigger runs them.
PHASES = ("latestOffset", "walCommit", "getBatch", "queryPlanning", "addBatch", "commitOffsets")


@dataclass
class QueryRun:
    """One query: from start() until its progress counted every record."""

    seconds: float
    sizes: list  # rows of each micro-batch with rows
    #: start() until the first trigger began: the query's start (source runner, imports)
    start_s: float = 0.0
    #: Spark's durationMs, summed over the micro-batches with rows, in seconds
    phases: dict = field(default_factory=dict)
    tasks: int = 0  # tasks of the query's jobs
    started_at: float = 0.0  # wall clock of start()
    #: The source's largest MillisBehindLatest when its first batch with rows was planned
    #: (its progress report), in seconds; None: not reported (the floor). The source plans
    #: the ranges of shards more than 10 s behind apart from those near their tip.
    planned_lag_s: Optional[float] = None

    @property
    def rest_s(self) -> float:
        """Neither the start nor a batch with rows: empty triggers, seeing the progress."""
        return self.seconds - self.start_s - self.phases.get("triggerExecution", 0.0)

    def row(self, label: str) -> str:
        cells = [self.phases.get(name, 0.0) for name in (*PHASES, "triggerExecution")]
        return (
            f"{label:<30} {self.seconds:6.2f} {self.start_s:6.2f} "
            + " ".join(f"{c:6.2f}" for c in cells)
            + f" {self.rest_s:6.2f} {self.tasks:6d}"
            + ("" if self.planned_lag_s is None else f" {self.planned_lag_s:6.1f}")
        )


def breakdown_header() -> str:
    names = ("total", "start", "latOff", "wal", "getB", "plan", "addB", "commit", "trig", "rest")
    return f"{'query (seconds)':<30} " + " ".join(f"{n:>6}" for n in names) + "  tasks    lag"


def run_query(spark, df, n: int, work: str) -> QueryRun:
    """Start ``df`` into the noop sink and wait until its progress counts ``n`` records."""
    started_at = time.time()
    start = time.perf_counter()
    query = (
        df.writeStream.format("noop")
        .option("checkpointLocation", os.path.join(work, "checkpoint"))
        .trigger(processingTime="0 seconds")
        .start()
    )
    try:
        deadline = time.monotonic() + 600
        while sum(p["numInputRows"] for p in query.recentProgress) < n:
            if query.exception() is not None:
                raise SystemExit(f"the query failed: {query.exception()}")
            if time.monotonic() > deadline:
                raise SystemExit("the query did not deliver every record within 600 s")
            time.sleep(0.05)
        elapsed = time.perf_counter() - start
        progress = query.recentProgress
        tasks = _tasks(spark, str(query.runId))
    finally:
        query.stop()
    with_rows = [p for p in progress if p["numInputRows"]]
    sizes = [p["numInputRows"] for p in with_rows]
    assert sum(sizes) == n, sum(sizes)
    phases: dict = {}
    for p in with_rows:
        for name, ms in p["durationMs"].items():
            phases[name] = phases.get(name, 0.0) + ms / 1000.0
    first = datetime.fromisoformat(progress[0]["timestamp"].replace("Z", "+00:00"))
    lag = _planned_lag_s(with_rows[0])
    return QueryRun(
        elapsed, sizes, first.timestamp() - started_at, phases, tasks, started_at, lag
    )


def _planned_lag_s(progress: dict) -> Optional[float]:
    """The largest MillisBehindLatest the source reported with a batch's offset (the
    Python source's report is in ``sources[0].latestOffset``), in seconds."""
    report = progress["sources"][0].get("latestOffset")
    try:
        millis = json.loads(report).get("maxMillisBehindLatest") if report else None
    except (ValueError, AttributeError):
        return None
    return None if millis is None else millis / 1000.0


def _tasks(spark, run_id: str) -> int:
    """Tasks of every job the query ran (Spark runs a query's jobs in its run id's group)."""
    tracker = spark.sparkContext.statusTracker()
    count = 0
    for job_id in tracker.getJobIdsForGroup(run_id):
        job = tracker.getJobInfo(job_id)
        for stage_id in job.stageIds if job else ():
            stage = tracker.getStageInfo(stage_id)
            count += stage.numTasks if stage else 0
    return count


def structured(spark, aws, stream: str, n: int, work: str, **extra: str) -> QueryRun:
    """The source from TRIM_HORIZON into the noop sink until it delivered n records."""
    from kinesis_dstream.sql import KinesisDataSource

    spark.dataSource.register(KinesisDataSource)
    work = os.path.join(work, uuid.uuid4().hex[:8])
    df = (
        spark.readStream.format("kinesis")
        .option("streamName", stream)
        .option("endpointUrl", aws.endpoint_url)
        .option("region", aws.region_name)
        .option("initialPosition", "trim_horizon")
        .option("metadataPath", os.path.join(work, "ends"))
        .options(**extra)
        .load()
    )
    return run_query(spark, df, n, work)


def floor(spark, n: int, tasks: int, work: str) -> QueryRun:
    """(f): the same n records in ``tasks`` tasks from memory (:mod:`.spark_floor`)."""
    from .spark_floor import FloorSource

    spark.dataSource.register(FloorSource)
    work = os.path.join(work, uuid.uuid4().hex[:8])
    df = (
        spark.readStream.format("bench-floor")
        .option("records", str(n))
        .option("tasks", str(max(1, tasks)))
        .load()
    )
    return run_query(spark, df, n, work)


def _same_columns() -> None:
    """The floor yields the source's columns: Spark's share is measured on the same rows."""
    from kinesis_dstream.sql.schema import ARROW_SCHEMA

    from .spark_floor import ARROW_SCHEMA as FLOOR_SCHEMA

    assert FLOOR_SCHEMA.equals(ARROW_SCHEMA), (FLOOR_SCHEMA, ARROW_SCHEMA)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--server", choices=("moto", "ministack"), default="moto")
    parser.add_argument(
        "--trace",
        metavar="FILE",
        help="record the source's calls in every Spark Python process (benchmarks.source_trace) "
        "and print the warm query's timeline",
    )
    add_server_option(parser)
    args = parser.parse_args()
    n = args.records
    if args.trace:
        source_trace.enable(args.trace)
    if args.server == "ministack":
        from tests.support.ministack_server import MinistackServer

        server = MinistackServer()
    else:
        server = LocalAWS()
    bench = args.server == "moto" and args.kinesis_server == "bench"
    with (
        server as leases_at,
        kinesis_server("bench" if bench else "moto", leases_at) as aws,
        tempfile.TemporaryDirectory() as work,
    ):
        spark_environment(aws)
        from pyspark.sql import SparkSession

        spark = (
            SparkSession.builder.master("local[2]")
            .appName("bench-structured")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .getOrCreate()
        )
        spark.sparkContext.setLogLevel("ERROR")
        _same_columns()
        kinesis = aws.client("kinesis")
        stream = f"bench-structured-{uuid.uuid4().hex[:8]}"
        ensure_stream(kinesis, stream, SHARDS)
        label = "benchmark server" if bench else args.server
        print(f"server: {label} (local, child process); {n} records of ~100 bytes, {SHARDS} shards")
        preload(kinesis, stream, n)
        cpu = ServerCPU(aws)
        raw_s, raw_cpu, paced_s = raw_baselines(kinesis, stream, n, cpu)
        first_run = structured(spark, aws, stream, n, work)
        source_cpu = cpu.since_last()
        # The same query again (its own checkpoint, from TRIM_HORIZON) on the now warm
        # session: the first Python data source query of a JVM also pays Spark's and
        # PySpark's one-time start, which a second query does not.
        warm_run = structured(spark, aws, stream, n, work)
        warm_cpu = cpu.since_last()
        # Once more with every shard in one wave of tasks (2 task slots here).
        per_task = str(-(-SHARDS // spark.sparkContext.defaultParallelism))
        grouped_run = structured(spark, aws, stream, n, work, shardsPerTask=per_task)
        # Spark's own share: the floor with the warm queries' tasks, after one floor query
        # that pays for the floor source's first use (as the source's first query did).
        floor(spark, n, warm_run.tasks, work)
        floors = {t: floor(spark, n, t, work) for t in sorted({warm_run.tasks, grouped_run.tasks})}
        if args.server == "ministack":
            efo_run = structured(spark, aws, stream, n, work, consumerMode="efo")
        else:
            dstream_s = streaming(spark.sparkContext, leases_at, stream, n, aws)[0]
        spark.stop()
    source_s, sizes = first_run.seconds, first_run.sizes
    warm_s, warm_sizes = warm_run.seconds, warm_run.sizes
    grouped_s = grouped_run.seconds
    raw, source, warm = n / raw_s, n / source_s, n / warm_s
    print(
        f"raw boto3, thread per shard:   {raw:10,.0f} records/s ({raw_s:.1f} s; "
        f"server CPU {raw_cpu:.1f} s)"
    )
    print(
        f"readStream.format('kinesis'): {source:10,.0f} records/s ({source_s:.1f} s, "
        f"{len(sizes)} micro-batches, largest {max(sizes)}; server CPU {source_cpu:.1f} s)"
    )
    print(f"source / raw reader:    {source / raw:.2f} (target >= 0.9)")
    print(
        f"the same query again, warm session: {warm:,.0f} records/s ({warm_s:.1f} s, "
        f"{len(warm_sizes)} micro-batches; server CPU {warm_cpu:.1f} s), {warm / raw:.2f} of raw "
        f"(target >= 0.9 warm: {met(warm / raw)})"
    )
    print(grouped_line("the same", per_task, n, grouped_s, raw))
    print(paced_line(n, paced_s, warm, "warm source"))
    print_breakdown(
        n,
        raw_s,
        paced_s,
        [
            ("source, first query", first_run),
            ("source, warm", warm_run),
            (f"source, warm, shardsPerTask={per_task}", grouped_run),
            *((f"Spark's floor, {t} tasks", f) for t, f in floors.items()),
        ],
        floors,
    )
    if args.trace:
        print("the warm query, process by process (s after start(); benchmarks.source_trace):")
        print(
            source_trace.timeline(
                source_trace.load(args.trace),
                warm_run.started_at,
                warm_run.started_at + warm_run.seconds + 0.5,
            )
        )
    if args.server == "ministack":
        efo_rate = n / efo_run.seconds
        print(
            f"the same, consumerMode=efo:   {efo_rate:10,.0f} records/s ({efo_run.seconds:.1f} s, "
            f"{len(efo_run.sizes)} micro-batches)"
        )
        print(
            f"fan-out / polling source: {efo_rate / source:.2f} against the first query; "
            f"{efo_rate / warm:.2f} against the second (both on the warm session)"
        )
        return
    dstream = n / dstream_s
    print(f"KinesisUtils.createStream:     {dstream:10,.0f} records/s ({dstream_s:.1f} s)")
    print(
        f"source / createStream:  {source / dstream:.2f} with the source's first query; "
        f"{warm / dstream:.2f} with its second (both on the warm session)"
    )


def print_breakdown(n: int, raw_s: float, paced_s: float, runs: list, floors: dict) -> None:
    """Where each query's time went, and the warm queries above Spark's floor."""
    print(
        "where the time went: start = start() until the first trigger; Spark's durationMs of "
        "the batches with records; rest = until the progress was seen; lag = the largest "
        "MillisBehindLatest (s) the first batch was planned with (over 10 s: a backlog)"
    )
    print(breakdown_header())
    for label, run in runs:
        print(run.row(label))
    for label, run in runs:
        base = floors.get(run.tasks)
        if base is None or label.startswith("Spark") or "first" in label:
            continue
        ours = run.seconds - base.seconds
        print(
            f"{label}: Spark's floor ({run.tasks} tasks) {base.seconds:.2f} s of its "
            f"{run.seconds:.2f} s, ours above it {ours:.2f} s (the raw reader's whole read "
            f"{raw_s:.2f} s, paced {paced_s:.2f} s); the floor plus the raw reader's read "
            f"would be {raw_s / (base.seconds + raw_s):.2f} of raw"
        )


if __name__ == "__main__":
    results.run(main, "structured", "The Structured Streaming source against the raw reader")
