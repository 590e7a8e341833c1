"""A Structured Streaming query on ``local-cluster`` whose executors have another HOME.

    sql_cluster_app.py <stream> <kinesis-endpoint> <base-dir> <metadataPath or "default">

Reads the stream from TRIM_HORIZON with ``Trigger.AvailableNow`` into a parquet sink under
<base-dir>/out and exits 0 ("DONE"), or prints "FAILED" and the query's error and exits 1.
The cluster (master, executors, their HOME) comes from PYSPARK_SUBMIT_ARGS.
"""

import os
import sys

from pyspark.sql import SparkSession

from kinesis_dstream.sql import KinesisDataSource

stream, endpoint, base, store = sys.argv[1:5]
spark = SparkSession.builder.getOrCreate()
spark.sparkContext.setLogLevel("ERROR")
# PySpark copies spark.executorEnv.* into every Python function's environment, and the
# driver's own Python workers (where the source plans batches) run functions too: they
# would get the executors' HOME. On a real cluster the driver keeps its own, so the data
# source is registered without it; the executor JVMs still get theirs from the conf.
spark.sparkContext.environment.pop("HOME", None)
spark.dataSource.register(KinesisDataSource)
reader = (
    spark.readStream.format("kinesis")
    .option("streamName", stream)
    .option("endpointUrl", endpoint)
    .option("initialPosition", "trim_horizon")
)
if store != "default":
    reader = reader.option("metadataPath", store)
query = (
    reader.load()
    .selectExpr("cast(data as string) as data", "shardId", "sequenceNumber")
    .writeStream.format("parquet")
    .option("path", os.path.join(base, "out"))
    .option("checkpointLocation", os.path.join(base, "checkpoint"))
    .trigger(availableNow=True)
    .start()
)
print("STARTED", flush=True)
finished = query.awaitTermination(240)
if query.exception() is not None:
    print("FAILED", query.exception(), flush=True)
    sys.exit(1)
if not finished:
    query.stop()
    print("FAILED: the query did not finish within 240 s", flush=True)
    sys.exit(1)
print("DONE", flush=True)
spark.stop()
