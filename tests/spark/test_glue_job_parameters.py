"""Glue's job parameters under `kinesis-dstream glue run`, with real Spark: a helper
module from `--extra-py-files s3://…/helpers.zip` (moto's S3) imported on the driver
before the SparkContext and inside a UDF on the executors, a file from `--extra-files`
in the working directory of both, and `--conf` reaching the script's Spark session;
on local[*] and on a local-cluster (executor JVMs of their own)."""

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
JOB = ROOT / "tests" / "support" / "scripts" / "glue_params_job.py"
HELPERS = """def tag(text):
    return "helped:" + text
"""


@pytest.fixture
def job_files(local_aws, unique_name, tmp_path):
    """helpers.zip and settings.json on moto's S3; their s3:// URLs."""
    bucket = unique_name.lower()[:50]
    s3 = local_aws.client("s3")
    s3.create_bucket(Bucket=bucket)
    archive = tmp_path / "helpers.zip"
    with zipfile.ZipFile(archive, "w") as out:
        out.writestr("glue_params_helpers.py", HELPERS)
    s3.put_object(Bucket=bucket, Key="libs/helpers.zip", Body=archive.read_bytes())
    s3.put_object(Bucket=bucket, Key="conf/settings.json", Body=b'{"word": "configured"}')
    return f"s3://{bucket}/libs/helpers.zip", f"s3://{bucket}/conf/settings.json"


def run_job(local_aws, tmp_path, job_files, master):
    workdir = tmp_path / "work"
    workdir.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "PYSPARK"))}
    env.update(local_aws.env())
    if master is not None:  # else the runner's default, local[*]
        env["PYSPARK_SUBMIT_ARGS"] = f"--master {master} pyspark-shell"
    helpers, settings = job_files
    args = ["--JOB_NAME", "params", "--extra-py-files", helpers, "--extra-files", settings]
    # Glue's odd form: several settings in one --conf value
    args += ["--conf", "spark.sql.shuffle.partitions=3 --conf spark.ui.enabled=false"]
    args += ["--enable-metrics", "--job-language", "python"]
    # pip's PySpark has no S3 filesystem: the event log goes to a local folder, said once
    args += ["--enable-spark-ui", "true", "--spark-event-logs-path", "s3://logs-bucket/events/"]
    env["TMPDIR"] = str(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "kinesis_dstream.cli", "glue", "run", str(JOB), "--", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=workdir,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]
    assert os.listdir(workdir) == []  # the copy of settings.json was removed at the end
    lines = [line.split(" ", 1) for line in done.stdout.splitlines() if " " in line]
    return done, lines


def check(done, lines, master):
    out = {}
    for key, value in lines:
        out.setdefault(key, []).append(value)
    assert out["MASTER"] == [master]
    assert out["SHUFFLE"] == ["3"]  # --conf reached the script's session
    assert "--extra-py-files s3://" in out["ARGV"][0]  # every argument is the script's too
    helped, word, driver_pid = out["DRIVER"][0].split()
    assert (helped, word) == ("helped:driver", "configured")
    executors = sorted(value.split() for value in out["EXECUTOR"])
    assert [e[:2] for e in executors] == [[f"helped:{i}", "configured"] for i in range(4)]
    assert driver_pid not in {e[2] for e in executors}  # in Spark's Python workers
    # the service-only parameters are named once, with the reason
    notes = [x for x in done.stderr.splitlines() if "no effect under glue run" in x]
    assert len(notes) == 1 and "--enable-metrics (" in notes[0] and "--job-language (" in notes[0]
    warned = [x for x in done.stderr.splitlines() if "--spark-event-logs-path s3://" in x]
    assert len(warned) == 1 and "no filesystem for s3://" in warned[0]


def test_extra_py_files_from_s3_and_conf_reach_the_driver_and_executors(
    local_aws, job_files, tmp_path
):
    done, lines = run_job(local_aws, tmp_path, job_files, None)
    check(done, lines, "local[*]")
    assert os.listdir(tmp_path / "kinesis_dstream-spark-events")  # Spark's event log


@pytest.mark.slow
def test_extra_py_files_from_s3_reach_executors_of_a_local_cluster(local_aws, job_files, tmp_path):
    master = "local-cluster[2,1,1024]"
    done, lines = run_job(local_aws, tmp_path, job_files, master)
    check(done, lines, master)
