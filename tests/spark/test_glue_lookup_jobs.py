"""Glue streaming jobs that enrich each batch from a lookup, run unchanged under
`kinesis-dstream glue run` on the suite's local AWS: orders joined with a country CSV on
S3, and events joined with DynamoDB priorities read through a crawler's catalog table and
read again when a flag object appears. Every record is checked in the output."""

import json
from pathlib import Path

import pytest

from ..support.glue import (
    create_crawler_dynamodb_table,
    create_dynamodb_table,
    create_kinesis_table,
    glue_run_command,
    json_rows,
    s3_objects,
)
from ..support.records import put_records
from ..support.waiting import wait_until
from .test_glue_example import glue_job

SCRIPTS = Path(__file__).resolve().parents[1] / "support" / "scripts"
COUNTRIES = {"FR": ("France", 68.4), "DE": ("Germany", 83.2), "JP": ("Japan", 124.0)}


def written(s3, bucket, prefix):
    return [row for _, row in json_rows(s3_objects(s3, bucket, prefix))]


def wait_for(s3, bucket, prefix, count, proc, log):
    rows: list = []

    def enough():
        rows[:] = written(s3, bucket, prefix)
        return len(rows) >= count

    wait_until(
        enough,
        300,
        f"{count} rows under s3://{bucket}/{prefix}",
        interval_s=0.5,
        failed=lambda: proc.poll() is not None and log.read_text()[-3000:],
        detail=lambda: f"(have {len(rows)})",
    )
    return rows


def test_orders_joined_with_an_s3_csv_country_lookup(
    local_aws, kinesis, stream, unique_name, tmp_path
):
    catalog, s3 = local_aws.client("glue"), local_aws.client("s3")
    bucket = unique_name.lower()
    s3.create_bucket(Bucket=bucket)
    lines = ["code,name,population_m"] + [f"{c},{n},{p}" for c, (n, p) in COUNTRIES.items()]
    s3.put_object(Bucket=bucket, Key="lookups/countries/part-0.csv", Body="\n".join(lines[:3]))
    s3.put_object(
        Bucket=bucket, Key="lookups/countries/more/part-1.csv", Body="\n".join([lines[0], lines[3]])
    )
    database, table = "glue_lookups", unique_name.replace("-", "_")
    create_kinesis_table(
        catalog,
        database,
        table,
        {"streamName": stream, "endpointUrl": local_aws.endpoint_url},
        {"classification": "json"},
        [("order_id", "bigint"), ("amount", "double"), ("country_code", "string")],
    )
    codes = ["FR", "DE", "JP", "XX"]
    sent = [{"order_id": i, "amount": i * 1.5, "country_code": codes[i % 4]} for i in range(120)]
    put_records(kinesis, stream, len(sent), data=lambda i: json.dumps(sent[i]))
    expected = sorted(
        (
            {
                "order_id": o["order_id"],
                "amount": o["amount"],
                "country_code": o["country_code"],
                "country": COUNTRIES[o["country_code"]][0],
                "population_m": COUNTRIES[o["country_code"]][1],
            }
            for o in sent
            if o["country_code"] in COUNTRIES  # XX has no country: the inner join drops it
        ),
        key=lambda r: r["order_id"],
    )
    job_args = {
        "JOB_NAME": "orders_enriched",
        "TempDir": str(tmp_path / "temp"),
        "database": database,
        "orders_table": table,
        "countries_path": f"s3://{bucket}/lookups/countries/",
        "output_path": f"s3://{bucket}/out/",
    }
    command, env = glue_run_command(local_aws, SCRIPTS / "glue_lookup_csv_job.py", job_args)
    log = tmp_path / "job.log"
    with glue_job(command, env, log) as proc:
        rows = wait_for(s3, bucket, "out/", len(expected), proc, log)
    assert sorted(rows, key=lambda r: r["order_id"]) == expected


def test_events_joined_with_dynamodb_priorities_read_again_when_a_flag_appears(
    local_aws, kinesis, stream, unique_name, tmp_path
):
    catalog, s3, ddb = (
        local_aws.client("glue"),
        local_aws.client("s3"),
        local_aws.client("dynamodb"),
    )
    bucket = unique_name.lower()
    s3.create_bucket(Bucket=bucket)
    priorities = f"{unique_name}-priorities"
    create_dynamodb_table(
        ddb,
        priorities,
        "customer",
        [
            {"customer": {"S": f"c{i}"}, "priority": {"N": str(i % 3)}, "tier": {"S": "std"}}
            for i in range(10)
        ],
    )
    database, events = "glue_lookups", unique_name.replace("-", "_")
    create_kinesis_table(
        catalog,
        database,
        events,
        {"streamName": stream, "endpointUrl": local_aws.endpoint_url},
        {"classification": "json"},
        [("event_id", "bigint"), ("customer_id", "string")],
    )
    create_crawler_dynamodb_table(
        catalog,
        database,
        f"{events}_priorities",
        priorities,
        local_aws.region_name,
        [("customer", "string"), ("priority", "bigint"), ("tier", "string")],
    )
    first = [{"event_id": i, "customer_id": f"c{i % 10}"} for i in range(40)]
    put_records(kinesis, stream, len(first), data=lambda i: json.dumps(first[i]))
    job_args = {
        "JOB_NAME": "events_prioritised",
        "TempDir": str(tmp_path / "temp"),
        "database": database,
        "events_table": events,
        "priorities_table": f"{events}_priorities",
        "flag_bucket": bucket,
        "flag_key": "flags/priorities-changed",
        "output_path": f"s3://{bucket}/out/",
    }
    command, env = glue_run_command(local_aws, SCRIPTS / "glue_lookup_dynamodb_job.py", job_args)
    log = tmp_path / "job.log"
    with glue_job(command, env, log) as proc:
        wait_for(s3, bucket, "out/", len(first), proc, log)
        for i in range(10):  # every customer moves up, and becomes gold
            ddb.put_item(
                TableName=priorities,
                Item={
                    "customer": {"S": f"c{i}"},
                    "priority": {"N": str(10 + i)},
                    "tier": {"S": "gold"},
                },
            )
        # the flag is looked at when a batch comes: the next events see the new priorities
        s3.put_object(Bucket=bucket, Key="flags/priorities-changed", Body=b"")
        second = [{"event_id": 100 + i, "customer_id": f"c{i % 10}"} for i in range(40)]
        put_records(kinesis, stream, len(second), data=lambda i: json.dumps(second[i]))
        rows = wait_for(s3, bucket, "out/", len(first) + len(second), proc, log)
    expected = [
        {
            "event_id": e["event_id"],
            "customer_id": e["customer_id"],
            "priority": int(e["customer_id"][1:]) % 3,
            "tier": "std",
        }
        for e in first
    ] + [
        {
            "event_id": e["event_id"],
            "customer_id": e["customer_id"],
            "priority": 10 + int(e["customer_id"][1:]),
            "tier": "gold",
        }
        for e in second
    ]
    assert sorted(rows, key=lambda r: r["event_id"]) == expected
    assert "the priorities changed: reading them again" in log.read_text()
    assert "Contents" not in s3.list_objects_v2(Bucket=bucket, Prefix="flags/")


pytestmark = [pytest.mark.spark, pytest.mark.slow]
