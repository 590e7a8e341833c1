"""A Glue streaming job in the shape Glue Studio generates for its transform nodes
(written from AWS's documentation of the generated code): a Kinesis catalog source with
inferSchema, then Filter (a lambda over row["..."]), a Custom transform taking and
returning a DynamicFrameCollection, Select From Collection, Drop Null Fields (its
helper over frame.schema() and awsglue.gluetypes), Renamed keys for Join (ApplyMapping)
and Join, to S3 as JSON."""
# ruff: noqa: F403, F405, RUF015, SIM114 (the shape Glue Studio generates)

import re
import sys

from awsglue import DynamicFrame
from awsglue.context import GlueContext
from awsglue.dynamicframe import DynamicFrameCollection
from awsglue.gluetypes import *
from awsglue.job import Job
from awsglue.transforms import *
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext
from pyspark.sql import functions as SqlFuncs


def AddCents(glueContext, dfc) -> DynamicFrameCollection:
    df = dfc.select(list(dfc.keys())[0]).toDF()
    df = df.withColumn("amount_cents", (SqlFuncs.col("amount") * 100).cast("long"))
    return DynamicFrameCollection(
        {"CustomTransform0": DynamicFrame.fromDF(df, glueContext, "with_cents")}, glueContext
    )


def _null_fields(ctx, schema, path, output, nullStringSet, nullIntegerSet, frame):
    if isinstance(schema, StructType):
        for field in schema:
            prefix = path + "." if path != "" else path
            output = _null_fields(
                ctx,
                field.dataType,
                prefix + field.name,
                output,
                nullStringSet,
                nullIntegerSet,
                frame,
            )
    elif isinstance(schema, ArrayType):
        if isinstance(schema.elementType, StructType):
            output = _null_fields(
                ctx, schema.elementType, path, output, nullStringSet, nullIntegerSet, frame
            )
    elif isinstance(schema, NullType):
        output.append(path)
    else:
        seen = set()
        for row in frame.toDF().select(path).distinct().collect():
            value = row[path.split(".")[-1]]
            seen.add(value.strip() if isinstance(value, str) else value)
        if isinstance(schema, StringType) and seen.issubset(nullStringSet):
            output.append(path)
        elif isinstance(schema, (IntegerType, LongType, DoubleType)) and seen.issubset(
            nullIntegerSet
        ):
            output.append(path)
    return output


def drop_nulls(
    glueContext, frame, nullStringSet, nullIntegerSet, transformation_ctx
) -> DynamicFrame:
    nullColumns = _null_fields(
        frame.glue_ctx, frame.schema(), "", [], nullStringSet, nullIntegerSet, frame
    )
    return DropFields.apply(frame=frame, paths=nullColumns, transformation_ctx=transformation_ctx)


args = getResolvedOptions(sys.argv, ["JOB_NAME", "database", "source_table", "output_path"])
sc = SparkContext()
glueContext = GlueContext(sc)
spark = glueContext.spark_session
job = Job(glueContext)
job.init(args["JOB_NAME"], args)

# Script generated for node Amazon Kinesis
dataframe_AmazonKinesis_node1 = glueContext.create_data_frame.from_catalog(
    database=args["database"],
    table_name=args["source_table"],
    additional_options={"startingPosition": "earliest", "inferSchema": "true"},
    transformation_ctx="dataframe_AmazonKinesis_node1",
)


def processBatch(data_frame, batchId):
    if data_frame.count() > 0:
        AmazonKinesis_node1 = DynamicFrame.fromDF(data_frame, glueContext, "from_data_frame")
        # Script generated for node Filter
        Filter_node2 = Filter.apply(
            frame=AmazonKinesis_node1,
            f=lambda row: bool(re.match("^eu", row["region"])) and row["amount"] > 5,
            transformation_ctx="Filter_node2",
        )
        # Script generated for node Custom Transform
        CustomTransform_node3 = AddCents(
            glueContext, DynamicFrameCollection({"Filter_node2": Filter_node2}, glueContext)
        )
        # Script generated for node Select From Collection
        SelectFromCollection_node4 = SelectFromCollection.apply(
            dfc=CustomTransform_node3,
            key=list(CustomTransform_node3.keys())[0],
            transformation_ctx="SelectFromCollection_node4",
        )
        # Script generated for node Drop Null Fields
        DropNullFields_node5 = drop_nulls(
            glueContext,
            frame=SelectFromCollection_node4,
            nullStringSet={"", "null"},
            nullIntegerSet={-1},
            transformation_ctx="DropNullFields_node5",
        )
        # Script generated for node Renamed keys for Join
        RenamedkeysforJoin_node6 = ApplyMapping.apply(
            frame=AmazonKinesis_node1,
            mappings=[
                ("id", "long", "right_id", "long"),
                ("customer.tier", "string", "tier", "string"),
            ],
            transformation_ctx="RenamedkeysforJoin_node6",
        )
        # Script generated for node Join
        Join_node7 = Join.apply(
            frame1=DropNullFields_node5,
            frame2=RenamedkeysforJoin_node6,
            keys1=["id"],
            keys2=["right_id"],
            transformation_ctx="Join_node7",
        )
        # Script generated for node Amazon S3
        glueContext.write_dynamic_frame.from_options(
            frame=Join_node7,
            connection_type="s3",
            format="json",
            connection_options={"path": args["output_path"], "partitionKeys": []},
            transformation_ctx="AmazonS3_node8",
        )


glueContext.forEachBatch(
    frame=dataframe_AmazonKinesis_node1,
    batch_function=processBatch,
    options={
        "windowSize": "5 seconds",
        "checkpointLocation": args["TempDir"] + "/" + args["JOB_NAME"] + "/checkpoint/",
    },
)
job.commit()
