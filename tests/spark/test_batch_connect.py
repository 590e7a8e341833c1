"""Batch reads from Spark Connect: ``spark.read.format("kinesis")`` in a Connect session.

Spark Connect as it is deployed: a server (``SparkConnectServer``, the ``spark-connect``
jar PySpark's wheel ships, on ``local[2]``) and a client process without a JVM that talks
to it over gRPC (``tests/support/scripts/sql_connect_batch_app.py``). Both are children of
the test, so the session's own SparkContext in this process is not touched. The data
source travels as Connect sends it (pickled in the plan, planned and read in the server's
Python workers) with the endpoint and the credentials as options: neither child has AWS
settings in its environment.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Optional

import pytest

from kinesis_dstream.retrieval.streams import ensure_stream

from ..support.java_kcl import free_port
from ..support.waiting import wait_until
from .test_sql_batch import boundary, put

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "tests" / "support" / "scripts" / "sql_connect_batch_app.py"
SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
#: Bounds: the server's start (about 10 s idle), the client's read and stop (about 10 s).
START_TIMEOUT_S = 120
CLIENT_TIMEOUT_S = 180


def child_env(tmp_path: Path) -> dict:
    """This process's environment without anything the AWS SDK reads: credentials and the
    endpoint must come from the read's options."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    nowhere = str(tmp_path / "no-aws-config")
    env.update(
        AWS_CONFIG_FILE=nowhere,
        AWS_SHARED_CREDENTIALS_FILE=nowhere,
        AWS_EC2_METADATA_DISABLED="true",
        PYSPARK_PYTHON=sys.executable,  # the server's Python workers import this checkout
    )
    for name in ("SPARK_REMOTE", "SPARK_LOCAL_REMOTE", "SPARK_CONNECT_MODE_ENABLED"):
        env.pop(name, None)
    return env


def kill_group(proc: subprocess.Popen) -> None:
    """End ``proc`` and what it started (its own process group), and reap it. Only while
    it runs: a reaped leader's pid may since lead someone else's group."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    proc.wait(30)


def accepts(port: int) -> bool:
    with socket.socket() as probe:
        probe.settimeout(0.5)
        return probe.connect_ex(("127.0.0.1", port)) == 0


@contextmanager
def connect_server(tmp_path: Path, env: Optional[dict] = None) -> Iterator[str]:
    """A Spark Connect server on a free 127.0.0.1 port (its environment ``env``, by default
    :func:`child_env`'s); yields its ``sc://`` URL."""
    import pyspark

    spark_submit = Path(pyspark.__file__).parent / "bin" / "spark-submit"
    if not list((Path(pyspark.__file__).parent / "jars").glob("spark-connect_*.jar")):
        pytest.skip(f"pyspark {pyspark.__version__}'s wheel has no Spark Connect server jar")
    port = free_port()
    log_path = tmp_path / "connect-server.log"
    conf = {
        "spark.connect.grpc.binding.address": "127.0.0.1",
        "spark.connect.grpc.binding.port": str(port),
        "spark.ui.enabled": "false",
        # killed at the end: its scratch files go with the test's directory
        "spark.local.dir": str(tmp_path / "spark-local"),
    }
    command = [str(spark_submit), "--class", SERVER_CLASS, "--master", "local[2]"]
    for key, value in conf.items():
        command += ["--conf", f"{key}={value}"]
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [*command, "spark-internal"],
            cwd=str(tmp_path),
            env=child_env(tmp_path) if env is None else env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        wait_until(
            lambda: accepts(port),
            START_TIMEOUT_S,
            f"the Spark Connect server on port {port}",
            interval_s=0.25,
            failed=lambda: proc.poll() is not None and f"it exited ({proc.returncode})",
            detail=lambda: log_path.read_text(errors="replace")[-5000:],
        )
        yield f"sc://127.0.0.1:{port}"
    finally:
        kill_group(proc)


def run_client(tmp_path: Path, *args: str) -> tuple:
    """Run the Connect client app to its end or the bound; (return code, stdout, stderr)."""
    proc = subprocess.Popen(
        [sys.executable, str(APP), *args],
        cwd=str(tmp_path),
        env=child_env(tmp_path),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=CLIENT_TIMEOUT_S)
        return proc.returncode, out, err
    except subprocess.TimeoutExpired:
        kill_group(proc)
        out, err = proc.communicate(timeout=30)
        pytest.fail(f"the Connect client did not end in {CLIENT_TIMEOUT_S} s:\n{out}{err[-5000:]}")
    finally:
        kill_group(proc)


@pytest.mark.slow  # a Connect server of its own, 15-24 s: CI's long scenarios; by default
# test_sql_lookup's Connect client reads and writes through the source
def test_a_range_read_from_spark_connect_has_exactly_the_records_inside(
    local_aws, kinesis, unique_name, tmp_path
):
    ensure_stream(kinesis, unique_name, 2)
    before = put(kinesis, unique_name, "before", 20, spread=False)
    start = boundary()
    inside = put(kinesis, unique_name, "inside", 40, spread=False)
    end = boundary()
    after = put(kinesis, unique_name, "after", 20, spread=False)

    with connect_server(tmp_path) as remote:
        code, out, err = run_client(
            tmp_path,
            remote,
            unique_name,
            local_aws.endpoint_url,
            local_aws.region_name,
            str(start),
            str(end),
        )

    assert code == 0, out[-3000:] + err[-5000:]
    lines = out.splitlines()
    rows = [line.split(" ", 2)[1:] for line in lines if line.startswith("ROW ")]
    got = [data for _, data in rows]
    assert f"DONE {len(got)}" in lines
    assert sorted(got) == sorted(inside)  # every record once, none outside
    assert not set(got) & set(before + after)
    assert len({shard for shard, _ in rows}) == 2  # a task per shard, both read
    (refused,) = [line for line in lines if line.startswith(("REFUSED", "NOT REFUSED"))]
    assert "option 'endingOffsets': a batch read cannot end at earliest" in refused
