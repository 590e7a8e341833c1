"""`kinesis-dstream glue run` in a subprocess, without Spark: the job's arguments, the
local AWS of --local, failures as one line, and stopping a job whose stop hangs."""

import contextlib
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from kinesis_dstream.glue.job.script_process import STOP_BOUND_ENV

from ..support.records import put_records
from ..support.waiting import wait_until

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
    """The user's own SDK settings (a service's endpoint, a profile, a session token)
    stayed in the script's environment under --local and could reach another AWS."""
    (tmp_path / "config").write_text(
        "[profile users]\nregion = eu-west-1\nendpoint_url = http://127.0.0.1:9\n"
    )
    users = {
        "AWS_CONFIG_FILE": str(tmp_path / "config"),
        "AWS_PROFILE": "users",
        "AWS_ENDPOINT_URL_KINESIS": "http://127.0.0.1:9",
        "AWS_ENDPOINT_URL_GLUE": "http://127.0.0.1:9",
        "AWS_SESSION_TOKEN": "the-user-s-token",
        "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS": "true",
    }
    done = glue_run(
        str(JOB),
        "--local",
        "--",
        "--JOB_NAME",
        "j1",
        "--STREAM",
        "s1",
        "--TempDir",
        str(tmp_path),
        env=users,
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
    assert last.startswith("kinesis-dstream: error: module awsglue.functions is not provided")
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


REDSHIFT_JOB = ROOT / "tests" / "support" / "scripts" / "glue_redshift_job.py"


def test_a_write_the_layer_does_not_provide_is_refused_before_the_job_reads_a_record(
    local_aws, kinesis, stream, tmp_path
):
    """Issue 54: a job delivering to a target not provided read its stream and failed at
    its first batch with records; the script is read first now, and refused at once."""
    put_records(kinesis, stream, 5, data='{{"id": {i}}}')  # what the job would read first
    arn = kinesis.describe_stream_summary(StreamName=stream)["StreamDescriptionSummary"][
        "StreamARN"
    ]
    args = ["--JOB_NAME", "to_redshift", "--STREAM_ARN", arn, "--TempDir", str(tmp_path)]
    done = glue_run(str(REDSHIFT_JOB), "--", *args, env=local_aws.env())
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        "kinesis-dstream: error: glue_redshift_job.py line 38: write_dynamic_frame.from_options"
        "(connection_type='redshift') is not provided by kinesis_dstream's AWS Glue layer, "
        "which runs Glue streaming scripts on any PySpark; this layer writes connection_type "
        "'kinesis', 's3', 'dynamodb' (what is provided: docs/glue.md); refused before the job "
        "starts, so no record is read"
    )
    assert "STARTED" not in done.stdout  # nothing of the script ran: no Spark, no query
    assert not (tmp_path / "to_redshift").exists()  # no checkpoint was made


STUCK_JOB = ROOT / "tests" / "support" / "scripts" / "glue_stuck_job.py"


def alive(pid):
    """Whether ``pid`` is a living process (a zombie awaiting its reaper is not)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except FileNotFoundError:
        return False


@contextlib.contextmanager
def stuck_job(*args, bound_s=None):
    """`glue run` of the stuck job in a session of its own (as a terminal runs it); its
    output read line by line; every process it started killed at the end, whatever
    happened (by the pids it printed)."""
    env = {**os.environ, **({} if bound_s is None else {STOP_BOUND_ENV: str(bound_s)})}
    runner = subprocess.Popen(
        [sys.executable, "-m", "kinesis_dstream.cli", "glue", "run", str(STUCK_JOB), "--", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
        start_new_session=True,
    )
    lines: queue.Queue = queue.Queue()
    reader = threading.Thread(target=lambda: [lines.put(x) for x in runner.stdout], daemon=True)
    reader.start()
    job = {"runner": runner, "lines": lines, "pids": []}

    def until(text):
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                line = lines.get(timeout=1)
            except queue.Empty:
                continue
            if line.startswith("PIDS"):
                job["pids"] = [int(p) for p in line.split()[1:]]
            if line.startswith(text):
                return line
        raise AssertionError(f"no line {text!r} from the job within 60 s")

    job["until"] = until
    try:
        yield job
    finally:
        for pid in [runner.pid, *job["pids"]]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        runner.wait(timeout=30)
        reader.join(timeout=30)


def test_a_second_ctrl_c_ends_a_job_whose_stop_hangs_and_nothing_it_started_outlives_it():
    """Each Ctrl-C used to be passed on as one more graceful stop request: a stuck stop
    could not be forced, and the job's processes outlived its runner."""
    with stuck_job() as job:
        job["until"]("READY")
        job["runner"].send_signal(signal.SIGINT)
        job["until"]("STOPPING")
        job["runner"].send_signal(signal.SIGINT)
        assert job["runner"].wait(timeout=30) == 128 + signal.SIGTERM
        assert [pid for pid in job["pids"] if alive(pid)] == []


def test_a_job_that_does_not_stop_is_killed_after_the_stop_bound():
    with stuck_job("--ignore", bound_s=1) as job:
        job["until"]("READY")
        job["runner"].send_signal(signal.SIGINT)
        assert job["runner"].wait(timeout=30) == 128 + signal.SIGKILL
        assert [pid for pid in job["pids"] if alive(pid)] == []


def test_when_the_runner_dies_the_job_ends_within_the_stop_bound():
    with stuck_job(bound_s=1) as job:
        job["until"]("READY")
        job["runner"].kill()
        job["runner"].wait(timeout=30)
        wait_until(
            lambda: not any(alive(pid) for pid in job["pids"]),
            30,
            "the job and its helper gone after the runner's end",
        )
