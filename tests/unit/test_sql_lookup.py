"""``format("kinesis")`` and ``format("aws-kinesis")`` with no register line: the two
top-level ``pyspark_*`` modules that PySpark's own lookup imports.

Each check runs in a new interpreter (this one has long imported everything), with the
checkout's folder on ``PYTHONPATH``: an installed wheel puts the two modules in
site-packages, where ``pkgutil.iter_modules`` (Spark's lookup) finds them; an editable
install serves them through an import hook, which ``iter_modules`` does not list.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: Put first in a new interpreter: makes ``import <name>`` fail as if it were not installed.
BLOCK = """
import sys
class Block:
    def __init__(self, names):
        self.names = names
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in self.names or name in self.names:
            raise ImportError("blocked: " + name)
sys.meta_path.insert(0, Block({blocked!r}))
"""


def _run(code: str, blocked: tuple = ()) -> dict:
    """Run ``code`` in a new interpreter with the checkout on PYTHONPATH; it prints one
    JSON value, returned here."""
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    env = dict(os.environ, PYTHONPATH=path)
    prelude = BLOCK.format(blocked=set(blocked)) if blocked else ""
    out = subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code)],
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=str(ROOT / "tests"),  # not the checkout: only PYTHONPATH puts it on sys.path
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def _has_data_source_api() -> bool:
    try:
        import pyspark.sql.datasource  # noqa: F401
    except ImportError:
        return False
    return True


needs_api = pytest.mark.skipif(
    not _has_data_source_api(), reason="this PySpark has no Python data source API (< 4.0)"
)


@needs_api
def test_the_modules_are_cheap_and_name_the_sources_names():
    got = _run(
        """
        import json, sys
        import pyspark_kinesis, pyspark_aws_kinesis
        loaded = sorted(m for m in ("boto3", "botocore", "kinesis_dstream.sql") if m in sys.modules)
        names = [pyspark_kinesis.DefaultSource.name(), pyspark_aws_kinesis.DefaultSource.name()]
        from kinesis_dstream.sql.source import AwsKinesisDataSource, KinesisDataSource
        print(json.dumps({"loaded": loaded, "names": names,
                          "sources": [KinesisDataSource.name(), AwsKinesisDataSource.name()]}))
        """
    )
    assert got["loaded"] == []  # neither the AWS SDK nor the source: loaded on first use
    assert got["names"] == ["kinesis", "aws-kinesis"] == got["sources"]


@pytest.mark.skipif(
    not _has_data_source_api() or sys.version_info < (3, 10),
    reason="PySpark's lookup of Python data sources came in 4.0",
)
def test_pysparks_own_lookup_registers_both_names_and_they_load_the_real_source():
    got = _run(
        """
        import io, json, pickle
        from pyspark.serializers import read_int
        from pyspark.sql.worker.lookup_data_sources import _main
        out = io.BytesIO()
        _main(io.BytesIO(), out)  # what Spark's lookup worker writes back to the JVM
        out.seek(0)
        found = {}
        for _ in range(read_int(out)):
            name = out.read(read_int(out)).decode()
            found[name] = pickle.loads(out.read(read_int(out)))
        real = {name: type(found[name]({"streamName": "s"})._source()).__name__
                for name in ("kinesis", "aws-kinesis") if name in found}
        print(json.dumps({"names": sorted(found), "real": real}))
        """
    )
    assert {"kinesis", "aws-kinesis"} <= set(got["names"])
    assert got["real"] == {"kinesis": "KinesisDataSource", "aws-kinesis": "AwsKinesisDataSource"}


@needs_api
def test_without_pyarrow_the_modules_import_and_the_formats_use_says_why():
    got = _run(
        """
        import json
        import pyspark_kinesis, pyspark_aws_kinesis
        errors = []
        for module in (pyspark_kinesis, pyspark_aws_kinesis):
            try:
                module.DefaultSource({"streamName": "s"}).schema()
            except Exception as exc:
                errors.append(f"{type(exc).__name__}: {exc}")
        print(json.dumps(errors))
        """,
        blocked=("pyarrow",),
    )
    assert len(got) == 2
    for line in got:
        assert line.startswith("MissingExtraError: ")
        assert "pyarrow" in line and "kinesis_dstream[sql]" in line
        assert "\n" not in line


def test_without_a_data_source_api_the_modules_import_and_hold_nothing():
    # PySpark 3.5 (the version matrix's Python 3.9) has no pyspark.sql.datasource: Spark
    # has no lookup there either, and importing the modules must still not raise.
    got = _run(
        """
        import json
        import pyspark_kinesis, pyspark_aws_kinesis
        modules = (pyspark_kinesis, pyspark_aws_kinesis)
        print(json.dumps([hasattr(m, "DefaultSource") for m in modules]))
        """,
        blocked=("pyspark.sql.datasource",),
    )
    assert got == [False, False]


def test_here_the_modules_import_and_hold_a_source_exactly_where_pyspark_has_the_api():
    # in the version matrix this runs on PySpark 3.5 too (Python 3.9): nothing, no raise
    got = _run(
        """
        import json
        import pyspark_kinesis, pyspark_aws_kinesis
        modules = (pyspark_kinesis, pyspark_aws_kinesis)
        print(json.dumps([hasattr(m, "DefaultSource") for m in modules]))
        """
    )
    assert got == [_has_data_source_api()] * 2


def test_names_that_cannot_load_hold_nothing_and_say_why_in_one_line():
    # Spark's lookup must never see a raise; a user must still learn why format("kinesis")
    # is not found: one line on stderr
    got = _run(
        """
        import io, json, sys
        sys.stderr = io.StringIO()
        import pyspark_kinesis, pyspark_aws_kinesis
        modules = (pyspark_kinesis, pyspark_aws_kinesis)
        print(json.dumps({"held": [hasattr(m, "DefaultSource") for m in modules],
                          "said": sys.stderr.getvalue().splitlines()}))
        """,
        blocked=("kinesis_dstream.sql_lookup",),
    )
    assert got["held"] == [False, False]
    assert len(got["said"]) == 2
    said = "kinesis_dstream: format names not registered: "
    assert all(line.startswith(said) for line in got["said"])
