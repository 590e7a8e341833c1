"""A job in the shape Glue Studio generates for its transform nodes (Filter, Custom
transform with Select From Collection, Drop Null Fields' helper, Renamed keys and Join)
runs unchanged under `kinesis-dstream glue run` on the suite's local AWS; its output is
the nodes' documented result on a batch checked by hand."""

import json
from pathlib import Path

import pytest

from ..support.glue import create_kinesis_table, glue_run_command, json_rows, s3_objects
from ..support.records import put_records
from ..support.waiting import wait_until
from .test_glue_example import glue_job

SCRIPT = Path(__file__).resolve().parents[1] / "support" / "scripts" / "glue_studio_nodes_job.py"
REGIONS = ["eu-west", "us-east", "eu-north"]


def record(i: int) -> dict:
    return {
        "id": i,
        "region": REGIONS[i % 3],
        "amount": i / 2,
        "note": "" if i % 2 else "null",  # Glue Studio's null strings: dropped
        "gone": None,  # no value in any record: NullType, dropped
        "customer": {"name": f"c{i}", "tier": "gold" if i % 4 == 0 else "silver"},
    }


def test_glue_studio_s_transform_nodes_run_unchanged_and_give_the_documented_rows(
    local_aws, kinesis, stream, unique_name, tmp_path
):
    catalog, s3 = local_aws.client("glue"), local_aws.client("s3")
    bucket = unique_name.lower()
    s3.create_bucket(Bucket=bucket)
    database, source = "glue_studio", unique_name.replace("-", "_")
    create_kinesis_table(
        catalog,
        database,
        source,
        {"streamName": stream, "endpointUrl": local_aws.endpoint_url},
        {"classification": "json"},
    )
    sent = [record(i) for i in range(30)]
    put_records(kinesis, stream, len(sent), data=lambda i: json.dumps(sent[i]))
    # by hand: Filter keeps eu-* with amount > 5 (ids 11 to 29, not us-east), the custom
    # transform adds cents, Drop Null Fields drops note and gone, Join adds the renamed
    # id and the tier of the same record
    expected = sorted(
        (
            {
                "id": r["id"],
                "region": r["region"],
                "amount": r["amount"],
                "customer": r["customer"],
                "amount_cents": int(r["amount"] * 100),
                "right_id": r["id"],
                "tier": r["customer"]["tier"],
            }
            for r in sent
            if r["region"].startswith("eu") and r["amount"] > 5
        ),
        key=lambda r: r["id"],
    )
    assert [r["id"] for r in expected] == [11, 12, 14, 15, 17, 18, 20, 21, 23, 24, 26, 27, 29]
    job_args = {
        "JOB_NAME": "studio_nodes",
        "TempDir": str(tmp_path / "temp"),
        "database": database,
        "source_table": source,
        "output_path": f"s3://{bucket}/out/",
    }
    command, env = glue_run_command(local_aws, SCRIPT, job_args)

    def written():
        return [row for _, row in json_rows(s3_objects(s3, bucket, "out/"))]

    log = tmp_path / "job.log"
    with glue_job(command, env, log) as proc:
        wait_until(
            lambda: len(written()) >= len(expected),
            300,
            f"{len(expected)} joined rows",
            interval_s=0.5,
            failed=lambda: proc.poll() is not None and log.read_text()[-3000:],
        )
    assert sorted(written(), key=lambda r: r["id"]) == expected


pytestmark = [pytest.mark.spark, pytest.mark.slow]
