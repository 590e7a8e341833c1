"""The awsglue surface: what is not provided fails at once naming itself; the shim is
importable only when installed and never shadows another awsglue; the pure parts of
paths, partitions, Avro schemas and ingestion times (no Spark started)."""

import datetime as dt
import importlib
import importlib.util
import os
import sys

import pyarrow as pa
import pytest

from kinesis_dstream import python_path
from kinesis_dstream.glue.context import GlueContext
from kinesis_dstream.glue.errors import GlueError, GlueServiceError, NotProvidedError
from kinesis_dstream.glue.frames.dynamicframe import DynamicFrame
from kinesis_dstream.glue.frames.ingestion import ingestion_values
from kinesis_dstream.glue.job import installing
from kinesis_dstream.glue.sinks.file_formats import avro_schema
from kinesis_dstream.glue.sinks.file_sink import partition_dir, split_by_keys
from kinesis_dstream.glue.streaming.foreach_batch import first_line, no_restart_heals
from kinesis_dstream.glue.transforms import transform_named
from kinesis_dstream.glue.transforms.fields import glue_cast_type, parse_path

SHIM = "kinesis_dstream.glue.shim.awsglue"


def one_line(exc_info) -> str:
    text = str(exc_info.value)
    assert "\n" not in text
    return text


@pytest.mark.parametrize(
    "surface, name",
    [
        (GlueContext, "getSource"),
        (GlueContext, "purge_s3_path"),
        (DynamicFrame, "mergeDynamicFrame"),
        (DynamicFrame, "unnest_ddb_json"),
    ],
)
def test_a_method_glue_has_and_this_layer_does_not_fails_naming_it(surface, name):
    instance = object.__new__(surface)  # no Spark: the lookup alone must fail
    with pytest.raises(NotProvidedError) as e:
        getattr(instance, name)
    assert f"{surface.glue_name}.{name} is not provided" in one_line(e)
    assert not hasattr(instance, name)  # an AttributeError too, as Python expects


def test_every_transform_of_awsglue_transforms_is_there_and_service_ones_refuse():
    transforms = importlib.import_module(SHIM + ".transforms")
    assert len(transforms.__all__) == 22  # aws-glue-libs' ALL_TRANSFORMS
    assert {"Filter", "Map", "Relationalize", "SelectFromCollection", "Union"} <= set(
        transforms.__all__
    )
    assert transform_named("ApplyMapping") is transforms.ApplyMapping
    assert transforms.get_transform("dropnullfields").name() == "DropNullFields"
    ml = importlib.import_module("kinesis_dstream.glue.shim.awsglueml.transforms")
    with pytest.raises(NotProvidedError) as e:
        ml.FindMatches.apply(frame=None, transformId="tfm-1")
    assert "transform FindMatches is not provided" in one_line(e)


def test_awsglue_gluetypes_imports_glue_s_type_classes():
    gluetypes = importlib.import_module(SHIM + ".gluetypes")
    namespace: dict = {}
    exec(f"from {SHIM}.gluetypes import *", namespace)
    assert {"StructType", "NullType", "ChoiceType", "Field", "DecimalType"} <= set(namespace)
    assert gluetypes.DecimalType().jsonValue()["precision"] == 10


def test_the_shim_is_not_awsglue_until_installed(monkeypatch):
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p != installing.SHIM_DIR])
    monkeypatch.delitem(sys.modules, "awsglue", raising=False)
    assert importlib.util.find_spec("awsglue") is None
    monkeypatch.setenv("PYTHONPATH", "/elsewhere")
    monkeypatch.setattr(python_path, "active_spark_context", lambda: None)  # a suite's Spark
    assert installing.install() == installing.SHIM_DIR
    assert sys.path[0] == installing.SHIM_DIR
    assert os.environ["PYTHONPATH"] == os.pathsep.join([installing.SHIM_DIR, "/elsewhere"])
    awsglue = importlib.import_module("awsglue")
    try:
        assert awsglue.DynamicFrame is DynamicFrame
        assert importlib.import_module("awsglue.dynamicframe").DynamicFrame is DynamicFrame
    finally:
        for name in [m for m in sys.modules if m == "awsglue" or m.startswith("awsglue.")]:
            del sys.modules[name]


def test_another_awsglue_is_never_shadowed(monkeypatch, tmp_path):
    (tmp_path / "awsglue").mkdir()
    (tmp_path / "awsglue" / "__init__.py").write_text("")
    monkeypatch.setattr(
        sys, "path", [str(tmp_path)] + [p for p in sys.path if p != installing.SHIM_DIR]
    )
    monkeypatch.delitem(sys.modules, "awsglue", raising=False)
    with pytest.raises(GlueError) as e:
        installing.install()
    assert "another awsglue is installed" in one_line(e) and str(tmp_path) in str(e.value)
    assert installing.SHIM_DIR not in sys.path


def test_glue_paths_and_type_names():
    assert parse_path("a.b.c") == ("a", "b", "c")
    assert parse_path("`a.b`.c") == ("a.b", "c")
    assert parse_path("`we``ird`") == ("we`ird",)
    with pytest.raises(GlueError, match="is not a path"):
        parse_path("a..b")
    assert (glue_cast_type("long"), glue_cast_type("string"), glue_cast_type("struct")) == (
        "bigint",
        "string",
        None,
    )
    with pytest.raises(NotProvidedError, match="choice"):
        glue_cast_type("choice")


