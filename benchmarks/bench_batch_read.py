"""A backlog read as a batch (``spark.read.format("kinesis")``) against the raw reader.

    python -m benchmarks.bench_batch_read [--records 200000] [--kinesis-server moto|bench]
        [--floor-first] [--task-slots 2]

One local server (moto's, in a child process; with ``--kinesis-server bench`` the in-memory
benchmark server, :mod:`benchmarks.kinesis_server`) and one preloaded stream of N records
of ~100 bytes over 4 shards, then in one run:

(a) a raw boto3 reader, one thread per shard, GetRecords(Limit=10000) from TRIM_HORIZON
    until it has read its shard (``bench_stream.raw_boto3``); and once more with its calls
    on a shard 200 ms apart, as Kinesis allows and as the batch read keeps them
    (``minFetchPeriod``);
(b) ``spark.read.format("kinesis")`` from the trim horizon to ``latest`` on local[2],
    ``count()``, twice: the first pays the JVM's first Python data source read, the
    second runs on the warm session (by default two shards a task, read concurrently:
    one wave on two task slots); and once more with ``shardsPerTask=1``, a shard a task
    (the default before 2026-11-28: two waves on two slots).
(c) Spark's own floor: a Python data source with the same schema and tasks that yields
    the same number of records from memory (one Arrow batch of 10,000 built once per
    task, yielded again and again: no Kinesis, no decoding), ``count()`` on the warm
    session; and the same with no records, Spark's fixed cost of a Python data source
    read (its planning workers and tasks). What (c) takes is what Spark spends on tasks,
    Python workers and Arrow batches to the JVM, which no reader can save.

Prints records/s of each and the ratios (b)/(a), with the server's CPU during each apart
from the client's; every read must count exactly N.
"""

from __future__ import annotations

import argparse
import os
import time
import uuid

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

from benchmarks import results
from kinesis_dstream.local import LocalAWS
from kinesis_dstream.retrieval.streams import ensure_stream

from .bench_stream import (
    SHARDS,
    ServerCPU,
    add_server_option,
    kinesis_server,
    met,
    paced_line,
    preload,
    raw_baselines,
    spark_environment,
)

PAGE = 10_000


class InMemorySource(DataSource):
    """(c): ``spark.read.format("bench-in-memory")``, N records over SHARDS tasks."""

    @classmethod
    def name(cls) -> str:
        return "bench-in-memory"

    def schema(self):
        from kinesis_dstream.sql.schema import SCHEMA

        return SCHEMA

    def reader(self, schema):
        return InMemoryReader(int(self.options["records"]))


class InMemoryReader(DataSourceReader):
    def __init__(self, records: int) -> None:
        self.records = records

    def partitions(self) -> list:
        return [InputPartition(i) for i in range(SHARDS)]

    def read(self, partition):
        from datetime import datetime, timezone

        from kinesis_dstream.record import KinesisRecord
        from kinesis_dstream.sql.schema import records_to_arrow

        shard = f"shardId-{partition.value:012d}"
        now = datetime.now(timezone.utc)
        page = [
            KinesisRecord(b"x" * 99, f"k{i}", str(10**20 + i), 0, None, now) for i in range(PAGE)
        ]
        batch = records_to_arrow(page, "in-memory", shard)
        left = self.records // SHARDS + (partition.value < self.records % SHARDS)
        while left > 0:
            yield batch if left >= PAGE else batch.slice(0, left)
            left -= PAGE


def in_memory_count(spark, n: int) -> tuple:
    """(seconds, records counted) of (c)."""
    spark.dataSource.register(InMemorySource)
    start = time.perf_counter()
    count = spark.read.format("bench-in-memory").option("records", str(n)).load().count()
    return time.perf_counter() - start, count


