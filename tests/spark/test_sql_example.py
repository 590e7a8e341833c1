"""The Structured Streaming word count's --local mode: the README's first command, twin."""

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.spark

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "kinesis_structured_wordcount.py"


@pytest.mark.slow  # a Spark application of its own, 24-28 s: CI's long scenarios; by default
# the getting-started page's Structured Streaming example runs the same pipeline
def test_the_structured_word_count_runs_locally_and_counts_every_word(tmp_path):
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), "--local", "--seconds", "3"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "OK: every word sent was counted exactly once" in done.stdout
