"""A Structured Streaming job as public scripts write one, with no import of kinesis_dstream
and no register line: ``format("kinesis")`` and ``format("aws-kinesis")`` are found by
Spark's own lookup of Python data sources.

    sql_no_register_app.py <local[2] | sc://host:port> <stream-a> <stream-b> <region> <count>
                           [--then-register]

Writes ``count`` records to stream A through ``format("kinesis")`` (a batch write, the
source's own option names) and ``count`` to stream B through ``format("aws-kinesis")``
(the awslabs connector's ``kinesis.`` options); then reads A back through
``format("aws-kinesis")`` and B through ``format("kinesis")``, each as a stream from the
trim horizon with Trigger.AvailableNow into a memory table, as the Databricks and EMR
samples read. The AWS SDK's environment (credentials, ``AWS_ENDPOINT_URL``) says where.
Prints ``ROW <name> <data>`` for each record read and ``DONE``; exits 1 on a failure.
With ``--then-register``, afterwards registers the package's classes the documented way
(over the names Spark found) and reads B once more as a batch: ``REGISTERED <count>``.
"""

import sys

from pyspark.sql import SparkSession

master, stream_a, stream_b, region, count = sys.argv[1:6]
count = int(count)
then_register = "--then-register" in sys.argv[6:]

builder = SparkSession.builder.appName("no-register")
builder = builder.remote(master) if master.startswith("sc://") else builder.master(master)
spark = builder.getOrCreate()


def records(prefix):
    rows = [(f"pk-{i}", f"{prefix}-{i}".encode()) for i in range(count)]
    return spark.createDataFrame(rows, "partitionKey string, data binary")


try:
    records("a").write.format("kinesis").option("streamName", stream_a).option(
        "region", region
    ).mode("append").save()
    records("b").write.format("aws-kinesis").option("kinesis.streamName", stream_b).option(
        "kinesis.region", region
    ).mode("append").save()

    reads = {
        "aws-kinesis": spark.readStream.format("aws-kinesis")
        .option("kinesis.streamName", stream_a)
        .option("kinesis.region", region)
        .option("kinesis.startingposition", "TRIM_HORIZON")
        .load(),
        "kinesis": spark.readStream.format("kinesis")
        .option("streamName", stream_b)
        .option("region", region)
        .option("initialPosition", "trim_horizon")
        .load(),
    }
    for name, frame in reads.items():
        table = name.replace("-", "_")
        query = (
            frame.selectExpr("cast(data as string) d")
            .writeStream.format("memory")
            .queryName(table)
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination(300)
        for row in spark.sql(f"select d from {table}").collect():
            print("ROW", name, row.d)
    print("DONE", flush=True)
    if then_register:
        from kinesis_dstream.sql import AwsKinesisDataSource, KinesisDataSource

        spark.dataSource.register(KinesisDataSource)
        spark.dataSource.register(AwsKinesisDataSource)
        again = (
            spark.read.format("kinesis")
            .option("streamName", stream_b)
            .option("region", region)
            .option("startingPosition", "trim_horizon")
            .load()
        )
        print("REGISTERED", again.count(), flush=True)
except Exception as exc:
    print("FAILED", type(exc).__name__, str(exc).splitlines()[:3], flush=True)
    raise
finally:
    spark.stop()
