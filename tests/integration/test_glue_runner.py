"""`kinesis-dstream glue run` in a subprocess, without Spark: the job's arguments, the
local AWS of --local, and failures as one line."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
JOB = ROOT / "tests" / "support" / "scripts" / "glue_local_job.py"


def glue_run(*args, env=None):
    return subprocess.run(
        [sys.executable, "-m", "kinesis_dstream.cli", "glue", "run", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )


def test_local_runs_the_job_on_a_local_aws_of_its_own_with_its_arguments(tmp_path):
    done = glue_run(
        str(JOB), "--local", "--", "--JOB_NAME", "j1", "--STREAM", "s1", "--TempDir", str(tmp_path)
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out = dict(line.split(" ", 1) for line in done.stdout.splitlines() if " " in line)
    assert out["JOB"] == f"j1 TEMP {tmp_path}"
    assert out["AWSGLUE"].startswith(str(ROOT / "kinesis_dstream" / "glue" / "shim" / "awsglue"))
    assert out["ENDPOINT"].startswith("http://127.0.0.1:")
    assert out["STREAMS"] == "s1" and out["DATABASES"] == "local_job"  # a fresh local AWS
    assert "export AWS_ENDPOINT_URL=http://127.0.0.1:" in done.stdout


def test_a_missing_job_argument_and_a_module_not_provided_are_one_line_each(local_aws):
    missing = glue_run(str(JOB), "--", "--JOB_NAME", "j2", env=local_aws.env())
    assert missing.returncode == 1
    assert missing.stderr.strip().splitlines()[-1] == (
        "kinesis-dstream: error: glue_local_job.py failed: GlueArgumentError: the following "
        "arguments are required: --STREAM"
    )
    failed = glue_run(
        str(JOB), "--", "--JOB_NAME", "j3", "--STREAM", "s3", "--fail", env=local_aws.env()
    )
    assert failed.returncode == 1, failed.stdout + failed.stderr
    last = failed.stderr.strip().splitlines()[-1]
    assert last.startswith("kinesis-dstream: error: module awsglue.gluetypes is not provided")
    assert "STREAMS" in failed.stdout  # the job ran up to there


def test_local_after_the_script_without_double_dash_stops_before_the_script_runs():
    done = glue_run(str(JOB), "--local", "--JOB_NAME", "j4", "--STREAM", "s4")
    assert done.returncode == 1
    assert (
        done.stderr.strip()
        .splitlines()[-1]
        .startswith(
            "kinesis-dstream: error: glue run: --local after the script with no '--' would go to "
            "the script"
        )
    )
    assert "JOB" not in done.stdout  # the script never ran
