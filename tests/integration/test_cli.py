"""`kinesis-dstream local-aws`: runs until Ctrl-C and prints what to export."""

import json
import os
import signal
import socket
import subprocess
import sys
import time

import boto3
import pytest

from kinesis_dstream.esn import ESN_SHARD_END, ESN_TRIM_HORIZON, ExtendedSequenceNumber
from kinesis_dstream.leases.coordinator import LeaseCoordinator
from kinesis_dstream.leases.dynamodb import LeaseTable
from kinesis_dstream.leases.lease import Lease
from kinesis_dstream.leases.timing import LeaseManagementConfig

SEQ = "49590338271490256608559692538361571095921575989136588898"


def test_local_aws_command_serves_until_interrupted():
    proc = subprocess.Popen(
        [sys.executable, "-m", "kinesis_dstream.cli", "local-aws"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        lines = []
        while not lines or not lines[-1].startswith("Press Ctrl-C"):
            line = proc.stdout.readline()
            assert line, proc.stderr.read()
            lines.append(line.strip())
        exports = dict(
            line.removeprefix("export ").split("=", 1)
            for line in lines
            if line.startswith("export ")
        )
        assert exports["AWS_ENDPOINT_URL"].startswith("http://127.0.0.1:")
        client = boto3.client(
            "kinesis",
            endpoint_url=exports["AWS_ENDPOINT_URL"],
            region_name=exports["AWS_REGION"],
            aws_access_key_id=exports["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=exports["AWS_SECRET_ACCESS_KEY"],
        )
        assert client.list_streams()["StreamNames"] == []
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            assert proc.wait(timeout=30) == 0
        finally:
            if proc.poll() is None:  # never leave the server behind, even on failure
                proc.kill()
                proc.wait(timeout=30)


def test_local_aws_stops_on_ctrl_c_even_when_started_with_sigint_ignored():
    # What a shell script's `kinesis-dstream local-aws &` gets: SIGINT ignored.
    proc = subprocess.Popen(
        [sys.executable, "-m", "kinesis_dstream.cli", "local-aws"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    try:
        line = ""
        while not line.startswith("Press Ctrl-C"):
            line = proc.stdout.readline()
            assert line, proc.stderr.read()
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)


def run_cli(local_aws, *args):
    return subprocess.run(
        [sys.executable, "-m", "kinesis_dstream.cli", *args],
        env={**os.environ, **local_aws.env()},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def app(local_aws, unique_name):
    table = LeaseTable(local_aws.client("dynamodb"), unique_name)
    table.create_if_missing()
    table.create_lease(Lease("shardId-000000000000", checkpoint=ESN_SHARD_END))
    table.create_lease(Lease("shardId-000000000001"))
    child = Lease("shardId-000000000002", parent_shard_ids=frozenset({"shardId-000000000000"}))
    table.create_lease(child)
    taken = table.take(child, "host:worker-1")
    table.checkpoint(taken, ExtendedSequenceNumber(SEQ, 3))
    return table


def test_leases_prints_the_table(local_aws, app):
    done = run_cli(local_aws, "leases", "--app", app.table_name)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == [
        "shard",
        "owner",
        "checkpoint",
        "sub-seq",
        "counter",
        "parents",
        "state",
    ]
    rows = {line.split()[0]: line.split() for line in lines[1:-1]}
    assert rows["shardId-000000000000"] == [
        "shardId-000000000000",
        "-",
        "SHARD_END",
        "0",
        "0",
        "-",
        "finished",
    ]
    assert rows["shardId-000000000001"][1:] == ["-", "TRIM_HORIZON", "0", "0", "-", "free"]
    assert rows["shardId-000000000002"][1:] == [
        "host:worker-1",
        SEQ,
        "3",
        "2",
        "shardId-000000000000",
        "owned",
    ]
    assert lines[-1] == "3 lease(s)"


def test_leases_of_an_unknown_app_is_one_clear_line(local_aws):
    done = run_cli(local_aws, "leases", "--app", "no-such-app")
    assert done.returncode == 1
    (line,) = done.stderr.splitlines()
    assert line.startswith("kinesis-dstream: error: no lease table 'no-such-app'")
    assert f"endpoint={local_aws.endpoint_url}" in line


def without_credentials(tmp_path):
    """The environment minus anything the default credential chain could use."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(
        AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "no-credentials"),
        AWS_CONFIG_FILE=str(tmp_path / "no-config"),
        AWS_EC2_METADATA_DISABLED="true",
    )
    return env


def run_leases(env, *args):
    return subprocess.run(
        [sys.executable, "-m", "kinesis_dstream.cli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_missing_credentials_are_one_line_and_exit_1(local_aws, tmp_path):
    args = ("--app", "my-app", "--region", "us-east-1", "--endpoint-url", local_aws.endpoint_url)
    done = run_leases(without_credentials(tmp_path), "leases", *args)
    assert done.returncode == 1
    assert done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith("kinesis-dstream: error: no AWS credentials")
    assert "AWS_ACCESS_KEY_ID" in line and "DescribeTable" in line and "'my-app'" in line
    assert f"endpoint={local_aws.endpoint_url}" in line

    debug = run_leases(without_credentials(tmp_path), "leases", *args, "--debug")
    assert debug.returncode == 1
    assert "Traceback (most recent call last)" in debug.stderr
    assert "NoCredentialsError" in debug.stderr
    assert debug.stderr.splitlines()[-1] == line


def test_an_unreachable_endpoint_is_one_line_naming_it_and_exit_1(local_aws):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}"
    started = time.monotonic()
    done = run_leases(
        {**os.environ, **local_aws.env()}, "leases", "--app", "my-app", "--endpoint-url", dead
    )
    assert time.monotonic() - started < 30
    assert done.returncode == 1
    (line,) = done.stderr.splitlines()
    assert line.startswith("kinesis-dstream: error: gave up after")
    assert dead in line and "DescribeTable" in line


def test_debug_is_accepted_before_the_subcommand(local_aws):
    done = run_cli(local_aws, "--debug", "leases", "--app", "no-such-app")
    assert done.returncode == 1
    assert "Traceback" in done.stderr and "no lease table 'no-such-app'" in done.stderr


def test_usage_errors_exit_2(local_aws):
    assert run_cli(local_aws, "leases").returncode == 2


def test_reset_is_refused_while_a_worker_renews_and_done_once_stopped(local_aws, app):
    worker = LeaseCoordinator(app, "live", LeaseManagementConfig.from_failover(1.0)).start()
    try:
        # 3 s of watching: "live" renews every 1/3 s; a load stall of its renewer must not
        # make it look stopped
        refused = run_cli(
            local_aws, "leases", "--app", app.table_name, "--reset-to", "LATEST", "--watch-s", "3"
        )
    finally:
        worker.stop(release=False)
    assert refused.returncode == 1
    assert "refusing to reset" in refused.stderr and "still moving" in refused.stderr
    assert app.get_lease("shardId-000000000002").checkpoint == ExtendedSequenceNumber(SEQ, 3)

    done = run_cli(
        local_aws, "leases", "--app", app.table_name, "--reset-to", "TRIM_HORIZON", "--watch-s", "1"
    )
    assert done.returncode == 0, done.stderr
    leases = app.list_leases()
    assert all(lease.checkpoint == ESN_TRIM_HORIZON for lease in leases)
    assert all(lease.lease_owner is None for lease in leases)


# --- kinesis-dstream submit, over a stand-in spark-submit that reports what it got ------

#: A Spark whose spark-submit prints its arguments and what ``pyspark.streaming.kinesis``
#: a driver started with its environment imports, then exits 3.
FAKE_SPARK_SUBMIT = """#!/bin/sh
exec "$PYSPARK_PYTHON" -c '
import json, os, sys
import pyspark.streaming.kinesis as m
print(json.dumps({"argv": sys.argv[1:], "module": m.__file__, "path": os.environ["PYTHONPATH"]}))
sys.exit(3)' "$@"
"""


@pytest.fixture
def fake_spark(tmp_path):
    home = tmp_path / "spark"
    (home / "bin").mkdir(parents=True)
    submit = home / "bin" / "spark-submit"
    submit.write_text(FAKE_SPARK_SUBMIT)
    submit.chmod(0o755)
    return home


def run_submit(fake_spark, *argv):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYSPARK_PYTHON")}
    return subprocess.run(
        [sys.executable, "-m", "kinesis_dstream.cli", *argv],
        env={**env, "SPARK_HOME": str(fake_spark)},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_submit_passes_every_option_and_argument_to_spark_submit_with_the_stand_in(fake_spark):
    from kinesis_dstream.asl.standin import SHIM_DIR, STANDIN_FILE

    options = [
        "--master",
        "local[2]",
        "--conf",
        "spark.ui.enabled=false",
        "--py-files",
        "deps.zip",
        "--packages",
        "org.apache.spark:spark-avro_2.13:4.0.0",
        "--driver-memory",
        "1g",
        "--verbose",
        "--name=my job",
    ]
    script_args = ["my-app", "--master", "yarn", "--ignore-asl-jar", "", "a b"]
    done = run_submit(fake_spark, "submit", *options, "job.py", *script_args)
    assert done.returncode == 3, done.stderr  # spark-submit's own status
    got = json.loads(done.stdout)
    assert got["argv"] == [*options, "job.py", *script_args]
    assert got["module"] == STANDIN_FILE  # the driver imports the library's module
    assert got["path"].split(os.pathsep)[0] == SHIM_DIR
    first = done.stderr.splitlines()[0]
    assert first.startswith("kinesis-dstream submit: pyspark.streaming.kinesis is kinesis_dstream ")
    assert first.endswith(f"spark-submit: {fake_spark / 'bin' / 'spark-submit'}")


def test_submit_refuses_a_job_naming_the_kinesis_asl_jar_unless_told(fake_spark):
    from kinesis_dstream.asl.standin import SHIM_DIR

    package = "org.apache.spark:spark-streaming-kinesis-asl_2.11:2.1.2"
    refused = run_submit(fake_spark, "submit", "--packages", package, "main.py", "a")
    assert refused.returncode == 1 and refused.stdout == ""
    assert refused.stderr.splitlines() == [
        f"kinesis-dstream: error: submit: this job names the JVM kinesis-asl (--packages "
        f"{package}), which PySpark's own pyspark.streaming.kinesis uses under spark-submit: "
        "drop it to run on kinesis_dstream, or add --ignore-asl-jar to run on kinesis_dstream "
        "with the jar left unused (or run spark-submit itself to use the jar)"
    ]
    told = run_submit(
        fake_spark, "--debug", "submit", "--ignore-asl-jar", "--packages", package, "main.py", "a"
    )
    assert told.returncode == 3, told.stderr
    assert json.loads(told.stdout)["argv"] == ["--packages", package, "main.py", "a"]
    first, second = told.stderr.splitlines()[:2]
    assert first.endswith(f"--packages {package} stays on the classpath, unused (--ignore-asl-jar)")
    assert second.startswith(f"kinesis-dstream submit: set PYTHONPATH={SHIM_DIR}")
    assert package not in second  # never the command: a --conf may hold a secret


def test_submit_help_is_the_runner_s_and_a_script_s_help_is_the_script_s(fake_spark):
    shown = run_submit(fake_spark, "submit", "--help")
    assert shown.returncode == 0
    assert shown.stdout.startswith(
        "usage: kinesis-dstream submit [--ignore-asl-jar] [spark-submit options] SCRIPT [ARGS ...]"
    )
    passed = run_submit(fake_spark, "submit", "job.py", "--help")
    assert passed.returncode == 3 and json.loads(passed.stdout)["argv"] == ["job.py", "--help"]
