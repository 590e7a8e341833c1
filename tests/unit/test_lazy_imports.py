"""What ``import kinesis_dstream`` loads, and that its lazy names behave as eager ones.

Spark starts a new Python process for every query's source runner; whatever the source's
modules import is paid again at each query's start, before its first micro-batch. So the
package loads its DStream API and producer on first use (PEP 562). Each check runs in a
new interpreter: this one has long imported everything.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

#: The names ``kinesis_dstream/__init__.py`` imports when it loads, and those it leaves
#: to first use.
EAGER = {
    "CheckpointError",
    "CredentialsError",
    "DependencyError",
    "KinesisDStreamError",
    "KinesisRecord",
    "KinesisServiceError",
    "LeaseLostError",
    "LeaseTableError",
    "MessageHandlerError",
    "ProducerError",
    "RecordsLostError",
    "StreamNotFoundError",
    "ThrottledError",
}
LAZY = {
    "InitialPositionInStream": "kinesis_dstream.dstream",
    "KinesisInitialPositions": "kinesis_dstream.dstream",
    "KinesisInputDStream": "kinesis_dstream.dstream",
    "KinesisUtils": "kinesis_dstream.dstream",
    "MetricsLevel": "kinesis_dstream.dstream",
    "SparkAWSCredentials": "kinesis_dstream.dstream",
    "progress": "kinesis_dstream.dstream",
    "utf8_decoder": "kinesis_dstream.dstream",
    "KinesisProducer": "kinesis_dstream.producer",
}


def _run(code: str) -> dict:
    """Run ``code`` in a new interpreter; it prints one JSON value, returned here."""
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return json.loads(out.stdout)


def _has_data_source_api() -> bool:
    try:
        import pyspark.sql.streaming.datasource  # noqa: F401
    except ImportError:
        return False
    return True


# The version matrix's PySpark 3.5 refuses the source at import (it needs >= 4.2).
@pytest.mark.skipif(
    not _has_data_source_api(), reason="PySpark < 4.2 has no streaming Data Source API"
)
def test_the_source_runner_does_not_load_the_dstream_machinery():
    loaded = _run(
        """
        import json, sys
        import kinesis_dstream.sql.source, kinesis_dstream.sql.driver.multi
        import kinesis_dstream.sql.driver.runner
        print(json.dumps(sorted(sys.modules)))
        """
    )
    assert "kinesis_dstream.sql.driver.runner" in loaded
    assert [m for m in loaded if m.startswith("kinesis_dstream.dstream")] == []
    assert "kinesis_dstream.producer" not in loaded


def test_every_public_name_is_eager_or_lazy_and_each_lazy_one_is_its_modules_own():
    got = _run(
        """
        import importlib, json, sys
        import kinesis_dstream
        names = list(kinesis_dstream.__all__)
        before = {n: n in vars(kinesis_dstream) for n in names}
        same = {
            n: getattr(kinesis_dstream, n)
            is getattr(importlib.import_module(getattr(kinesis_dstream, n).__module__), n)
            for n in names
        }
        modules = {n: getattr(kinesis_dstream, n).__module__ for n in names}
        print(json.dumps({"names": names, "before": before, "same": same, "modules": modules,
                          "in_dir": sorted(set(names) - set(dir(kinesis_dstream)))}))
        """
    )
    assert sorted(got["names"]) == sorted(EAGER | set(LAZY))
    assert len(got["names"]) == len(set(got["names"]))
    assert {n for n, bound in got["before"].items() if bound} == EAGER
    assert all(got["same"].values()), got["same"]
    for name, package in LAZY.items():
        assert got["modules"][name].startswith(package), (name, got["modules"][name])
    assert got["in_dir"] == []


def test_a_submodule_is_an_attribute_of_the_package_without_importing_it_first():
    got = _run(
        """
        import json, sys
        import kinesis_dstream
        seen = {n: hasattr(kinesis_dstream, n) for n in ("dstream", "producer", "aws")}
        print(json.dumps({
            "seen": seen,
            "same": kinesis_dstream.aws is sys.modules["kinesis_dstream.aws"],
            "missing": hasattr(kinesis_dstream, "no_such_name"),
        }))
        """
    )
    assert got == {
        "seen": {"dstream": True, "producer": True, "aws": True},
        "same": True,
        "missing": False,
    }


def test_a_type_checker_sees_the_lazy_names_and_rejects_unknown_ones(tmp_path):
    """A module ``__getattr__`` visible to mypy would type every unknown name as Any."""
    # The version matrix installs the test tools without lint and types; .ci/run has mypy.
    pytest.importorskip("mypy", reason="mypy is not installed (the test extra has it)")
    checked = tmp_path / "uses.py"
    checked.write_text(
        "import kinesis_dstream\n"
        "from kinesis_dstream import KinesisUtils\n"
        "reveal_type(KinesisUtils.createStream)\n"
        "kinesis_dstream.KinesisUtilz\n"
    )
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            "/dev/null",
            "--ignore-missing-imports",
            "--follow-imports",
            "silent",
            "--cache-dir",
            str(tmp_path / "cache"),
            str(checked),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=root,
        env={**os.environ, "MYPYPATH": str(root)},
    )
    lines = [line for line in out.stdout.splitlines() if line.startswith(str(checked))]
    assert len(lines) == 2, out.stdout + out.stderr
    assert "def (ssc: Any, kinesisAppName: str" in lines[0]
    assert 'Module has no attribute "KinesisUtilz"' in lines[1]
