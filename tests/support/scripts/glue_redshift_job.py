"""A Glue Studio-shaped streaming job that delivers each window to Redshift (a target
this layer does not provide): it reads the Kinesis stream first, so without a check at
start it would fail only at its first batch with records."""

import sys

from awsglue import DynamicFrame
from awsglue.context import GlueContext
from awsglue.job import Job
from awsglue.transforms import ApplyMapping
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext

args = getResolvedOptions(sys.argv, ["JOB_NAME", "STREAM_ARN"])
print("STARTED", flush=True)
sc = SparkContext()
glueContext = GlueContext(sc)
job = Job(glueContext)
job.init(args["JOB_NAME"], args)

events = glueContext.create_data_frame.from_options(
    connection_type="kinesis",
    connection_options={
        "typeOfData": "kinesis",
        "streamARN": args["STREAM_ARN"],
        "classification": "json",
        "startingPosition": "earliest",
        "inferSchema": "true",
    },
    transformation_ctx="events",
)


def processBatch(data_frame, batchId):
    if data_frame.count() > 0:
        node = DynamicFrame.fromDF(data_frame, glueContext, "from_data_frame")
        mapped = ApplyMapping.apply(frame=node, mappings=[("id", "long", "id", "long")])
        glueContext.write_dynamic_frame.from_options(
            frame=mapped,
            connection_type="redshift",
            connection_options={
                "url": "jdbc:redshift://example:5439/dev",
                "dbtable": "public.events",
                "redshiftTmpDir": args["TempDir"],
            },
            transformation_ctx="target",
        )


glueContext.forEachBatch(
    frame=events,
    batch_function=processBatch,
    options={
        "windowSize": "10 seconds",
        "checkpointLocation": args["TempDir"] + "/" + args["JOB_NAME"] + "/checkpoint/",
    },
)
job.commit()
