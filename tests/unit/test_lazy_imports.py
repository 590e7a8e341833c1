"""What a Structured Streaming query's own Python processes import.

Spark starts a new Python process for every query's source runner; whatever the source's
modules import is paid again at each query's start, before its first micro-batch.
"""

from __future__ import annotations

import subprocess
import sys


def _modules_after(statement: str) -> set:
    code = f"{statement}\nimport sys\nprint('\\n'.join(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True, timeout=120
    )
    return set(out.stdout.split())


def test_the_source_runner_does_not_load_the_dstream_machinery():
    loaded = _modules_after(
        "import kinesis_dstream.sql.source, kinesis_dstream.sql.driver.multi, "
        "kinesis_dstream.sql.driver.runner"
    )
    assert "kinesis_dstream.sql.driver.runner" in loaded
    assert not {m for m in loaded if m.startswith("kinesis_dstream.dstream")}
    assert "kinesis_dstream.producer" not in loaded


def test_the_public_names_still_load_on_first_use():
    import kinesis_dstream

    for name in kinesis_dstream.__all__:
        assert getattr(kinesis_dstream, name) is not None, name
    from kinesis_dstream import InitialPositionInStream, KinesisProducer, KinesisUtils

    assert InitialPositionInStream.TRIM_HORIZON == 1
    assert KinesisUtils.createStream and KinesisProducer.put
    assert callable(kinesis_dstream.progress)
    assert "KinesisUtils" in dir(kinesis_dstream)
