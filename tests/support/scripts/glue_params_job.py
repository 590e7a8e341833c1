"""A Glue job for `kinesis-dstream glue run` shaped by its job parameters: its helper
module comes with --extra-py-files and is imported at the top, before the SparkContext
(as Glue Studio scripts import theirs); a settings file comes with --extra-files; Spark
settings with --conf. It prints what the driver and a UDF on the executors see."""

import json
import os
import sys

import glue_params_helpers
from awsglue.context import GlueContext
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext
from pyspark.sql.functions import udf

args = getResolvedOptions(sys.argv, ["JOB_NAME"])
sc = SparkContext.getOrCreate()
glueContext = GlueContext(sc)
spark = glueContext.spark_session
print("ARGV", " ".join(sys.argv[1:]))
print("MASTER", sc.master)
print("SHUFFLE", spark.conf.get("spark.sql.shuffle.partitions"))
with open("settings.json") as handle:
    print("DRIVER", glue_params_helpers.tag("driver"), json.load(handle)["word"], os.getpid())


def on_executor(i):
    import glue_params_helpers

    with open("settings.json") as handle:
        word = json.load(handle)["word"]
    return f"{glue_params_helpers.tag(str(i))} {word} {os.getpid()}"


seen = udf(on_executor)
for row in spark.range(4).repartition(2).select(seen("id").alias("seen")).collect():
    print("EXECUTOR", row.seen)
