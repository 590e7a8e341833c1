"""A Glue streaming job in the shape Glue Studio generates for a Kinesis source, visual
transforms (gs_* modules) and an Evaluate Data Quality node whose outputs are written to
S3: the imports, the batch function, the node variables and their calls as the
generated code has them (written here from AWS's documentation of that code)."""

# ruff: noqa: F401, F403, F405 (Glue Studio imports its modules for their side effect)

import sys

import gs_array_to_cols
import gs_concat
import gs_derived
import gs_format_timestamp
import gs_null_rows
import gs_split
import gs_to_timestamp
import gs_uuid
from awsglue import DynamicFrame
from awsglue.context import GlueContext
from awsglue.job import Job
from awsglue.transforms import *
from awsglue.utils import getResolvedOptions
from awsgluedq.transforms import EvaluateDataQuality
from pyspark.context import SparkContext

args = getResolvedOptions(sys.argv, ["JOB_NAME", "database", "source_table", "output_path"])
sc = SparkContext.getOrCreate()
glueContext = GlueContext(sc)
spark = glueContext.spark_session
job = Job(glueContext)
job.init(args["JOB_NAME"], args)

# Script generated for node Amazon Kinesis
dataframe_AmazonKinesis_node1 = glueContext.create_data_frame.from_catalog(
    database=args["database"],
    table_name=args["source_table"],
    additional_options={"startingPosition": "earliest", "inferSchema": "false"},
    transformation_ctx="dataframe_AmazonKinesis_node1",
)


def processBatch(data_frame, batchId):
    if data_frame.count() > 0:
        AmazonKinesis_node1 = DynamicFrame.fromDF(data_frame, glueContext, "from_data_frame")
        # Script generated for node Remove Null Rows
        RemoveNullRows_node2 = AmazonKinesis_node1.gs_null_rows(extended=True)
        # Script generated for node Concatenate Columns
        ConcatenateColumns_node3 = RemoveNullRows_node2.gs_concat(
            colName="full_name", colList=["first", "last"], spacer=" "
        )
        # Script generated for node Split String
        SplitString_node4 = ConcatenateColumns_node3.gs_split(
            colName="tags", pattern=",", newColName="tag_list"
        )
        # Script generated for node Array To Columns
        ArrayToColumns_node5 = SplitString_node4.gs_array_to_cols(
            colName="tag_list", colList="first_tag"
        )
        # Script generated for node To Timestamp
        ToTimestamp_node6 = ArrayToColumns_node5.gs_to_timestamp(
            colName="ts_ms", colType="milliseconds", newColName="event_time"
        )
        # Script generated for node Format Timestamp
        FormatTimestamp_node7 = ToTimestamp_node6.gs_format_timestamp(
            colName="event_time", dateFormat="%Y-%m-%d", newColName="event_day"
        )
        # Script generated for node Derived Column
        DerivedColumn_node8 = FormatTimestamp_node7.gs_derived(colName="total", expr="amount * 2")
        # Script generated for node UUID
        UUID_node9 = DerivedColumn_node8.gs_uuid(colName="record_uuid")

        # Script generated for node Evaluate Data Quality
        EvaluateDataQuality_node10_ruleset = """
            # Example rules: Completeness "colA" between 0.4 and 0.8, ColumnCount > 10
            Rules = [
                IsComplete "id",
                ColumnValues "amount" < 100
            ]
        """

        EvaluateDataQuality_node10 = EvaluateDataQuality().process_rows(
            frame=UUID_node9,
            ruleset=EvaluateDataQuality_node10_ruleset,
            publishing_options={
                "dataQualityEvaluationContext": "EvaluateDataQuality_node10",
                "enableDataQualityCloudWatchMetrics": True,
                "enableDataQualityResultsPublishing": True,
            },
            additional_options={"performanceTuning.caching": "CACHE_NOTHING"},
        )

        # Script generated for node ruleOutcomes
        ruleOutcomes_node11 = SelectFromCollection.apply(
            dfc=EvaluateDataQuality_node10,
            key="ruleOutcomes",
            transformation_ctx="ruleOutcomes_node11",
        )

        # Script generated for node rowLevelOutcomes
        rowLevelOutcomes_node12 = SelectFromCollection.apply(
            dfc=EvaluateDataQuality_node10,
            key="rowLevelOutcomes",
            transformation_ctx="rowLevelOutcomes_node12",
        )

        # Script generated for node Amazon S3
        glueContext.write_dynamic_frame.from_options(
            frame=rowLevelOutcomes_node12,
            connection_type="s3",
            format="json",
            connection_options={"path": args["output_path"] + "rows/", "partitionKeys": []},
            transformation_ctx="AmazonS3_node13",
        )

        # Script generated for node Amazon S3
        glueContext.write_dynamic_frame.from_options(
            frame=ruleOutcomes_node11,
            connection_type="s3",
            format="json",
            connection_options={"path": args["output_path"] + "rules/", "partitionKeys": []},
            transformation_ctx="AmazonS3_node14",
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
