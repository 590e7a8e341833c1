"""Without its extras the library still serves what needs no Spark, and says which extra
the rest needs, in one line.

Each check runs in a fresh Python where ``pyspark`` (or ``moto``, ``pyarrow``) cannot be
imported, as on a machine where it is not installed.
"""

import subprocess
import sys

import pytest


def run_without(module: str, code: str) -> subprocess.CompletedProcess:
    prelude = f"import sys; sys.modules[{module!r}] = None\n"
    return subprocess.run(
        [sys.executable, "-c", prelude + code], capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize(
    "argv, says",
    [
        (["kinesis-dstream", "kcl", "--help"], "properties"),
        (["kinesis-dstream", "--help"], "kcl"),
        (["kinesis-word-producer", "--help"], "--rounds"),
    ],
)
def test_the_commands_that_need_no_spark_run_without_pyspark(argv, says):
    entry = {
        "kinesis-dstream": "from kinesis_dstream.cli import main",
        "kinesis-word-producer": "from kinesis_dstream.demo.word_producer import main",
    }[argv[0]]
    done = run_without("pyspark", f"sys.argv = {argv!r}\n{entry}\nmain()")
    assert done.returncode == 0, done.stderr
    assert says in done.stdout


def test_create_stream_without_pyspark_names_the_extra_in_one_line():
    done = run_without(
        "pyspark",
        "from kinesis_dstream import KinesisUtils, InitialPositionInStream\n"
        "KinesisUtils.createStream(None, 'app', 's', 'e', 'r', InitialPositionInStream.LATEST, 2)",
    )
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == (
        "kinesis_dstream.extras.MissingExtraError: KinesisUtils.createStream needs pyspark, "
        "which is not installed: pip install 'kinesis_dstream[spark]'"
    )


@pytest.mark.parametrize(
    "module, code, what, extra",
    [
        ("pyarrow", "import kinesis_dstream.sql", "kinesis_dstream.sql", "sql"),
        (
            "moto",
            "from kinesis_dstream.local import LocalAWS\nLocalAWS().start()",
            "the embedded local AWS",
            "local",
        ),
    ],
)
def test_a_missing_optional_dependency_names_its_extra(module, code, what, extra):
    done = run_without(module, code)
    assert done.returncode == 1
    assert (
        done.stderr.strip()
        .splitlines()[-1]
        .endswith(
            f"{what} needs {module}, which is not installed: pip install 'kinesis_dstream[{extra}]'"
        )
    )


@pytest.mark.parametrize(
    "module, says",
    [
        (
            "moto",
            "error: the embedded local AWS needs moto, which is not installed: "
            "pip install 'kinesis_dstream[local]'",
        ),
        (
            "pyspark",
            "error: this example needs PySpark: pip install 'kinesis_dstream[spark,local]'",
        ),
    ],
)
def test_the_word_count_example_without_an_extra_is_one_line(module, says):
    import os

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    example = os.path.join(root, "examples", "kinesis_wordcount.py")
    done = run_without(
        module,
        f"import sys, runpy; sys.argv = ['x', '--local']\n"
        f"runpy.run_path({example!r}, run_name='__main__')",
    )
    assert done.returncode == 1
    assert done.stderr.strip() == says


def test_classification_avro_without_fastavro_names_the_extra():
    done = run_without(
        "fastavro",
        "from kinesis_dstream.sql.parsing.payload_avro import parse_avro_schema\n"
        "parse_avro_schema('{}')",
    )
    assert done.returncode == 1
    assert (
        done.stderr.strip()
        .splitlines()[-1]
        .endswith(
            "classification avro needs fastavro, which is not installed: "
            "pip install 'kinesis_dstream[sql]'"
        )
    )


def test_the_source_on_a_pyspark_without_admission_control_names_the_release_in_one_line():
    """PySpark 4.0 and 4.1 (and 3.5) have no pyspark.sql.streaming.datasource: the source
    says which release it needs; the rest of kinesis_dstream.sql still imports."""
    done = run_without(
        "pyspark.sql.streaming.datasource",
        "from kinesis_dstream.sql import SourceOptions\n"
        "from kinesis_dstream.sql.parsing.payload import parse_batch\n"
        "from kinesis_dstream.sql import KinesisDataSource",
    )
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(
        "kinesis_dstream.extras.MissingExtraError: kinesis_dstream.sql (the Structured "
        "Streaming source and sink) needs pyspark >= 4.2; this is pyspark "
    ), done.stderr
    assert last.endswith("use the DStream API: kinesis_dstream.KinesisUtils.createStream")
