"""A Glue job for `kinesis-dstream glue run --local`: it prints its arguments, where its
awsglue comes from, and what the AWS SDK's default endpoint serves (no Spark)."""

import sys

import awsglue
import boto3
from awsglue.utils import getResolvedOptions

args = getResolvedOptions(sys.argv, ["JOB_NAME", "STREAM"])
kinesis = boto3.client("kinesis")
kinesis.create_stream(StreamName=args["STREAM"], ShardCount=1)
glue = boto3.client("glue")
glue.create_database(DatabaseInput={"Name": "local_job"})
print("JOB", args["JOB_NAME"], "TEMP", args["TempDir"])
print("AWSGLUE", awsglue.__file__)
print("ENDPOINT", kinesis.meta.endpoint_url)
print("STREAMS", ",".join(kinesis.list_streams()["StreamNames"]))
print("DATABASES", ",".join(d["Name"] for d in glue.get_databases()["DatabaseList"]))
if "--fail" in sys.argv:
    from awsglue.functions import *  # noqa: F403 (not provided: one line, exit 1)
