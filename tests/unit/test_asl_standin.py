"""``pyspark.streaming.kinesis`` is PySpark's own unless asked; asked (the stand-in's folder
on PYTHONPATH, as ``kinesis-dstream submit`` and Spark's workers under it get it, or
``kinesis_dstream.asl.install()``), it is this library's. Each check runs in a new
interpreter: what this one imported decides nothing there."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pyspark

from kinesis_dstream.asl.standin import SHIM_DIR, STANDIN_FILE

PYSPARKS = os.path.join(os.path.dirname(pyspark.__file__), "streaming", "kinesis.py")
#: What a process reports about its pyspark.streaming.kinesis.
REPORT = """
import json
import pyspark.streaming.kinesis as m
star = {}
exec("from pyspark.streaming.kinesis import *", star)
print(json.dumps({
    "file": m.__file__,
    "standin": getattr(m, "__kinesis_dstream_standin__", False),
    "star": sorted(k for k in star if not k.startswith("__")),
    "utils": m.KinesisUtils.__module__,
    "decoder": m.utf8_decoder.__module__,
    "storage_level": m.StorageLevel.__module__,
}))
"""


def run(code: str, pythonpath=None, extra_env=None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if pythonpath is not None:
        env["PYTHONPATH"] = pythonpath
    env.update(extra_env or {})
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def report(code: str = REPORT, **kw) -> dict:
    done = run(code, **kw)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_without_the_runner_pyspark_streaming_kinesis_is_pyspark_s_own():
    plain = report()
    assert plain["file"] == PYSPARKS and not plain["standin"]
    assert plain["utils"] == "pyspark.streaming.kinesis"
    # importing the library, even its asl package, changes nothing
    after = report("import kinesis_dstream, kinesis_dstream.asl\n" + REPORT)
    assert after == plain


def test_the_runner_s_folder_on_pythonpath_serves_the_library_s_module():
    served = report(pythonpath=SHIM_DIR)
    assert served["file"] == STANDIN_FILE and served["standin"]
    assert served["star"] == [
        "InitialPositionInStream",
        "KinesisUtils",
        "MetricsLevel",
        "utf8_decoder",
    ]
    assert served["utils"] == "kinesis_dstream.asl.kinesis_utils"
    assert served["decoder"] == "kinesis_dstream.dstream.api"  # pickled by this name
    assert served["storage_level"] == "pyspark.storagelevel"
    assert os.path.isfile(PYSPARKS)  # PySpark's own file is left where it is


def test_install_serves_it_in_a_program_and_refuses_once_pyspark_s_is_imported():
    served = report("import kinesis_dstream.asl\nkinesis_dstream.asl.install()\n" + REPORT)
    assert served["file"] == STANDIN_FILE
    done = run(
        """
        import pyspark.streaming.kinesis
        import kinesis_dstream.asl
        from kinesis_dstream.errors import StandInError
        try:
            kinesis_dstream.asl.install()
        except StandInError as e:
            print(e)
        """
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("PySpark's pyspark.streaming.kinesis is already imported (")
    assert "call kinesis_dstream.asl.install() before the first import" in done.stdout


def test_the_sitecustomize_it_shadows_still_runs(tmp_path):
    (tmp_path / "sitecustomize.py").write_text("import os\nos.environ['SHADOWED_RAN'] = '1'\n")
    served = report(
        "import os\nassert os.environ.get('SHADOWED_RAN') == '1'\n" + REPORT,
        pythonpath=os.pathsep.join([SHIM_DIR, str(tmp_path)]),
    )
    assert served["file"] == STANDIN_FILE


def test_a_python_without_the_library_says_so_in_one_line_and_starts(tmp_path):
    # A Python that cannot import kinesis_dstream: PYTHONPATH holds only the shim and a
    # blocker that makes the import fail, as on a worker whose Python lacks the library.
    (tmp_path / "kinesis_dstream.py").write_text("raise ImportError('not installed here')\n")
    done = run(
        "import pyspark.streaming.kinesis as m\nprint(m.__file__)",
        pythonpath=os.pathsep.join([SHIM_DIR, str(tmp_path)]),
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == PYSPARKS
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "cannot import kinesis_dstream (not installed here)" in lines[0]
    assert "pyspark.streaming.kinesis is PySpark's own in this process" in lines[0]
