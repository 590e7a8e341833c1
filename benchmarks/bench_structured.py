"""The Structured Streaming source against a raw boto3 reader and createStream.

    python -m benchmarks.bench_structured [--records 200000] [--server moto|ministack]
        [--kinesis-server moto|bench]

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

With ``--server ministack`` (the local server that speaks SubscribeToShard; see
tests/support/ministack_server.py) it runs (a), (b) and (d): the source with enhanced fan-out
(``consumerMode=efo``) on the same data, and prints (d)/(b) for each of (b)'s queries.
createStream needs DynamoDB for its leases and is left out there.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
import uuid

from benchmarks import results
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


def structured(spark, aws, stream: str, n: int, work: str, **extra: str) -> tuple:
    """Seconds from start() until the source delivered n records; and the batch sizes."""
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
                raise SystemExit("the source did not deliver every record within 600 s")
            time.sleep(0.05)
        elapsed = time.perf_counter() - start
        sizes = [p["numInputRows"] for p in query.recentProgress if p["numInputRows"]]
    finally:
        query.stop()
    assert sum(sizes) == n, sum(sizes)
    return elapsed, sizes


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--server", choices=("moto", "ministack"), default="moto")
    add_server_option(parser)
    args = parser.parse_args()
    n = args.records
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
        kinesis = aws.client("kinesis")
        stream = f"bench-structured-{uuid.uuid4().hex[:8]}"
        ensure_stream(kinesis, stream, SHARDS)
        label = "benchmark server" if bench else args.server
        print(f"server: {label} (local, child process); {n} records of ~100 bytes, {SHARDS} shards")
        preload(kinesis, stream, n)
        cpu = ServerCPU(aws)
        raw_s, raw_cpu, paced_s = raw_baselines(kinesis, stream, n, cpu)
        source_s, sizes = structured(spark, aws, stream, n, work)
        source_cpu = cpu.since_last()
        # The same query again (its own checkpoint, from TRIM_HORIZON) on the now warm
        # session: the first Python data source query of a JVM also pays Spark's and
        # PySpark's one-time start, which a second query does not.
        warm_s, warm_sizes = structured(spark, aws, stream, n, work)
        warm_cpu = cpu.since_last()
        # Once more with every shard in one wave of tasks (2 task slots here).
        per_task = str(-(-SHARDS // spark.sparkContext.defaultParallelism))
        grouped_s, _ = structured(spark, aws, stream, n, work, shardsPerTask=per_task)
        if args.server == "ministack":
            efo_s, efo_sizes = structured(spark, aws, stream, n, work, consumerMode="efo")
        else:
            dstream_s = streaming(spark.sparkContext, leases_at, stream, n, aws)[0]
        spark.stop()
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
    if args.server == "ministack":
        efo = n / efo_s
        print(
            f"the same, consumerMode=efo:   {efo:10,.0f} records/s ({efo_s:.1f} s, "
            f"{len(efo_sizes)} micro-batches)"
        )
        print(
            f"fan-out / polling source: {efo / source:.2f} against the first query; "
            f"{efo / warm:.2f} against the second (both on the warm session)"
        )
        return
    dstream = n / dstream_s
    print(f"KinesisUtils.createStream:     {dstream:10,.0f} records/s ({dstream_s:.1f} s)")
    print(
        f"source / createStream:  {source / dstream:.2f} with the source's first query; "
        f"{warm / dstream:.2f} with its second (both on the warm session)"
    )


if __name__ == "__main__":
    results.run(main, "structured", "The Structured Streaming source against the raw reader")
