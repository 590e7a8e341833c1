"""Backfill a day of a Kinesis stream into Parquet with one batch read.

Usage:
    python examples/kinesis_batch_backfill.py <stream-name> <day> <output-path> \
        [--endpoint-url URL] [--region REGION]
    python examples/kinesis_batch_backfill.py --local

The first form reads every record of <stream-name> that arrived on <day> (YYYY-MM-DD,
UTC: from its midnight, inclusive, to the next midnight, exclusive) with
``spark.read.format("kinesis")`` and writes them as Parquet under <output-path>,
partitioned by the hour they arrived in (overwriting what is there, so a rerun replaces
the day). A day that has not ended yet is read up to the moment the read is planned.
Credentials come from the AWS SDK's default chain.

``--local`` needs no AWS account: it starts the embedded local AWS (moto's server on
127.0.0.1), creates a stream of two shards, puts 1,000 records, backfills today into a
temporary directory, reads the Parquet back and exits 0 only if it holds every record
once.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from datetime import date, datetime, timedelta, timezone

from pyspark.sql import SparkSession

from kinesis_dstream.sql import KinesisDataSource

LOCAL_STREAM = "kinesis-batch-backfill"
LOCAL_RECORDS = 1000


def backfill(spark, stream_name, day, output_path, **connection):
    """Read the day's records of ``stream_name`` and write them to ``output_path``."""
    spark.dataSource.register(KinesisDataSource)
    midnight = datetime(day.year, day.month, day.day, tzinfo=timezone.utc)
    records = (
        spark.read.format("kinesis")
        .option("streamName", stream_name)
        .option("startingTimestamp", midnight.isoformat())
        .option("endingTimestamp", (midnight + timedelta(days=1)).isoformat())
        .options(**connection)
        .load()
    )
    hourly = records.selectExpr("*", "date_format(approximateArrivalTimestamp, 'HH') AS hour")
    hourly.write.mode("overwrite").partitionBy("hour").parquet(output_path)


def run_local():
    from kinesis_dstream import KinesisProducer
    from kinesis_dstream.local import LocalAWS
    from kinesis_dstream.retrieval.streams import ensure_stream

    with LocalAWS() as aws, tempfile.TemporaryDirectory() as work:
        os.environ.update(aws.env())  # the driver and Spark's Python workers use it
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        kinesis = aws.client("kinesis")
        ensure_stream(kinesis, LOCAL_STREAM, 2)
        with KinesisProducer(LOCAL_STREAM, client=kinesis) as producer:
            for i in range(LOCAL_RECORDS):
                producer.put(f"event-{i}", f"key-{i}")
        spark = (
            SparkSession.builder.master("local[2]")
            .appName("kinesis-batch-backfill")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .getOrCreate()
        )
        spark.sparkContext.setLogLevel("ERROR")
        output = os.path.join(work, "events")
        today = datetime.now(timezone.utc).date()
        backfill(
            spark, LOCAL_STREAM, today, output, endpointUrl=aws.endpoint_url,
            region=aws.region_name,
        )  # fmt: skip
        written = spark.read.parquet(output)
        count = written.count()
        distinct = written.select("data").distinct().count()
        files = [f for _, _, names in os.walk(output) for f in names if f.endswith(".parquet")]
        spark.stop()
    print(f"BACKFILLED {count} records ({distinct} distinct) of {today} into {len(files)} files")
    return 0 if count == distinct == LOCAL_RECORDS else 1


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--local", action="store_true", help="run against the local AWS")
    parser.add_argument("stream_name", nargs="?")
    parser.add_argument("day", nargs="?", type=date.fromisoformat, help="YYYY-MM-DD (UTC)")
    parser.add_argument("output_path", nargs="?")
    parser.add_argument("--endpoint-url")
    parser.add_argument("--region")
    args = parser.parse_args(argv)
    if args.local:
        return run_local()
    if not (args.stream_name and args.day and args.output_path):
        parser.error("give <stream-name> <day> <output-path>, or --local")
    connection = {}
    if args.endpoint_url:
        connection["endpointUrl"] = args.endpoint_url
    if args.region:
        connection["region"] = args.region
    spark = SparkSession.builder.appName(f"backfill-{args.stream_name}-{args.day}").getOrCreate()
    backfill(spark, args.stream_name, args.day, args.output_path, **connection)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
