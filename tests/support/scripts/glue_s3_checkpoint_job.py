"""A Glue streaming job in a public script's shape: its S3 output and its checkpoint both
built from one argument (--output_path s3://..., checkpoint <output_path>cp/), a Glue
Studio-shaped batch function writing each window to S3 as JSON."""

import sys

from awsglue import DynamicFrame
from awsglue.context import GlueContext
from awsglue.job import Job
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext

args = getResolvedOptions(sys.argv, ["JOB_NAME", "database", "table", "output_path"])
sc = SparkContext()
glueContext = GlueContext(sc)
job = Job(glueContext)
job.init(args["JOB_NAME"], args)

data_frame = glueContext.create_data_frame.from_catalog(
    database=args["database"],
    table_name=args["table"],
    additional_options={"startingPosition": "TRIM_HORIZON", "inferSchema": "false"},
    transformation_ctx="data_frame",
)


def processBatch(data_frame, batchId):
    if data_frame.count() > 0:
        frame = DynamicFrame.fromDF(data_frame, glueContext, "from_data_frame")
        glueContext.write_dynamic_frame.from_options(
            frame=frame,
            connection_type="s3",
            format="json",
            connection_options={"path": args["output_path"] + "data/"},
        )


glueContext.forEachBatch(
    frame=data_frame,
    batch_function=processBatch,
    options={"windowSize": "2 seconds", "checkpointLocation": args["output_path"] + "cp/"},
)
job.commit()
