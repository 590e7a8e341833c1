"""``kinesis-dstream status``: an application's shards measured from outside, on moto.

A real ``kinesis-dstream kcl`` application processes part of a stream and stops: each
shard then shows its checkpoint and a positive lag; after it caught up, 0.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import threading
import time

import pytest

from kinesis_dstream.cli import main
from kinesis_dstream.multilang import load_properties
from kinesis_dstream.retrieval.streams import ensure_stream
from kinesis_dstream.status.render import format_status, status_command

from ..support.waiting import wait_until
from .test_multilang_daemon import (
    PROCESSOR,
    base_props,
    child_env,
    leases,
    put_all,
    records_seen,
    running,
    write_properties,
)


def status_json(local_aws, app: str, stream: str, capsys) -> dict:
    endpoint, region = local_aws.endpoint_url, local_aws.region_name
    code = main(
        [
            *("status", "--app", app, "--stream", stream, "--json"),
            *("--endpoint-url", endpoint, "--region", region),
        ]
    )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads(captured.out)


def last_per_shard(sent: dict) -> dict:
    last: dict = {}
    for shard, seq, _ in sent.values():
        if int(seq) > int(last.get(shard, "0")):
            last[shard] = seq
    return last


def run_until_checkpointed(config, env, local_aws, app: str, last: dict, out) -> None:
    with running(config, env) as run:
        wait_until(
            lambda: all(
                leases(local_aws, app).get(shard)
                and leases(local_aws, app)[shard].checkpoint.sequence_number == seq
                for shard, seq in last.items()
            ),
            60,
            "checkpoints at the last records",
        )
        assert run.stop() == 0


def test_status_shows_checkpoints_and_lag_then_zero_after_catching_up(
    aws_env, kclpy, unique_name, tmp_path, capsys
):
    local_aws = aws_env
    kinesis = local_aws.client("kinesis")
    ensure_stream(kinesis, unique_name, 2)
    out = tmp_path / "out"
    out.mkdir()
    props = base_props(local_aws, unique_name, unique_name, f"{sys.executable} {PROCESSOR}")
    config = load_properties(str(write_properties(tmp_path / "app.properties", **props)))
    env = child_env(kclpy, out)
    first = put_all(kinesis, unique_name, 20, "a")
    run_until_checkpointed(config, env, local_aws, unique_name, last_per_shard(first), out)

    # Written after the application stopped: the first of them 1.5 s before the last.
    second = put_all(kinesis, unique_name, 20, "b")
    time.sleep(1.5)  # spacing the writes, not waiting for an outcome
    third = put_all(kinesis, unique_name, 20, "c")
    report = status_json(local_aws, unique_name, unique_name, capsys)
    checkpoints = last_per_shard(first)
    assert report["totals"]["shards"] == 2 and report["totals"]["workers"] == 0
    for shard in report["shards"]:
        assert shard["owner"] is None  # released at the stop
        assert shard["checkpoint"] == checkpoints[shard["shard_id"]]
        assert shard["millis_behind_latest"] >= 1000, shard  # the 1.5 s between writes
        assert shard["next_record_age_ms"] >= 1000, shard
    assert report["totals"]["max_millis_behind_latest"] >= 1000

    everything = {**first, **second, **third}
    run_until_checkpointed(config, env, local_aws, unique_name, last_per_shard(everything), out)
    assert {r["pk"] for r in records_seen(out)} >= set(everything)
    report = status_json(local_aws, unique_name, unique_name, capsys)
    for shard in report["shards"]:
        assert shard["millis_behind_latest"] == 0 and shard["next_record_age_ms"] is None
    assert report["totals"]["max_millis_behind_latest"] == 0
    text = format_status(_status_once(local_aws, unique_name))
    assert "2 shard(s)" in text and "most behind: 0ms" in text


def _status_once(local_aws, app):
    from kinesis_dstream.status import application_status

    table_leases = sorted(leases(local_aws, app).values(), key=lambda lease: lease.lease_key)
    return application_status(app, app, table_leases, local_aws.client("kinesis"))


class Reports(io.StringIO):
    """An output that sets ``stop`` once it got ``count`` reports."""

    def __init__(self, stop: threading.Event, count: int) -> None:
        super().__init__()
        self.stop, self.count, self.reports = stop, count, 0

    def write(self, text: str) -> int:
        if text.strip():
            self.reports += 1
            if self.reports >= self.count:
                self.stop.set()
        return super().write(text)


def test_watch_reports_again_until_stopped(aws_env, unique_name):
    local_aws = aws_env
    from kinesis_dstream.leases import LeaseTable
    from kinesis_dstream.leases.lease import Lease

    kinesis = local_aws.client("kinesis")
    ensure_stream(kinesis, unique_name, 1)
    table = LeaseTable(local_aws.client("dynamodb"), unique_name)
    table.create_if_missing()
    table.create_lease(Lease("shardId-000000000000"))
    stop = threading.Event()
    out = Reports(stop, 3)
    args = argparse.Namespace(
        app=unique_name,
        stream=unique_name,
        table=None,
        endpoint_url=local_aws.endpoint_url,
        region=local_aws.region_name,
        json=False,
        watch=0.1,
    )
    assert status_command(args, stop, out) == 0
    assert out.reports == 3 and out.getvalue().count("1 shard(s)") == 3


@pytest.mark.parametrize("case", ["missing", "not a lease table", "unreachable"])
def test_status_errors_are_one_line(aws_env, unique_name, capsys, case):
    local_aws = aws_env
    endpoint = local_aws.endpoint_url
    if case == "not a lease table":
        local_aws.client("dynamodb").create_table(
            TableName=unique_name,
            KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
    if case == "unreachable":
        import socket

        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            endpoint = f"http://127.0.0.1:{sock.getsockname()[1]}"  # nothing listens
    code = main(
        [
            *("status", "--app", unique_name, "--stream", "s"),
            *("--endpoint-url", endpoint, "--region", local_aws.region_name),
        ]
    )
    err = capsys.readouterr().err.strip()
    assert code == 1 and "\n" not in err, err
    expected = {
        "missing": f"no lease table '{unique_name}'",
        "not a lease table": "is not a lease table",
        "unreachable": endpoint,
    }[case]
    assert expected in err, err
