"""A Glue streaming job in the shape public scripts and AWS's documented examples have
(Glue Studio's imports and batch function; AWS's enableUpdateCatalog example): a Kinesis
catalog table to S3 as Avro with format_options compression gzip (as a public Glue 4.0
script writes it) and to a partitioned S3 catalog table with enableUpdateCatalog."""

import sys

from awsglue import DynamicFrame
from awsglue.context import GlueContext
from awsglue.job import Job
from awsglue.transforms import ApplyMapping
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext

args = getResolvedOptions(
    sys.argv, ["JOB_NAME", "database", "source_table", "target_table", "output_path"]
)
sc = SparkContext.getOrCreate()
glueContext = GlueContext(sc)
spark = glueContext.spark_session
job = Job(glueContext)
job.init(args["JOB_NAME"], args)

data_frame = glueContext.create_data_frame.from_catalog(
    database=args["database"],
    table_name=args["source_table"],
    transformation_ctx="datasource0",
    additional_options={"startingPosition": "TRIM_HORIZON", "inferSchema": "false"},
)


def processBatch(data_frame, batchId):
    if data_frame.count() > 0:
        dyf = DynamicFrame.fromDF(data_frame, glueContext, "from_data_frame")
        mapped = ApplyMapping.apply(
            frame=dyf,
            mappings=[
                ("id", "long", "id", "long"),
                ("region", "string", "region", "string"),
                ("amount", "double", "amount", "double"),
            ],
            transformation_ctx="mapped",
        )
        glueContext.write_dynamic_frame.from_options(
            frame=mapped,
            connection_type="s3",
            connection_options={"path": args["output_path"] + "avro/"},
            format="avro",
            format_options={"compression": "gzip"},
        )
        additionalOptions = {"enableUpdateCatalog": True}
        additionalOptions["partitionKeys"] = ["region"]
        glueContext.write_dynamic_frame_from_catalog(
            frame=mapped,
            database=args["database"],
            table_name=args["target_table"],
            transformation_ctx="write_sink",
            additional_options=additionalOptions,
        )


glueContext.forEachBatch(
    frame=data_frame,
    batch_function=processBatch,
    options={
        "windowSize": "5 seconds",
        "checkpointLocation": args["TempDir"] + "/" + args["JOB_NAME"] + "/checkpoint/",
    },
)
job.commit()
