"""A batch read's files read as a Spark task reads them, without Spark: CSV typed as Glue
types it, JSON lines and documents with jsonPath, Parquet and ORC by their footers, Avro
by Glue's versions, partition folders, and a corrupt file counted and left out (or
failing the task with isFailFast)."""

import datetime as dt
import gzip
import logging
from decimal import Decimal

import fastavro
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from pyarrow import orc

from kinesis_dstream.glue.sources import csv_files
from kinesis_dstream.glue.sources.file_readers import (
    FileUnreadable,
    file_schema,
    infer_files,
    merge_summaries,
    partition_values,
    read_files,
)
from kinesis_dstream.glue.sources.s3_options import parse_s3_read


def rows(read, paths, schema=None):
    """What the frame holds: the columns inferred over ``paths`` (two tasks' summaries
    merged), then every file read with them."""
    if schema is None:
        summaries = [infer_files(read, [p]) for p in paths]
        schema = merge_summaries(read, summaries)
    batches = list(read_files(read, schema, paths, [0] * len(paths)))
    return schema, [r for b in batches for r in b.to_pylist()]


def test_csv_columns_are_long_double_or_string_as_glue_types_csv_values(tmp_path):
    a = tmp_path / "a.csv"
    a.write_text('code,pop,area,note\nFR,68,551695.5,"a, b"\nDE,83,357588,\n')
    b = tmp_path / "b.csv.gz"
    b.write_bytes(gzip.compress(b"code,pop,area,note\nUS,+333,9.8e6,x\n,,,\n"))
    read = parse_s3_read({"paths": [str(tmp_path)]}, "csv", {"withHeader": True})
    schema, got = rows(read, [str(a), str(b)])
    assert schema.simpleString() == "struct<code:string,pop:bigint,area:double,note:string>"
    assert got == [
        {"code": "FR", "pop": 68, "area": 551695.5, "note": "a, b"},
        {"code": "DE", "pop": 83, "area": 357588.0, "note": None},
        {"code": "US", "pop": 333, "area": 9.8e6, "note": "x"},
        {"code": None, "pop": None, "area": None, "note": None},
    ]


def test_an_empty_csv_file_is_no_rows_and_nothing_wrong(tmp_path, caplog):
    (tmp_path / "empty.csv").write_text("")
    (tmp_path / "a.csv").write_text("code\nFR\n")
    read = parse_s3_read({"paths": [str(tmp_path)]}, "csv", {"withHeader": True})
    with caplog.at_level(logging.WARNING):
        schema, got = rows(read, [str(tmp_path / "empty.csv"), str(tmp_path / "a.csv")])
    assert schema.names == ["code"] and got == [{"code": "FR"}]
    assert caplog.text == ""


def test_csv_without_a_header_is_col0_col1_and_odd_rows_are_padded_or_cut(tmp_path, caplog):
    path = tmp_path / "x.csv"
    path.write_text('1,a,true\n2,b\n3,c,false,extra\n4,"multi\nline",true\n')
    read = parse_s3_read({"paths": [str(path)]}, "csv", {"multiLine": True})
    with caplog.at_level(logging.WARNING):
        schema, got = rows(read, [str(path)])
    assert schema.names == ["col0", "col1", "col2"]
    assert sorted(got, key=lambda r: r["col0"]) == [
        {"col0": 1, "col1": "a", "col2": "true"},
        {"col0": 2, "col1": "b", "col2": None},  # short: padded with null
        {"col0": 3, "col1": "c", "col2": "false"},  # long: cut, counted
        {"col0": 4, "col1": "multi\nline", "col2": "true"},
    ]
    assert "rows cut to the header's field count" in caplog.text


def test_csv_quoting_escaping_separator_and_skip_first_follow_the_format_options(tmp_path):
    path = tmp_path / "q.csv"
    path.write_text("h1|h2\nskipped|row\n\"x|y\"|'z'\na\\|b|c\n")
    quoted = parse_s3_read(
        {"paths": [str(path)]}, "csv", {"separator": "|", "withHeader": True, "skipFirst": True}
    )
    assert rows(quoted, [str(path)])[1][0] == {"h1": "x|y", "h2": "'z'"}
    unquoted = parse_s3_read(
        {"paths": [str(path)]},
        "csv",
        {"separator": "|", "quoteChar": -1, "escaper": "\\", "withHeader": True},
    )
    assert sorted(rows(unquoted, [str(path)])[1], key=str) == [
        {"h1": '"x', "h2": 'y"'},  # no quoting: quotes are text (a third field, cut)
        {"h1": "a|b", "h2": "c"},  # the escaper keeps the separator
        {"h1": "skipped", "h2": "row"},
    ]


