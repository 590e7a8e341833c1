"""The source on ``local-cluster[2,1,1024]``: two executor JVMs whose HOME is not the
driver's, as on a multi-node cluster where no directory is shared.

Each query runs in its own driver process (``tests/support/scripts/sql_cluster_app.py``): a
local-cluster SparkContext cannot share the session's local[2] one. Without a store
option the query must fail at its first batch with one line naming the options to set;
with ``metadataPath=s3://...`` (moto's S3) every record arrives exactly once.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from kinesis_dstream.retrieval.streams import ensure_stream

from ..support.records import put_records

# Over 35 s each: left out of the README's command (under 20 minutes), run by .ci/run after it.
pytestmark = [pytest.mark.spark, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "tests" / "support" / "scripts" / "sql_cluster_app.py"
RECORDS = 60


def run_query(tmp_path, local_aws, stream, store):
    """Run the app on local-cluster; (return code, its output)."""
    driver_home, executor_home = tmp_path / "driver-home", tmp_path / "executor-home"
    driver_home.mkdir()
    executor_home.mkdir()
    env = {
        **os.environ,
        **local_aws.env(),
        "AWS_ENDPOINT_URL_S3": local_aws.endpoint_url,
        "HOME": str(driver_home),
        # the executors' Python workers import this worktree's package, not an installed one
        "PYTHONPATH": str(ROOT),
        "PYSPARK_PYTHON": sys.executable,
        "PYSPARK_SUBMIT_ARGS": (
            "--master local-cluster[2,1,1024] --conf spark.ui.enabled=false "
            f"--conf spark.executorEnv.HOME={executor_home} "
            f"--conf spark.executorEnv.PYTHONPATH={ROOT} "
            "--conf spark.sql.shuffle.partitions=2 pyspark-shell"
        ),
    }
    env.pop("AWS_ENDPOINT_URL")  # the Kinesis endpoint is an option; S3's from AWS_ENDPOINT_URL_S3
    done = subprocess.run(
        [sys.executable, str(APP), stream, local_aws.endpoint_url, str(tmp_path), store],
        env=env,
        capture_output=True,
        timeout=420,
        cwd=str(tmp_path),
    )
    return done.returncode, (done.stdout + done.stderr).decode(errors="replace")


@pytest.fixture
def filled_stream(local_aws, kinesis):
    stream = f"cluster-{uuid.uuid4().hex[:8]}"
    ensure_stream(kinesis, stream, 2)
    put_records(kinesis, stream, RECORDS)
    return stream


def test_without_a_store_option_executors_with_another_home_fail_naming_it(
    tmp_path, local_aws, filled_stream
):
    code, output = run_query(tmp_path, local_aws, filled_stream, "default")
    assert code == 1, output[-5000:]
    lines = [line for line in output.splitlines() if "EndStoreError: this executor" in line]
    assert lines, output[-5000:]
    line = lines[0]
    assert str(tmp_path / "executor-home" / ".kinesis_dstream" / "sql-ends") in line
    assert "'metadataPath'" in line and "metadataCommitterType=DYNAMODB" in line
    assert not list(tmp_path.glob("out/*.parquet"))  # no batch committed


def test_with_an_s3_metadata_path_every_record_arrives_exactly_once(
    tmp_path, local_aws, filled_stream
):
    s3 = local_aws.client("s3")
    bucket = f"ends-{uuid.uuid4().hex[:12]}"
    s3.create_bucket(Bucket=bucket)
    code, output = run_query(tmp_path, local_aws, filled_stream, f"s3a://{bucket}/q")
    assert code == 0 and "DONE" in output, output[-5000:]
    data = pq.read_table(str(tmp_path / "out")).column("data").to_pylist()
    assert Counter(data) == Counter(f"r{i}" for i in range(RECORDS))
    ends = s3.list_objects_v2(Bucket=bucket, Prefix="q/")["Contents"]
    assert any(o["Key"].startswith("q/queries/") for o in ends)
    assert any(o["Key"].endswith(".json") for o in ends)
