"""A batch read (``spark.read.format("kinesis")``) from a Spark Connect session.

    sql_connect_batch_app.py <sc://host:port> <stream> <endpoint> <region> <start> <end>

A Spark Connect client only (no JVM in this process): it connects to the server at the
``sc://`` URL over gRPC, registers the data source as docs/batch-reads.md tells Connect
users to, and reads the stream between the two timestamps with the endpoint and the
credentials as options (the AWS SDK's environment is not read: the test leaves it empty).
Prints ``ROW <shardId> <data>`` for each record read and ``DONE <count>``, then
``REFUSED <error>`` for a read the source refuses (``endingOffsets=earliest``); exits 1
with the error on any other failure.
"""

import sys

from pyspark.sql import SparkSession

from kinesis_dstream.local import LOCAL_ACCESS_KEY_ID, LOCAL_SECRET_ACCESS_KEY
from kinesis_dstream.sql import KinesisDataSource

remote, stream, endpoint, region, start, end = sys.argv[1:7]


def read(spark, **bounds):
    """The range's records: a DataFrame of shardId and data (as a string)."""
    return (
        spark.read.format("kinesis")
        .option("streamName", stream)
        .option("endpointUrl", endpoint)
        .option("region", region)
        .option("awsAccessKey", LOCAL_ACCESS_KEY_ID)
        .option("awsSecretKey", LOCAL_SECRET_ACCESS_KEY)
        .options(**bounds)
        .load()
        .selectExpr("shardId", "cast(data as string) d")
    )


spark = SparkSession.builder.remote(remote).getOrCreate()
# a Connect session, not a classic one that a stray SPARK_* setting could have given
assert type(spark).__module__ == "pyspark.sql.connect.session", type(spark)
try:
    spark.dataSource.register(KinesisDataSource)
    rows = read(spark, startingTimestamp=start, endingTimestamp=end).collect()
    for row in rows:
        print("ROW", row.shardId, row.d)
    print("DONE", len(rows), flush=True)
    try:  # a refused option reaches the client with the source's own line
        read(spark, startingTimestamp=start, endingOffsets="earliest").collect()
        print("NOT REFUSED", flush=True)
    except Exception as exc:
        print("REFUSED", " | ".join(str(exc).splitlines()), flush=True)
except Exception as exc:  # the test shows it: one line of why, then the traceback
    print("FAILED", type(exc).__name__, str(exc).splitlines()[:1], flush=True)
    raise
finally:
    spark.stop()
