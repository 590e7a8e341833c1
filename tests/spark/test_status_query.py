"""``kinesis-dstream status --checkpoint-location``: a Structured Streaming query's shards.

A query reads part of a stream (Trigger.AvailableNow) and stops; more records arrive:
each shard shows where the last committed batch left it and a positive lag; after the
query ran again, 0.
"""

from __future__ import annotations

import json
import time

import pytest

from kinesis_dstream.cli import main
from kinesis_dstream.retrieval.streams import ensure_stream

from ..support.records import put_records
from ..support.streaming import running
from .test_sql_spark import source

pytestmark = pytest.mark.spark


def drain(session, df, checkpoint) -> None:
    query = (
        df.writeStream.format("noop")
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    with running(query):
        assert query.awaitTermination(180), "AvailableNow did not stop within 180 s"
        assert query.exception() is None, query.exception()


def status(local_aws, checkpoint, ends, capsys) -> dict:
    code = main(
        [
            *("status", "--checkpoint-location", str(checkpoint), "--metadata-path", str(ends)),
            *("--endpoint-url", local_aws.endpoint_url, "--region", local_aws.region_name),
            "--json",
        ]
    )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads(captured.out)


def test_a_querys_shards_from_its_checkpoint_location(
    session, local_aws, kinesis, unique_name, tmp_path, capsys
):
    ensure_stream(kinesis, unique_name, 2)
    put_records(kinesis, unique_name, 20, data="a-{i}", key="a-key-{i}")
    df = source(session, local_aws, unique_name, tmp_path)
    checkpoint, ends = tmp_path / "cp", tmp_path / "ends"
    drain(session, df, checkpoint)
    put_records(kinesis, unique_name, 20, data="b-{i}", key="b-key-{i}")
    time.sleep(1.5)  # spacing the writes, not waiting for an outcome
    put_records(kinesis, unique_name, 20, data="c-{i}", key="c-key-{i}")
    report = status(local_aws, checkpoint, ends, capsys)
    assert report["stream"] == unique_name and report["totals"]["shards"] == 2
    for shard in report["shards"]:
        assert shard["checkpoint"].startswith("after "), shard  # the last record delivered
        assert shard["millis_behind_latest"] >= 1000 and shard["next_record_age_ms"] >= 1000
    drain(session, df, checkpoint)
    report = status(local_aws, checkpoint, ends, capsys)
    for shard in report["shards"]:
        assert shard["millis_behind_latest"] == 0 and shard["next_record_age_ms"] is None


def test_a_directory_that_is_not_a_checkpoint_location_is_one_line(local_aws, tmp_path, capsys):
    code = main(
        [
            *("status", "--checkpoint-location", str(tmp_path), "--metadata-path", str(tmp_path)),
            *("--endpoint-url", local_aws.endpoint_url, "--region", local_aws.region_name),
        ]
    )
    err = capsys.readouterr().err.strip()
    assert code == 1 and "\n" not in err and "no committed batch" in err, err
