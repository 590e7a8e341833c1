"""Count words from a Kinesis stream with Structured Streaming, in pure Python.

The twin of examples/kinesis_wordcount.py (the DStream word count), on
``spark.readStream.format("kinesis")``.

Usage:
    python examples/kinesis_structured_wordcount.py <app-name> <stream-name> \
        <endpoint-url> <region-name>
    python examples/kinesis_structured_wordcount.py --local [--seconds N]

The first form reads from LATEST, splits each record into words and prints the running
counts to the console every second; <app-name> names the query and its checkpoint
directory (``--checkpoint`` to choose one). Credentials come from the AWS SDK's default
chain.

``--local`` needs no AWS account: it starts the embedded local AWS (moto's server on
127.0.0.1), creates a stream, runs the word producer (1,000 records/s of 10 words) for N
seconds beside the query, prints the totals counted next to the producer's totals, and
exits 0 only if they match.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time

from pyspark.sql import SparkSession

from kinesis_dstream.sql import KinesisDataSource

LOCAL_STREAM = "kinesis-structured-wordcount"
LOCAL_SHARDS = 2


def word_counts(spark, stream_name, endpoint_url, region_name, **options):
    spark.dataSource.register(KinesisDataSource)
    lines = (
        spark.readStream.format("kinesis")
        .option("streamName", stream_name)
        .option("endpointUrl", endpoint_url)
        .option("region", region_name)
        .option("initialPosition", "latest")
        .options(**options)
        .load()
    )
    words = lines.selectExpr("explode(split(cast(data as string), ' ')) as word")
    return words.groupBy("word").count()


def run(app_name, stream_name, endpoint_url, region_name, checkpoint):
    spark = SparkSession.builder.appName(app_name).getOrCreate()
    counts = word_counts(spark, stream_name, endpoint_url, region_name)
    query = (
        counts.writeStream.outputMode("complete")
        .format("console")
        .queryName(app_name)
        .option("checkpointLocation", checkpoint)
        .trigger(processingTime="1 second")
        .start()
    )
    query.awaitTermination()


def wait_until_polling(query, timeout_s=120.0):
    """Until the query has looked at every shard once: it reads from LATEST from then on."""
    deadline = time.monotonic() + timeout_s
    while query.status["message"] != "Waiting for data to arrive":
        if query.exception() is not None:
            raise SystemExit(f"the query failed: {query.exception()}")
        if time.monotonic() > deadline:
            raise SystemExit(f"the query did not start within {timeout_s:.0f}s")
        time.sleep(0.1)


def run_local(seconds):
    from kinesis_dstream import KinesisProducer
    from kinesis_dstream.demo.word_producer import produce
    from kinesis_dstream.local import LocalAWS
    from kinesis_dstream.retrieval.streams import ensure_stream

    with LocalAWS() as aws, tempfile.TemporaryDirectory() as work:
        os.environ.update(aws.env())  # the driver and Spark's Python workers use it
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        kinesis = aws.client("kinesis")
        ensure_stream(kinesis, LOCAL_STREAM, LOCAL_SHARDS)
        spark = (
            SparkSession.builder.master("local[2]")
            .appName("kinesis-structured-wordcount")
            .config("spark.ui.enabled", "false")
            .config("spark.sql.shuffle.partitions", "2")
            .getOrCreate()
        )
        spark.sparkContext.setLogLevel("ERROR")
        counts = word_counts(
            spark,
            LOCAL_STREAM,
            aws.endpoint_url,
            aws.region_name,
            metadataPath=os.path.join(work, "ends"),  # where batch ends are recorded
        )
        query = (
            counts.writeStream.outputMode("complete")
            .format("memory")
            .queryName("word_counts")
            .option("checkpointLocation", os.path.join(work, "checkpoint"))
            .trigger(processingTime="1 second")
            .start()
        )
        counted: dict = {}
        try:
            wait_until_polling(query)
            with KinesisProducer(LOCAL_STREAM, client=kinesis) as producer:
                sent = produce(producer, 1000, 10, seconds, random.Random(7))
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and query.exception() is None:
                counted = {
                    r["word"]: r["count"] for r in spark.sql("select * from word_counts").collect()
                }
                if counted == dict(sent):
                    break
                time.sleep(0.5)
        finally:
            query.stop()
            spark.stop()
        print("Totals for the words sent:  ", sorted(sent.items()))
        print("Totals for the words counted:", sorted(counted.items()))
        if counted != dict(sent):
            print("MISMATCH: the counts differ from what was sent")
            return 1
        print("OK: every word sent was counted exactly once")
        return 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("args", nargs="*", metavar="app-name stream-name endpoint-url region")
    parser.add_argument("--local", action="store_true", help="run on the embedded local AWS")
    parser.add_argument("--seconds", type=int, default=10, help="with --local: how long to produce")
    parser.add_argument("--checkpoint", help="checkpoint directory (default: a temp dir per app)")
    args = parser.parse_args(argv)
    if args.local:
        if args.args:
            parser.error("--local takes no positional arguments")
        if args.seconds < 1:
            parser.error("--seconds must be >= 1")
        return run_local(args.seconds)
    if len(args.args) != 4:
        parser.error("give <app-name> <stream-name> <endpoint-url> <region-name>, or --local")
    app_name = args.args[0]
    checkpoint = args.checkpoint or os.path.join(tempfile.gettempdir(), f"{app_name}-checkpoint")
    run(*args.args, checkpoint)
    return 0


if __name__ == "__main__":
    sys.exit(main())
