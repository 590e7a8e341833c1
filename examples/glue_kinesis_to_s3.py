import sys
from awsglue.transforms import *
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext
from awsglue.context import GlueContext
from awsglue.job import Job

from pyspark.sql import DataFrame, Row
import datetime
from awsglue import DynamicFrame

# An AWS Glue streaming job in the shape Glue Studio generates for Kinesis -> S3: the
# catalog table glue_demo.words (a Kinesis stream of space-separated words, read as CSV),
# each window's records with their ingestion time, renamed, written to S3 as JSON in
# partitions by ingestion hour. It runs unchanged on Glue and, with kinesis_dstream, on
# any PySpark (docs/glue.md):
#   kinesis-dstream glue run examples/glue_kinesis_to_s3.py -- --JOB_NAME words_to_s3 \
#       --TempDir /tmp/glue-temp --WINDOW_SIZE "10 seconds"
# Glue Studio writes the window as the literal "100 seconds"; here it is a job argument.

args = getResolvedOptions(sys.argv, ["JOB_NAME", "WINDOW_SIZE"])
sc = SparkContext()
glueContext = GlueContext(sc)
spark = glueContext.spark_session
job = Job(glueContext)
job.init(args["JOB_NAME"], args)

# Script generated for node Amazon Kinesis
dataframe_AmazonKinesis_node1 = glueContext.create_data_frame.from_catalog(
    database="glue_demo",
    table_name="words",
    additional_options={"startingPosition": "earliest", "inferSchema": "false"},
    transformation_ctx="dataframe_AmazonKinesis_node1",
)


def processBatch(data_frame, batchId):
    if data_frame.count() > 0:
        AmazonKinesis_node1 = DynamicFrame.fromDF(
            glueContext.add_ingestion_time_columns(data_frame, "hour"),
            glueContext,
            "from_data_frame",
        )
        # Script generated for node Change Schema
        ChangeSchema_node2 = ApplyMapping.apply(
            frame=AmazonKinesis_node1,
            mappings=[
                ("word1", "string", "first", "string"),
                ("word2", "string", "second", "string"),
                ("word3", "string", "third", "string"),
                ("word4", "string", "fourth", "string"),
                ("word5", "string", "fifth", "string"),
                ("ingest_year", "string", "ingest_year", "string"),
                ("ingest_month", "string", "ingest_month", "string"),
                ("ingest_day", "string", "ingest_day", "string"),
                ("ingest_hour", "string", "ingest_hour", "string"),
            ],
            transformation_ctx="ChangeSchema_node2",
        )

        # Script generated for node Amazon S3
        AmazonS3_node3_path = "s3://glue-demo-output/words/"
        AmazonS3_node3 = glueContext.write_dynamic_frame.from_options(
            frame=ChangeSchema_node2,
            connection_type="s3",
            format="json",
            connection_options={
                "path": AmazonS3_node3_path,
                "partitionKeys": ["ingest_year", "ingest_month", "ingest_day", "ingest_hour"],
            },
            transformation_ctx="AmazonS3_node3",
        )


glueContext.forEachBatch(
    frame=dataframe_AmazonKinesis_node1,
    batch_function=processBatch,
    options={
        "windowSize": args["WINDOW_SIZE"],
        "checkpointLocation": args["TempDir"] + "/" + args["JOB_NAME"] + "/checkpoint/",
    },
)
job.commit()
