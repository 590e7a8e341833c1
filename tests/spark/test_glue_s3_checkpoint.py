"""A public-shaped Glue job under `kinesis-dstream glue run` with its output and its
checkpoint on s3:// (pip-installed PySpark: no S3 filesystem, so the checkpoint is
mirrored), killed with SIGKILL between a batch's commit and its upload, then resumed on
a fresh HOME and temporary directory from S3 alone: every record in the output."""

import os
import re
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from kinesis_dstream.glue.streaming.checkpoint_mirror import HOLD_ENV

from ..support.glue import create_words_table, json_rows, s3_objects
from ..support.records import put_records
from ..support.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
JOB = ROOT / "tests" / "support" / "scripts" / "glue_s3_checkpoint_job.py"
HOLD = re.compile(r"holding batch (\d+) between its commit and its upload \(pid (\d+);")


def start_job(local_aws, tmp_path, name, args, extra_env=None):
    """`glue run` on a fresh HOME and TMPDIR of its own (nothing local survives a run)."""
    home, temp = tmp_path / f"{name}-home", tmp_path / f"{name}-tmp"
    home.mkdir()
    temp.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_") and k != HOLD_ENV}
    env.update(local_aws.env(), HOME=str(home), TMPDIR=str(temp), **(extra_env or {}))
    log = tmp_path / f"{name}.log"
    with open(log, "w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "kinesis_dstream.cli", "glue", "run", str(JOB), "--", *args],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    return proc, log


def end(proc):
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)


@pytest.mark.slow
def test_a_job_killed_between_a_commit_and_its_upload_resumes_from_s3_alone(
    local_aws, kinesis, stream, unique_name, tmp_path
):
    s3 = local_aws.client("s3")
    bucket = unique_name.lower()
    s3.create_bucket(Bucket=bucket)
    table = unique_name.replace("-", "_")
    create_words_table(local_aws, table, stream)
    args = ["--JOB_NAME", "cp", "--database", "glue_tests", "--table", table]
    args += ["--output_path", f"s3://{bucket}/out/"]

    def keys(prefix):
        return set(s3_objects(s3, bucket, prefix))

    def words():
        return Counter(row["word1"] for _, row in json_rows(s3_objects(s3, bucket, "out/data/")))

    put_records(kinesis, stream, 60, data="w{i} x")
    proc, log = start_job(local_aws, tmp_path, "first", args, {HOLD_ENV: "1"})
    try:
        wait_until(
            lambda: "out/cp/commits/0" in keys("out/cp/"),
            240,
            "batch 0 uploaded",
            failed=lambda: proc.poll() is not None and log.read_text()[-3000:],
        )
        put_records(kinesis, stream, 40, data="w{i} x", start=60)
        held: list = []

        def holding():
            held[:] = HOLD.findall(log.read_text())
            return bool(held)

        wait_until(
            holding,
            240,
            "the mirror holding a committed batch",
            failed=lambda: proc.poll() is not None and log.read_text()[-3000:],
        )
        batch, pid = int(held[0][0]), int(held[0][1])
        os.killpg(pid, signal.SIGKILL)  # the job's process, its JVM and workers: a crash
        proc.wait(timeout=60)
    finally:
        end(proc)
    assert batch >= 1
    assert f"out/cp/commits/{batch}" not in keys("out/cp/")  # killed before its upload
    before = words()
    assert set(before) >= {f"w{i}" for i in range(60)}  # batch 0 is in, and committed

    put_records(kinesis, stream, 30, data="w{i} x", start=100)
    expected = {f"w{i}" for i in range(130)}
    proc, log = start_job(local_aws, tmp_path, "second", args)
    try:
        found: Counter = Counter()

        def everything():
            found.clear()
            found.update(words())
            return set(found) >= expected

        wait_until(
            everything,
            240,
            "every record in the output",
            failed=lambda: proc.poll() is not None and log.read_text()[-3000:],
            detail=lambda: f"(missing {len(expected - set(found))})",
        )
        os.killpg(proc.pid, signal.SIGINT)  # a clean stop, as Ctrl-C
        assert proc.wait(timeout=180) == 0, log.read_text()[-3000:]
    finally:
        end(proc)
    assert set(found) == expected  # nothing missing, nothing else
    duplicates = {w: n - 1 for w, n in found.items() if n > 1}
    print(f"re-run batch {batch}: {sum(duplicates.values())} duplicate records")
    # only the batch that committed but was not uploaded ran again
    assert set(duplicates) <= {f"w{i}" for i in range(60, 100)}
    assert all(n == 1 for n in duplicates.values())
