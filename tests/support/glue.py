"""Helpers for the Glue layer's tests: catalog tables, S3 read-back, a forEachBatch loop
run beside the test with a stop the test controls."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading

from .waiting import wait_until


def ensure_database(glue, database):
    """Glue's database ``database``, made if missing."""
    try:
        glue.create_database(DatabaseInput={"Name": database})
    except glue.exceptions.AlreadyExistsException:
        pass


def create_kinesis_table(glue, database, table, storage_params, params=None, columns=()):
    """A Kinesis table through Glue's CreateTable (the database made if missing)."""
    ensure_database(glue, database)
    glue.create_table(
        DatabaseName=database,
        TableInput={
            "Name": table,
            "Parameters": params or {},
            "StorageDescriptor": {
                "Columns": [{"Name": n, "Type": t} for n, t in columns],
                "Parameters": {"typeOfData": "kinesis", **storage_params},
            },
        },
    )


def create_dynamodb_table(ddb, table, key, items=()):
    """An on-demand DynamoDB table keyed by the string ``key``, holding ``items``."""
    ddb.create_table(
        TableName=table,
        KeySchema=[{"AttributeName": key, "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": key, "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    wait_table_active(ddb, table)
    for item in items:
        ddb.put_item(TableName=table, Item=item)


def wait_table_active(ddb, table):
    """Until ``table`` is ACTIVE (dynalite creates a table in the background)."""

    def active():
        return ddb.describe_table(TableName=table)["Table"]["TableStatus"] == "ACTIVE"

    wait_until(active, 10, f"DynamoDB table {table} ACTIVE")


def create_crawler_dynamodb_table(glue, database, table, dynamodb_table, region, columns=()):
    """The catalog table Glue's crawler makes of a DynamoDB table: classification
    ``dynamodb``, its ``Location`` the table's ARN, its columns as the crawler types them."""
    ensure_database(glue, database)
    params = {"classification": "dynamodb", "typeOfData": "table"}
    glue.create_table(
        DatabaseName=database,
        TableInput={
            "Name": table,
            "Parameters": params,
            "StorageDescriptor": {
                "Columns": [{"Name": n, "Type": t} for n, t in columns],
                "Location": f"arn:aws:dynamodb:{region}:123456789012:table/{dynamodb_table}",
                "Parameters": params,
            },
        },
    )


def create_words_table(local_aws, table, stream, words=2):
    """``glue_tests.<table>``: ``stream``'s records as space-separated words (CSV with
    delimiter " "), columns ``word1`` ... ``word<words>``."""
    create_kinesis_table(
        local_aws.client("glue"),
        "glue_tests",
        table,
        {"streamName": stream, "endpointUrl": local_aws.endpoint_url},
        {"classification": "csv", "delimiter": " "},
        [(f"word{i}", "string") for i in range(1, words + 1)],
    )


def glue_run_command(local_aws, script, job_args):
    """``kinesis-dstream glue run SCRIPT -- --name value ...`` as a shell line, and the
    environment it runs in: the local AWS, this Python for Spark's workers, local[2]."""
    env = {
        **os.environ,
        **local_aws.env(),
        "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"],
        "PYSPARK_PYTHON": sys.executable,
        "PYSPARK_SUBMIT_ARGS": "--master local[2] --conf spark.ui.enabled=false pyspark-shell",
    }
    arguments = [part for name, value in job_args.items() for part in (f"--{name}", value)]
    command = subprocess.list2cmdline(
        ["kinesis-dstream", "glue", "run", str(script), "--", *arguments]
    )
    return command, env


def s3_objects(s3, bucket, prefix=""):
    """{key: body bytes} of every object under ``prefix``."""
    found = {}
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        for item in page.get("Contents", []):
            found[item["Key"]] = s3.get_object(Bucket=bucket, Key=item["Key"])["Body"].read()
    return found


def json_rows(objects):
    """Every JSON line of ``objects`` ({key: body}), as (key, row) pairs."""
    return [
        (key, json.loads(line))
        for key, body in objects.items()
        for line in body.decode().splitlines()
    ]


class LoopThread:
    """A BatchLoop run in a thread; ``stop()`` ends it gracefully and re-raises its error."""

    def __init__(self, loop_class, *args, **kwargs):
        self.stop_event = threading.Event()
        self.loop = loop_class(*args, stop=self.stop_event, **kwargs)
        self.error = None
        self.result = None
        self.thread = threading.Thread(target=self._run, name="glue-test-loop", daemon=True)

    def _run(self):
        try:
            self.result = self.loop.run()
        except BaseException as exc:  # handed to the test
            self.error = exc

    def failed(self):
        return None if self.thread.is_alive() else (self.error or "the loop ended")

    def wait_done(self, timeout_s):
        self.thread.join(timeout_s)
        assert not self.thread.is_alive(), f"the loop did not end within {timeout_s} s"


@contextlib.contextmanager
def running_loop(loop_class, *args, **kwargs):
    """Start a BatchLoop beside the test; stopped (and joined) however the test ends."""
    runner = LoopThread(loop_class, *args, **kwargs)
    runner.thread.start()
    try:
        yield runner
    finally:
        runner.stop_event.set()
        runner.wait_done(120)


def wait_for_rows(s3, bucket, prefix, count, runner, timeout_s=120):
    """The JSON rows under ``prefix`` once there are ``count`` (a positive event)."""
    rows: list = []

    def enough():
        rows[:] = json_rows(s3_objects(s3, bucket, prefix))
        return len(rows) >= count

    wait_until(
        enough,
        timeout_s,
        f"{count} rows under s3://{bucket}/{prefix}",
        failed=runner.failed,
        detail=lambda: f"(have {len(rows)})",
    )
    return rows
