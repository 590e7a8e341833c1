"""Whole programs in their own processes: an ASL-era script, and the word count demo."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kinesis_dstream import KinesisProducer
from kinesis_dstream.retrieval.streams import ensure_stream

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[2]


def spark_env(local_aws):
    return {
        **os.environ,
        **local_aws.env(),
        "PYSPARK_PYTHON": sys.executable,
        "PYSPARK_SUBMIT_ARGS": "--master local[2] pyspark-shell",
    }


@pytest.mark.slow  # a Spark application of its own, 11-14 s: CI's long scenarios; by
# default the migration page's createStream example runs in that shape (its import changed)
def test_a_script_written_for_pyspark_kinesis_runs_with_only_the_import_changed(
    local_aws, kinesis, unique_name, tmp_path
):
    original = (ROOT / "tests" / "support" / "scripts" / "asl_style_count.py").read_text()
    changed = original.replace(
        "from pyspark.streaming.kinesis import", "from kinesis_dstream import"
    )
    assert sum(a != b for a, b in zip(original.splitlines(), changed.splitlines())) == 1
    script = tmp_path / "asl_style_count.py"
    script.write_text(changed)
    ensure_stream(kinesis, unique_name, 2)
    with KinesisProducer(unique_name, client=kinesis) as producer:
        for i in range(200):
            producer.put(f"line {i}", f"key-{i}")
    done = subprocess.run(
        [
            sys.executable,
            str(script),
            unique_name,
            unique_name,
            local_aws.endpoint_url,
            local_aws.region_name,
            "200",
        ],
        env=spark_env(local_aws),
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "COUNTED 200 DISTINCT 200" in done.stdout, done.stdout + done.stderr[-3000:]


def test_the_word_count_demo_counts_every_word_sent():
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "examples" / "kinesis_wordcount.py"),
            "--local",
            "--seconds",
            "3",
        ],
        env={**os.environ, "PYSPARK_PYTHON": sys.executable},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    sent = [
        line for line in done.stdout.splitlines() if line.startswith("Totals for the words sent")
    ]
    counted = [
        line for line in done.stdout.splitlines() if line.startswith("Totals for the words counted")
    ]
    assert sent and counted
    assert sent[0].split(":", 1)[1].strip() == counted[0].split(":", 1)[1].strip()
    assert "OK: every word sent was counted exactly once" in done.stdout
