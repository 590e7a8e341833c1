"""createStream in Spark's Streaming tab: each batch's input size is the records it
delivered, and the batch page describes each stream's shards.

The Spark app runs in a child process with the UI on (the suite's shared SparkContext
has it off) and reads Spark's own REST API and pages
(``tests/support/scripts/streaming_tab_app.py``).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kinesis_dstream import KinesisProducer
from kinesis_dstream.dstream.batches import BatchRange
from kinesis_dstream.dstream.input_info import InputInfoReporter
from kinesis_dstream.retrieval.streams import ensure_stream

from .test_examples import spark_env

ROOT = Path(__file__).resolve().parents[2]


def r(shard, first, last, records):
    return BatchRange(shard, None, (first, 0), (last, 0), records)


def test_each_job_time_is_reported_once_with_the_batches_it_owns():
    reporter = InputInfoReporter("orders", "app")
    reports = []

    def report(time_ms, count, text):
        reports.append((time_ms, count, text))

    reporter.batch(1000, 1000, (r("s0", 1, 5, 5),), {"s0": 0}, report)  # a job time
    reporter.batch(1000, 1000, (r("s0", 1, 5, 5),), {}, report)  # asked again: nothing
    reporter.batch(2000, 4000, (r("s0", 6, 7, 2),), {}, report)  # windows: owned by 4000
    reporter.batch(3000, 4000, (r("s1", 1, 3, 3),), {}, report)
    reporter.batch(4000, 4000, (r("s0", 8, 8, 1),), {"s0": 250}, report)
    assert [(t, n) for t, n, _ in reports] == [(1000, 5), (4000, 6)]
    text = reports[1][2]
    assert text.splitlines() == [
        "Kinesis stream orders (application app)",
        "s0: 3 records, 6/0 to 8/0, 250 ms behind latest",
        "s1: 3 records, 1/0 to 3/0",
    ]


def test_a_failing_report_never_fails_the_batch(caplog):
    reporter = InputInfoReporter("orders", "app")

    def broken(time_ms, count, text):
        raise RuntimeError("the tracker moved")

    reporter.batch(1000, 1000, (r("s0", 1, 1, 1),), {}, broken)
    reporter.batch(2000, 2000, (r("s0", 2, 2, 1),), {}, broken)
    warnings = [m for m in caplog.messages if "Streaming tab" in m]
    assert len(warnings) == 1 and "the tracker moved" in warnings[0]  # logged once


@pytest.mark.spark
# The window run (20-26 s) is in CI's long step: the README's command stays under 20 minutes.
@pytest.mark.parametrize("mode", ["plain", pytest.param("window", marks=pytest.mark.slow)])
def test_the_streaming_tab_counts_every_record_of_two_streams(
    local_aws, kinesis, unique_name, mode
):
    counts = {f"{unique_name}-a": 300, f"{unique_name}-b": 120}
    for stream, count in counts.items():
        ensure_stream(kinesis, stream, 2)
        with KinesisProducer(stream, client=kinesis) as producer:
            for i in range(count):
                producer.put(f"{stream}-{i}", f"key-{i}")
    (a, n_a), (b, n_b) = counts.items()
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "tests" / "support" / "scripts" / "streaming_tab_app.py"),
            *(unique_name, a, str(n_a), b, str(n_b), local_aws.endpoint_url),
            *(local_aws.region_name, mode),
        ],
        env=spark_env(local_aws),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["delivered"] == counts
    assert sum(out["input_sizes"]) == n_a + n_b  # exactly what was delivered
    for stream in counts:  # each stream's row in the input-rate section
        assert f"Kinesis stream {stream} ({unique_name}-{stream}) [" in out["page"]
    described = " ".join(out["batch_pages"])
    for stream in counts:
        assert f"Kinesis stream {stream} (application {unique_name}-{stream})" in described
    assert re.search(r"shardId-000000000000: \d+ records, \d+/0 to \d+/0", described)
