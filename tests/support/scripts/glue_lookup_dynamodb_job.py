"""A Glue streaming job in the shape of the Glue workshop's streaming enrichment labs and
AWS's DynamoDB examples (written here, not copied): each batch of a Kinesis stream is
joined with customer priorities kept in DynamoDB, read through the table a crawler made
of it (``create_dynamic_frame.from_catalog``), and read again whenever a flag object
appears in S3 (the flag is then removed), as jobs do to pick up a changed lookup without
a restart."""

import sys

import boto3
from awsglue import DynamicFrame
from awsglue.context import GlueContext
from awsglue.job import Job
from awsglue.transforms import Join, SelectFields
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext

args = getResolvedOptions(
    sys.argv,
    [
        "JOB_NAME",
        "database",
        "events_table",
        "priorities_table",
        "flag_bucket",
        "flag_key",
        "output_path",
    ],
)
sc = SparkContext.getOrCreate()
glueContext = GlueContext(sc)
logger = glueContext.get_logger()
job = Job(glueContext)
job.init(args["JOB_NAME"], args)
s3 = boto3.client("s3")


def read_priorities():
    return glueContext.create_dynamic_frame.from_catalog(
        database=args["database"],
        table_name=args["priorities_table"],
        transformation_ctx="priorities",
        additional_options={"dynamodb.splits": "2"},
    )


lookup = {"priorities": read_priorities()}


def flag_is_set():
    answer = s3.list_objects_v2(Bucket=args["flag_bucket"], Prefix=args["flag_key"])
    return any(o["Key"] == args["flag_key"] for o in answer.get("Contents", []))


events = glueContext.create_data_frame.from_catalog(
    database=args["database"],
    table_name=args["events_table"],
    additional_options={"startingPosition": "TRIM_HORIZON", "inferSchema": "false"},
)


def processBatch(data_frame, batchId):
    if flag_is_set():
        logger.info("the priorities changed: reading them again")
        lookup["priorities"] = read_priorities()
        s3.delete_object(Bucket=args["flag_bucket"], Key=args["flag_key"])
    if data_frame.count() > 0:
        batch = DynamicFrame.fromDF(data_frame, glueContext, "from_data_frame")
        joined = Join.apply(batch, lookup["priorities"], "customer_id", "customer")
        out = SelectFields.apply(
            frame=joined, paths=["event_id", "customer_id", "priority", "tier"]
        )
        glueContext.write_dynamic_frame.from_options(
            frame=out,
            connection_type="s3",
            connection_options={"path": args["output_path"]},
            format="json",
        )


glueContext.forEachBatch(
    frame=events,
    batch_function=processBatch,
    options={
        "windowSize": "3 seconds",
        "checkpointLocation": args["TempDir"] + "/" + args["JOB_NAME"] + "/checkpoint/",
    },
)
job.commit()
