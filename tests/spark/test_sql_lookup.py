"""``format("kinesis")`` and ``format("aws-kinesis")`` with no register line and no import of
this package, in a fresh process and from a Spark Connect client.

Spark's own lookup of Python data sources runs in a Python worker the JVM starts; it
imports every top-level ``pyspark_*`` module it finds on that worker's path. An installed
wheel puts ``pyspark_kinesis`` and ``pyspark_aws_kinesis`` in site-packages; this checkout's
editable install does not (its import hook is not listed by ``pkgutil.iter_modules``), so
the children get the checkout on ``PYTHONPATH``, where the wheel would put the modules.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kinesis_dstream.retrieval.streams import ensure_stream, wait_active

from .test_batch_connect import child_env, connect_server, kill_group

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "tests" / "support" / "scripts" / "sql_no_register_app.py"
COUNT = 25
APP_TIMEOUT_S = 300


def lookup_env(tmp_path: Path, local_aws) -> dict:
    env = child_env(tmp_path)
    env.update(local_aws.env())  # credentials, region and AWS_ENDPOINT_URL, as the SDK reads them
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def run_app(tmp_path: Path, env: dict, *args: str) -> list:
    proc = subprocess.Popen(
        [sys.executable, str(APP), *args],
        cwd=str(tmp_path),
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=APP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        out, err = proc.communicate(timeout=30)
        pytest.fail(f"the app did not end in {APP_TIMEOUT_S} s:\n{out}{err[-5000:]}")
    finally:
        kill_group(proc)
    assert proc.returncode == 0, out[-3000:] + err[-6000:]
    lines = out.splitlines()
    assert "DONE" in lines, out[-3000:] + err[-6000:]
    return lines


def streams(kinesis, unique_name) -> tuple:
    names = (f"{unique_name}-a", f"{unique_name}-b")
    for name in names:
        ensure_stream(kinesis, name, 2)
        wait_active(kinesis, name)
    return names


def assert_every_record_through_both_names(lines: list) -> None:
    rows = [line.split(" ", 2)[1:] for line in lines if line.startswith("ROW ")]
    by_name = {name: sorted(d for n, d in rows if n == name) for name in ("kinesis", "aws-kinesis")}
    # A was written through "kinesis" and read through "aws-kinesis"; B the other way round
    assert by_name["aws-kinesis"] == sorted(f"a-{i}" for i in range(COUNT))
    assert by_name["kinesis"] == sorted(f"b-{i}" for i in range(COUNT))


@pytest.mark.slow  # a Spark application of its own, 30-55 s: CI's long scenarios run it;
# the Connect test below covers a client with no import in the default run
def test_a_script_with_no_import_reads_and_writes_through_both_names(
    local_aws, kinesis, unique_name, tmp_path
):
    a, b = streams(kinesis, unique_name)
    env = lookup_env(tmp_path, local_aws)
    lines = run_app(
        tmp_path, env, "local[2]", a, b, local_aws.region_name, str(COUNT), "--then-register"
    )
    assert_every_record_through_both_names(lines)
    # the documented register line still works over the names Spark found
    assert f"REGISTERED {COUNT}" in lines


def test_a_spark_connect_client_gets_both_names_from_a_server_with_the_package(
    local_aws, kinesis, unique_name, tmp_path
):
    a, b = streams(kinesis, unique_name)
    server_env = lookup_env(tmp_path, local_aws)
    client_env = child_env(tmp_path)  # no AWS settings, no checkout on its path
    with connect_server(tmp_path, env=server_env) as remote:
        lines = run_app(tmp_path, client_env, remote, a, b, local_aws.region_name, str(COUNT))
    assert_every_record_through_both_names(lines)