def test_csv_kinds_merge_to_the_widest_and_a_later_misfit_is_null():
    kind = csv_files.column_kind
    assert kind(pa.array(["1", None, "-2"])) == "long"
    assert kind(pa.array(["1", "2.5"])) == "double"
    assert kind(pa.array(["99999999999999999999"])) == "double"  # past 64 bits
    assert kind(pa.array(["1", "x"])) == "string"
    assert kind(pa.array([None], pa.string())) == "null"
    assert csv_files.merge_kinds("long", "double") == "double"
    assert csv_files.merge_kinds("null", "long") == "long"
    assert csv_files.merge_kinds("double", "string") == "string"
    converted, misfits = csv_files.convert(pa.array(["1", "changed", None]), "long")
    assert converted.to_pylist() == [1, None, None] and misfits == 1


def test_json_lines_and_documents_are_read_with_jsonpath(tmp_path):
    lines = tmp_path / "a.json"
    lines.write_text('{"id": 1, "tags": ["x"]}\n\n{"id": 2.5, "m": {"k": true}}\n[1]\n')
    read = parse_s3_read({"paths": [str(lines)]}, "json", {})
    schema, got = rows(read, [str(lines)])
    assert schema.simpleString() == "struct<id:double,tags:array<string>,m:struct<k:boolean>>"
    assert got == [
        {"id": 1.0, "tags": ["x"], "m": None},
        {"id": 2.5, "tags": None, "m": {"k": True}},
    ]  # the array's member 1 is not an object: counted, left out
    document = tmp_path / "doc.json"
    document.write_text('{"data": {"items": [\n{"id": 1},\n{"id": 2}\n]}}')
    nested = parse_s3_read(
        {"paths": [str(document)]}, "json", {"multiLine": True, "jsonPath": "$.data.items[*]"}
    )
    assert rows(nested, [str(document)])[1] == [{"id": 1}, {"id": 2}]


def test_parquet_and_orc_columns_come_from_the_footer_and_are_read_as_spark_types(tmp_path):
    table = pa.table(
        {
            "k": pa.array([1, 2], pa.int32()),
            "u": pa.array([7, 8], pa.uint32()),
            "name": pa.array(["a", "b"]).dictionary_encode(),
            "at": pa.array([dt.datetime(2026, 1, 1, 12)] * 2, pa.timestamp("ns", tz="UTC")),
        }
    )
    pq.write_table(table, tmp_path / "a.parquet", row_group_size=1)
    orc.write_table(table.drop(["name", "u"]), tmp_path / "a.orc")
    read = parse_s3_read({"paths": [str(tmp_path)]}, "parquet", {})
    schema = file_schema(read, str(tmp_path / "a.parquet"))
    assert schema.simpleString() == "struct<k:int,u:bigint,name:string,at:timestamp>"
    _, got = rows(read, [str(tmp_path / "a.parquet")], schema)
    assert [r["k"] for r in got] == [1, 2] and got[1]["u"] == 8 and got[0]["name"] == "a"
    assert got[0]["at"] == dt.datetime(2026, 1, 1, 12, tzinfo=dt.timezone.utc)
    read_orc = parse_s3_read({"paths": [str(tmp_path)]}, "orc", {})
    orc_schema = file_schema(read_orc, str(tmp_path / "a.orc"))
    assert orc_schema.names == ["k", "at"]
    assert [r["k"] for r in rows(read_orc, [str(tmp_path / "a.orc")], orc_schema)[1]] == [1, 2]


AVRO_SCHEMA = {
    "type": "record",
    "name": "r",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "micros", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {
            "name": "price",
            "type": {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2},
        },
        {"name": "note", "type": ["null", "string"]},
    ],
}