def batch_count(spark, aws, stream: str, **extra: str) -> tuple:
    """(seconds, records counted) of one batch read of the whole stream."""
    from kinesis_dstream.sql import KinesisDataSource

    spark.dataSource.register(KinesisDataSource)
    start = time.perf_counter()
    count = (
        spark.read.format("kinesis")
        .option("streamName", stream)
        .option("endpointUrl", aws.endpoint_url)
        .option("region", aws.region_name)
        .options(**extra)
        .load()
        .count()
    )
    return time.perf_counter() - start, count


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument(
        "--task-slots",
        type=int,
        default=2,
        help="local[N]: task slots; more than the cores lets paced shards wait together",
    )
    parser.add_argument(
        "--floor-first",
        action="store_true",
        help="read (c) first, on the fresh session: is a first read's cost Spark's own?",
    )
    add_server_option(parser)
    args = parser.parse_args()
    n = args.records
    with LocalAWS() as moto, kinesis_server(args.kinesis_server, moto) as aws:
        spark_environment(aws)
        from pyspark.sql import SparkSession

        spark = (
            SparkSession.builder.master(f"local[{args.task_slots}]")
            .appName("bench-batch-read")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .getOrCreate()
        )
        spark.sparkContext.setLogLevel("ERROR")
        kinesis = aws.client("kinesis")
        stream = f"bench-batch-{uuid.uuid4().hex[:8]}"
        ensure_stream(kinesis, stream, SHARDS)
        preload(kinesis, stream, n)
        cpu = ServerCPU(aws)
        print(
            f"server: {cpu.label} (local, child process); {n} records of ~100 B, {SHARDS} "
            f"shards; local[{args.task_slots}] on {os.cpu_count()} cores"
        )
        raw_s, raw_cpu, paced_s = raw_baselines(kinesis, stream, n, cpu)
        if args.floor_first:
            cold_floor_s, _ = in_memory_count(spark, n)
        first_s, first_n = batch_count(spark, aws, stream)
        first_cpu = cpu.since_last()
        warm_s, warm_n = batch_count(spark, aws, stream)
        warm_cpu = cpu.since_last()
        alone_s, alone_n = batch_count(spark, aws, stream, shardsPerTask="1")
        if not args.floor_first:
            in_memory_count(spark, n)  # its first read pays for registering the source
        floor_s, floor_n = in_memory_count(spark, n)
        fixed_s, _ = in_memory_count(spark, 0)
        spark.stop()
    counted = (first_n, warm_n, alone_n, floor_n)
    if any(c != n for c in counted):
        raise SystemExit(f"the batch reads counted {counted}, not {n}")
    raw, first, warm = n / raw_s, n / first_s, n / warm_s
    if args.floor_first:
        print(
            f"Spark's floor (c) as the fresh session's first read: {n / cold_floor_s:10,.0f} "
            f"records/s ({cold_floor_s:.2f} s); the batch read below is the second read"
        )
    print(
        f"raw boto3, thread per shard:        {raw:10,.0f} records/s ({raw_s:.2f} s; "
        f"server CPU {raw_cpu:.2f} s)"
    )
    print(
        f"spark.read.format('kinesis') first: {first:10,.0f} records/s ({first_s:.2f} s; "
        f"server CPU {first_cpu:.2f} s)"
    )
    print(
        f"the same read again, warm session:  {warm:10,.0f} records/s ({warm_s:.2f} s; "
        f"server CPU {warm_cpu:.2f} s)"
    )
    floor = n / floor_s
    print(
        f"Spark's floor, the same tasks from memory: {floor:10,.0f} records/s ({floor_s:.2f} s; "
        f"{floor / raw:.2f} of raw; the batch read took {warm_s - floor_s:.2f} s more)"
    )
    print(
        f"  of which fixed (the same read of 0 records): {fixed_s:.2f} s; per record "
        f"{(floor_s - fixed_s) / n * 1e6:.1f} us"
    )
    print(
        f"batch / raw reader: first {first / raw:.2f}, warm {warm / raw:.2f} "
        f"(target >= 0.9 warm: {met(warm / raw)})"
    )
    print(
        f"warm, shardsPerTask=1 (a shard a task): {n / alone_s:,.0f} records/s ({alone_s:.2f} s), "
        f"{n / alone_s / raw:.2f} of raw; the default (two a task) took {warm_s:.2f} s"
    )
    print(paced_line(n, paced_s, warm, "warm batch"))


if __name__ == "__main__":
    results.run(main, "batch-read", "A backlog read as a batch against the raw reader")
