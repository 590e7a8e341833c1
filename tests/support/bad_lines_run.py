"""Running ``scripts/bad_lines_child.py`` under a daemon: its shards, records and events.

Shared by the end-to-end test (our daemon keeps every shard and every checkpoint through
a child's malformed lines) and the peer test against the Java KCL 2.5.8 daemon.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kinesis_dstream.retrieval.streams import ensure_stream, list_shards

ROOT = Path(__file__).resolve().parents[2]
CHILD = ROOT / "tests" / "support" / "scripts" / "bad_lines_child.py"


def put_per_shard(kinesis, stream: str, shards: list, count: int, prefix: str) -> dict:
    """``count`` records to each shard (by explicit hash key); shard id -> last sequence number."""
    last = {}
    for shard in shards:
        for i in range(count):
            answer = kinesis.put_record(
                StreamName=stream,
                Data=f"{prefix}-{i}".encode(),
                PartitionKey=f"{prefix}-{shard['ShardId']}-{i}",
                ExplicitHashKey=shard["HashKeyRange"]["StartingHashKey"],
            )
            assert answer["ShardId"] == shard["ShardId"]
            last[shard["ShardId"]] = answer["SequenceNumber"]
    return last


@dataclass
class Stage:
    """A two-shard stream with 5 records on each shard, and the child's output folder."""

    kinesis: Any
    shards: list
    #: The shard whose child writes every case of child_lines, and the other one.
    probed: str
    other: str
    #: Shard id -> its last record's sequence number.
    last: dict
    out: Path


def stage(local_aws, stream: str, tmp_path: Path) -> Stage:
    kinesis = local_aws.client("kinesis")
    ensure_stream(kinesis, stream, 2)
    shards = list_shards(kinesis, stream)
    last = put_per_shard(kinesis, stream, shards, 5, "a")
    out = tmp_path / "out"
    out.mkdir()
    return Stage(kinesis, shards, shards[0]["ShardId"], shards[1]["ShardId"], last, out)


def child_command() -> str:
    return f"{sys.executable} {CHILD}"


def child_env(out_dir: Path, **extra) -> dict:
    import os

    return {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "KCLPY_OUT_DIR": str(out_dir),
        **extra,
    }