def test_avro_logical_types_are_read_as_glue_s_version_1_7_or_1_8_reads_them(tmp_path):
    at = dt.datetime(2026, 4, 9, 7, 5, tzinfo=dt.timezone.utc)
    record = {
        "id": 1,
        "day": dt.date(1970, 1, 11),
        "at": at,
        "micros": at,
        "price": Decimal("1.25"),
        "note": None,
    }
    with open(tmp_path / "a.avro", "wb") as out:
        fastavro.writer(out, fastavro.parse_schema(AVRO_SCHEMA), [record])
    path = str(tmp_path / "a.avro")
    v17 = parse_s3_read({"paths": [path]}, "avro", {})
    schema = file_schema(v17, path)
    assert schema.simpleString() == (
        "struct<id:bigint,day:int,at:bigint,micros:bigint,price:binary,note:string>"
    )
    millis = int(at.timestamp() * 1000)
    assert rows(v17, [path], schema)[1] == [
        {
            "id": 1,
            "day": 10,
            "at": millis,
            "micros": millis * 1000,
            "price": (125).to_bytes(1, "big"),
            "note": None,
        }
    ]
    v18 = parse_s3_read({"paths": [path]}, "avro", {"version": "1.8"})
    schema = file_schema(v18, path)
    assert schema.simpleString() == (
        "struct<id:bigint,day:date,at:timestamp,micros:bigint,price:decimal(9,2),note:string>"
    )
    assert rows(v18, [path], schema)[1][0]["price"] == Decimal("1.25")


def test_a_bad_line_or_corrupt_file_is_counted_and_left_out_unless_fail_fast(tmp_path, caplog):
    good, bad, broken = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "c.csv.gz"
    good.write_text('{"id": 1}\n')
    bad.write_text('{"id": 2}\n{"id": \n{"id": 3}\n')
    broken.write_bytes(gzip.compress(b"id\n4\n5\n")[:-12])  # cut short
    read = parse_s3_read({"paths": [str(tmp_path)]}, "json", {})
    schema = merge_summaries(read, [infer_files(read, [str(good)])])
    with caplog.at_level(logging.WARNING):
        got = [
            r
            for b in read_files(read, schema, [str(good), str(bad)], [0, 0])
            for r in b.to_pylist()
        ]
    assert got == [{"id": 1}, {"id": 2}, {"id": 3}]
    assert (
        f"{bad} line 2 is not JSON" in caplog.text and "'lines that are not JSON': 1" in caplog.text
    )
    strict = parse_s3_read({"paths": [str(tmp_path)], "isFailFast": True}, "json", {})
    with pytest.raises(FileUnreadable, match=r"b\.json line 2 is not JSON"):
        list(read_files(strict, schema, [str(bad)], [0]))
    csv_read = parse_s3_read({"paths": [str(tmp_path)]}, "csv", {"withHeader": True})
    with caplog.at_level(logging.WARNING):
        assert infer_files(csv_read, [str(broken)])["counts"] == {
            "files whose rest could not be read": 1
        }
    assert f"{broken}: the rest of the file cannot be read as csv" in caplog.text
    with pytest.raises(OSError):  # a file that cannot be opened fails the task
        list(read_files(read, schema, [str(tmp_path / "gone.json")], [0]))


def test_partition_folders_and_the_file_s_name_and_time_are_columns(tmp_path):
    folder = tmp_path / "region=eu" / "day=__HIVE_DEFAULT_PARTITION__"
    folder.mkdir(parents=True)
    (folder / "a.csv").write_text("x\n1\n")
    assert partition_values(str(folder / "a.csv"), ("region", "day", "nope")) == {
        "region": "eu",
        "day": None,
        "nope": None,
    }
    read = parse_s3_read(
        {"paths": [str(tmp_path)], "attachFilename": "file", "attachTimestamp": "at"},
        "csv",
        {"withHeader": True},
    )
    from pyspark.sql.types import StringType, StructField, StructType, TimestampType

    schema = StructType(
        [
            *merge_summaries(read, [infer_files(read, [str(folder / "a.csv")])]).fields,
            StructField("file", StringType()),
            StructField("at", TimestampType()),
        ]
    )
    batches = list(read_files(read, schema, [str(folder / "a.csv")], [1_700_000_000_000]))
    (row,) = batches[0].to_pylist()
    assert row["x"] == 1 and row["file"] == str(folder / "a.csv")
    assert row["at"] == dt.datetime(2023, 11, 14, 22, 13, 20, tzinfo=dt.timezone.utc)
    assert pc.sum(batches[0].column("x")).as_py() == 1
