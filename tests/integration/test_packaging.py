"""What the wheel carries besides the package: the top-level modules PySpark's own lookup
of Python data sources imports (``pyspark_*``), so that an installed package gives
``format("kinesis")`` and ``format("aws-kinesis")`` with no register line."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_wheel_carries_the_lookup_modules_at_its_top(tmp_path):
    subprocess.run(
        [
            *(sys.executable, "-m", "pip", "wheel", "--no-deps"),
            *("-q", "-w", str(tmp_path), str(ROOT)),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = tmp_path.glob("kinesis_dstream-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    tops = {n for n in names if "/" not in n}
    assert tops == {"pyspark_kinesis.py", "pyspark_aws_kinesis.py"}
    assert "kinesis_dstream/sql_lookup.py" in names
