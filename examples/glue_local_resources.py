"""The AWS resources examples/glue_kinesis_to_s3.py uses, and what it wrote.

    python examples/glue_local_resources.py create   # stream, catalog table, bucket
    python examples/glue_local_resources.py show     # the records the job wrote to S3

Both use the AWS SDK's usual configuration: with the local AWS of docs/glue.md
(``kinesis-dstream local-aws``), set AWS_ENDPOINT_URL and its test credentials first.
``create`` makes the Kinesis stream ``glue-demo-words`` (2 shards), the Glue Data
Catalog table ``glue_demo.words`` (a Kinesis table: classification csv, delimiter " ",
columns word1..word5, as Glue's CreateTable API takes it) and the bucket
``glue-demo-output``. ``show`` lists the partitions under
``s3://glue-demo-output/words/`` and prints the records' word totals in the word
producer's format, to compare with the totals it printed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter

from botocore.exceptions import ClientError

from kinesis_dstream.aws import create_client, resolve_region
from kinesis_dstream.demo.word_producer import print_totals
from kinesis_dstream.retrieval.streams import ensure_stream

STREAM = "glue-demo-words"
DATABASE = "glue_demo"
TABLE = "words"
BUCKET = "glue-demo-output"
PREFIX = "words/"
WORD_COLUMNS = ("first", "second", "third", "fourth", "fifth")


def create() -> None:
    """The stream, table and bucket; those that exist already are left as they are."""
    region = resolve_region()
    endpoint = os.environ.get("AWS_ENDPOINT_URL") or f"https://kinesis.{region}.amazonaws.com"
    ensure_stream(create_client("kinesis"), STREAM, 2)
    glue = create_client("glue")
    table = {
        "Name": TABLE,
        "Parameters": {"classification": "csv", "delimiter": " "},
        "StorageDescriptor": {
            "Columns": [{"Name": f"word{i}", "Type": "string"} for i in range(1, 6)],
            "Parameters": {"typeOfData": "kinesis", "streamName": STREAM, "endpointUrl": endpoint},
        },
    }
    s3 = create_client("s3")
    for make, exists in (
        (lambda: glue.create_database(DatabaseInput={"Name": DATABASE}), "AlreadyExistsException"),
        (
            lambda: glue.create_table(DatabaseName=DATABASE, TableInput=table),
            "AlreadyExistsException",
        ),
        (lambda: s3.create_bucket(Bucket=BUCKET), "BucketAlreadyOwnedByYou"),
    ):
        try:
            make()
        except ClientError as exc:
            if exc.response["Error"]["Code"] != exists:
                raise
    print(f"stream {STREAM}, table {DATABASE}.{TABLE}, bucket {BUCKET}: ready")


def show() -> None:
    s3 = create_client("s3")
    totals: Counter = Counter()
    records = 0
    partitions = set()
    pages = s3.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=PREFIX)
    for page in pages:
        for item in page.get("Contents", []):
            partitions.add(item["Key"][len(PREFIX) :].rsplit("/", 1)[0])
            body = s3.get_object(Bucket=BUCKET, Key=item["Key"])["Body"].read()
            for line in body.decode("utf-8").splitlines():
                row = json.loads(line)
                records += 1
                totals.update(row[c] for c in WORD_COLUMNS if c in row)
    for partition in sorted(partitions):
        print(f"s3://{BUCKET}/{PREFIX}{partition}/")
    print(f"{records} records")
    print_totals(totals, "Totals for the words written to S3")


def main(argv: list) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=("create", "show"))
    args = parser.parse_args(argv)
    create() if args.command == "create" else show()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
