"""A job in the shape Glue Studio generates, chaining visual transforms (gs_*) and an
Evaluate Data Quality node, run unchanged under `kinesis-dstream glue run` on the
suite's local AWS: every record reads back transformed as each node documents, with
its data quality verdict, and the rule outcomes land beside them."""

import datetime
import json
from pathlib import Path

import pytest

from ..support.glue import create_kinesis_table, glue_run_command, json_rows, s3_objects
from ..support.records import put_records
from ..support.waiting import wait_until
from .test_glue_example import glue_job

SCRIPT = Path(__file__).resolve().parents[1] / "support" / "scripts" / "glue_studio_visual_job.py"

pytestmark = [pytest.mark.spark, pytest.mark.slow]


def test_a_glue_studio_job_of_visual_transforms_and_data_quality_runs_unchanged(
    local_aws, kinesis, stream, unique_name, tmp_path
):
    catalog, s3 = local_aws.client("glue"), local_aws.client("s3")
    bucket = unique_name.lower()
    s3.create_bucket(Bucket=bucket)
    database, table = "glue_studio_jobs", unique_name.replace("-", "_")
    create_kinesis_table(
        catalog,
        database,
        table,
        # as the Glue console and CDK stacks write it: AWS's endpoint for the region, which
        # means the default, so the job's AWS SDK settings (the local AWS here) apply
        {"streamName": stream, "endpointUrl": f"https://kinesis.{local_aws.region_name}.amazonaws.com"},
        {"classification": "json"},
        [
            ("id", "bigint"),
            ("first", "string"),
            ("last", "string"),
            ("amount", "double"),
            ("ts_ms", "bigint"),
            ("tags", "string"),
        ],
    )
    day_ms = 1673964111000  # 2023-01-17T14:01:51Z
    sent = [
        {
            "id": i,
            "first": f"f{i}",
            "last": f"l{i}",
            "amount": float(i * 5),  # 100 and above from i = 20: fails the rule
            "ts_ms": day_ms + i * 86_400_000,
            "tags": f"t{i},x,y",
        }
        for i in range(30)
    ]
    put_records(kinesis, stream, len(sent), data=lambda i: json.dumps(sent[i]))
    job_args = {
        "JOB_NAME": "studio_job",
        "TempDir": str(tmp_path / "temp"),
        "database": database,
        "source_table": table,
        "output_path": f"s3://{bucket}/",
    }
    command, env = glue_run_command(local_aws, SCRIPT, job_args)
    log = tmp_path / "job.log"
    rows: list = []

    def all_rows():
        rows[:] = [row for _, row in json_rows(s3_objects(s3, bucket, "rows/"))]
        return len(rows) >= len(sent)

    with glue_job(command, env, log) as proc:
        wait_until(
            all_rows,
            300,
            f"{len(sent)} rows under rows/",
            interval_s=0.5,
            failed=lambda: proc.poll() is not None and log.read_text()[-3000:],
        )
    by_id = {row["id"]: row for row in rows}
    assert sorted(by_id) == list(range(30)) and len(rows) == 30
    for record in sent:
        row = by_id[record["id"]]
        i = record["id"]
        day = datetime.datetime(2023, 1, 17) + datetime.timedelta(days=i)
        assert row["full_name"] == f"f{i} l{i}"
        assert row["tag_list"] == [f"t{i}", "x", "y"] and row["first_tag"] == f"t{i}"
        assert row["event_day"] == day.strftime("%Y-%m-%d")
        assert row["total"] == i * 10.0 and len(row["record_uuid"]) == 36
        failing = i * 5 >= 100
        assert row["DataQualityEvaluationResult"] == ("Failed" if failing else "Passed")
        assert row["DataQualityRulesFail"] == (['ColumnValues "amount" < 100'] if failing else [])
        assert 'IsComplete "id"' in row["DataQualityRulesPass"]
    rules = [row for _, row in json_rows(s3_objects(s3, bucket, "rules/"))]
    assert {r["Rule"] for r in rules} == {'IsComplete "id"', 'ColumnValues "amount" < 100'}
    assert {r["Outcome"] for r in rules if r["Rule"] == 'IsComplete "id"'} == {"Passed"}
    text = log.read_text()
    assert "have no effect here: results are written to this log only" in text
    assert "Evaluate Data Quality EvaluateDataQuality_node10: 2 rules" in text