def test_a_bare_decimal_is_glues_decimal_type_ten_two():
    # awsglue.gluetypes.DecimalType(precision=10, scale=2); Spark's bare decimal is (10, 0)
    assert glue_cast_type("decimal") == glue_cast_type(" Decimal ") == "decimal(10,2)"
    assert glue_cast_type("decimal(12,4)") == "decimal(12,4)"


def test_partition_directories_are_hive_style_as_spark_escapes_them():
    keys = ["ingest_year", "kind"]
    assert partition_dir(keys, ("2026", "a/b=c")) == "ingest_year=2026/kind=a%2Fb%3Dc"
    assert partition_dir(keys, ("2026", None)) == "ingest_year=2026/kind=__HIVE_DEFAULT_PARTITION__"
    assert partition_dir(keys, ("2026", "")) == "ingest_year=2026/kind=__HIVE_DEFAULT_PARTITION__"


def test_a_batch_splits_by_its_partition_values_keeping_every_row():
    batch = pa.RecordBatch.from_pydict({"__key_0": ["x", "y", "x", None], "v": [1, 2, 3, 4]})
    parts = {values: rows.column(0).to_pylist() for values, rows in split_by_keys(batch, 1)}
    assert parts == {("x",): [1, 3], ("y",): [2], (None,): [4]}
    assert [rows.num_rows for _, rows in split_by_keys(batch.slice(0, 2), 0)] == [2]


def test_arrow_columns_become_spark_s_avro_schema():
    schema = pa.schema(
        [
            pa.field("id", pa.int64(), False),
            pa.field("at", pa.timestamp("us", tz="UTC")),
            pa.field("tags", pa.map_(pa.string(), pa.int32())),
            pa.field("inner", pa.struct([pa.field("d", pa.decimal128(10, 2))])),
        ]
    )
    avro = avro_schema(schema)
    assert avro["name"] == "topLevelRecord"
    fields = {f["name"]: f["type"] for f in avro["fields"]}
    assert fields["id"] == "long"
    assert fields["at"] == [{"type": "long", "logicalType": "timestamp-micros"}, "null"]
    assert fields["tags"][0] == {"type": "map", "values": ["int", "null"]}
    assert fields["inner"][0]["fields"][0]["type"][0]["logicalType"] == "decimal"
    with pytest.raises(GlueError, match="'user name' is not an Avro name"):
        avro_schema(pa.schema([pa.field("user name", pa.string())]))


def test_ingestion_time_columns_are_zero_padded_utc_to_the_granularity():
    now = dt.datetime(2026, 4, 9, 7, 5, tzinfo=dt.timezone.utc)
    assert ingestion_values("hour", now) == [
        ("ingest_year", "2026"),
        ("ingest_month", "04"),
        ("ingest_day", "09"),
        ("ingest_hour", "07"),
    ]
    assert ingestion_values("minute", now)[-1] == ("ingest_minute", "05")
    assert len(ingestion_values("day", now)) == 3
    with pytest.raises(GlueError, match="'week' is not one of day, hour, minute"):
        ingestion_values("week", now)


def test_a_spark_error_is_told_in_one_line_with_the_python_error_inside():
    text = (
        "[STREAM_FAILED] Query [id = 1] terminated with exception: [FOREACH_BATCH_USER_"
        "FUNCTION_ERROR] x\n"
        'Traceback (most recent call last):\n  File "job.py", line 3, in f\n'
        "ValueError: the batch failed\n\tat py4j.Protocol.getReturnValue(Protocol.java:476)\n"
    )
    line = first_line(RuntimeError(text))
    assert line.startswith("[STREAM_FAILED]") and line.endswith("ValueError: the batch failed")


def test_a_py4j_error_is_told_in_one_line_with_the_java_exception_inside():
    """Py4J puts the Java exception on the line after its own, after ': '; the one line
    used to be "An error occurred while calling o54.start." alone."""
    text = (
        "An error occurred while calling o54.start.\n"
        ": org.apache.hadoop.fs.ParentNotDirectoryException: Parent path is not a directory: "
        "file:/etc/hostname\n"
        "\tat org.apache.hadoop.fs.RawLocalFileSystem.mkdirs(RawLocalFileSystem.java:878)\n"
        "Caused by: java.io.IOException: not this one\n"
    )
    assert first_line(RuntimeError(text)) == (
        "An error occurred while calling o54.start. ... org.apache.hadoop.fs."
        "ParentNotDirectoryException: Parent path is not a directory: file:/etc/hostname"
    )


def test_only_script_errors_end_for_each_batch_without_restarts():
    assert no_restart_heals(NotProvidedError("DynamicFrame.resolveChoice is not provided"))
    assert no_restart_heals(GlueError("partitionKeys ['x'] are not columns of the frame"))
    assert not no_restart_heals(GlueServiceError("reading table db.t: throttled", code="x"))
    assert not no_restart_heals(ValueError("the batch failed"))


def test_apply_mapping_counts_only_the_casts_that_can_fail():
    from pyspark.sql.types import FloatType, IntegerType, LongType, StringType

    from kinesis_dstream.glue.transforms.cast_failures import may_fail

    assert may_fail(StringType(), "int") and may_fail(LongType(), "tinyint")
    assert not may_fail(IntegerType(), "bigint") and not may_fail(FloatType(), "double")
    assert not may_fail(LongType(), "string") and not may_fail(LongType(), "bigint")
