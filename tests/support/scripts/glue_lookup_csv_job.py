"""A Glue streaming job in the shape of AWS's streaming ETL examples and the Glue
workshop's enrichment lab (written here, not copied): a Kinesis catalog table of orders,
each batch joined with a country lookup read from S3 as CSV
(``create_dynamic_frame.from_options`` with ``recurse`` and ``withHeader``) by
``Join.apply``, then mapped and written to S3 as JSON."""

import sys

from awsglue import DynamicFrame
from awsglue.context import GlueContext
from awsglue.job import Job
from awsglue.transforms import ApplyMapping, Join
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext

args = getResolvedOptions(
    sys.argv, ["JOB_NAME", "database", "orders_table", "countries_path", "output_path"]
)
sc = SparkContext.getOrCreate()
glueContext = GlueContext(sc)
spark = glueContext.spark_session
job = Job(glueContext)
job.init(args["JOB_NAME"], args)

countries = glueContext.create_dynamic_frame.from_options(
    connection_type="s3",
    connection_options={"paths": [args["countries_path"]], "recurse": True},
    format="csv",
    format_options={"withHeader": True, "separator": ","},
    transformation_ctx="countries",
)

orders = glueContext.create_data_frame.from_catalog(
    database=args["database"],
    table_name=args["orders_table"],
    transformation_ctx="orders",
    additional_options={"startingPosition": "TRIM_HORIZON", "inferSchema": "false"},
)


def processBatch(data_frame, batchId):
    if data_frame.count() > 0:
        batch = DynamicFrame.fromDF(data_frame, glueContext, "from_data_frame")
        joined = Join.apply(frame1=batch, frame2=countries, keys1=["country_code"], keys2=["code"])
        enriched = ApplyMapping.apply(
            frame=joined,
            mappings=[
                ("order_id", "long", "order_id", "long"),
                ("amount", "double", "amount", "double"),
                ("country_code", "string", "country_code", "string"),
                ("name", "string", "country", "string"),
                ("population_m", "double", "population_m", "double"),
            ],
            transformation_ctx="enriched",
        )
        glueContext.write_dynamic_frame.from_options(
            frame=enriched,
            connection_type="s3",
            connection_options={"path": args["output_path"]},
            format="json",
        )


glueContext.forEachBatch(
    frame=orders,
    batch_function=processBatch,
    options={
        "windowSize": "5 seconds",
        "checkpointLocation": args["TempDir"] + "/" + args["JOB_NAME"] + "/checkpoint/",
    },
)
job.commit()
