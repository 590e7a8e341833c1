"""``kinesis-dstream kcl`` through a split, a merge of two generations and
``UpdateShardCount`` doubling then halving, polling and with enhanced fan-out, real kclpy
children, kinesalite behind the test EFO server (the other paths' cases:
tests/spark/test_reshard_matrix.py; the scenario and its check: benchmarks.reshard)."""

from __future__ import annotations

import base64
import sys
from typing import Callable

import pytest

from kinesis_dstream.multilang import MultiLangDaemon, load_properties

from ..support.reshard_cases import run_case
from .test_multilang_daemon import PROCESSOR, Running, child_env, events, write_properties

pytestmark = pytest.mark.kinesalite


class ChildDeliveries:
    """What the kclpy children were given: each record's data, shard and the child's time."""

    def __init__(self, out_dir) -> None:
        self.out_dir = out_dir

    def snapshot(self) -> list:
        """Each record given to a child is a unit of its own, in time order."""
        records = [e for e in events(self.out_dir) if e["event"] == "record"]
        return [
            (base64.b64decode(e["data"]).decode(), e["shard"], e["t"], unit)
            for unit, e in enumerate(records)
        ]


def daemon(server, local_aws, kclpy, stream, mode, tmp_path, monkeypatch) -> tuple:
    """(its deliveries, a start function) for a daemon from TRIM_HORIZON, checkpointing
    at every batch's end."""
    for key, value in server.env().items():
        if key != "AWS_ENDPOINT_URL":
            monkeypatch.setenv(key, value)
    props = {
        "executableName": f"{sys.executable} {PROCESSOR}",
        "streamName": stream,
        "applicationName": stream,
        "regionName": server.region_name,
        "AWSCredentialsProvider": "DefaultAWSCredentialsProviderChain",
        "initialPositionInStream": "TRIM_HORIZON",
        "kinesisEndpoint": server.endpoint_url,
        "dynamoDBEndpoint": local_aws.endpoint_url,
        "retrievalMode": mode,
        "idleTimeBetweenReadsInMillis": "200",
        "shutdownGraceMillis": "5000",
    }
    config = load_properties(str(write_properties(tmp_path / "app.properties", **props)))
    out = tmp_path / "out"
    out.mkdir()
    env = child_env(kclpy, out, "batch")

    def start() -> Callable[[], None]:
        run = Running(MultiLangDaemon(config, env=env))

        def stop() -> None:
            assert run.stop() == 0

        return stop

    return ChildDeliveries(out), start


@pytest.mark.parametrize("mode", ["FANOUT", "POLLING"])
def test_the_kcl_daemon_through_every_reshard(
    efo_kinesalite, local_aws, kclpy, unique_name, tmp_path, monkeypatch, mode
):
    got, start = daemon(efo_kinesalite, local_aws, kclpy, unique_name, mode, tmp_path, monkeypatch)
    run_case(f"kinesis-dstream kcl, {mode.lower()}", efo_kinesalite, unique_name, got, start)


@pytest.mark.slow
def test_the_kcl_daemon_stopped_mid_reshard_resumes_from_its_checkpoints(
    efo_kinesalite, local_aws, kclpy, unique_name, tmp_path, monkeypatch
):
    got, start = daemon(
        efo_kinesalite, local_aws, kclpy, unique_name, "POLLING", tmp_path, monkeypatch
    )
    run_case(
        "kinesis-dstream kcl, polling, stopped during the doubling",
        efo_kinesalite,
        unique_name,
        got,
        start,
        restart_around="double",
    )
