"""The Glue layer's writers as Glue takes them, without Spark: S3 format and connection
options (what is honoured, ignored with a warning, refused), Avro's versions, codecs and
archives, an S3 table's format from its SerDe, the Avro schema of a table defined by its
columns, and enableUpdateCatalog's options."""

import gzip
import io
import json
from decimal import Decimal

import fastavro
import pyarrow as pa
import pytest

from kinesis_dstream.glue.catalog.formats import table_format
from kinesis_dstream.glue.catalog.tables import TableName, catalog_sink, catalog_source_options
from kinesis_dstream.glue.catalog.updates import UpdateBehavior, split_update_options
from kinesis_dstream.glue.errors import GlueError
from kinesis_dstream.glue.sinks.avro_types import columns_avro_schema
from kinesis_dstream.glue.sinks.file_formats import open_file
from kinesis_dstream.glue.sinks.file_stores import LocalStore
from kinesis_dstream.glue.sinks.file_target import FileTarget
from kinesis_dstream.sql.parsing.payload_avro import decode_datum, parse_avro_schema
from kinesis_dstream.sql.parsing.payload_format import PayloadFormat

S3 = {"path": "s3://b/p/"}
NAME = TableName("db", "t")


def test_avro_is_written_as_glue_s_version_1_7_unless_1_8_is_asked_for():
    assert FileTarget.parse(S3, "avro", {}).avro_version == "1.7"
    assert FileTarget.parse(S3, "avro", {"version": "1.8"}).avro_version == "1.8"
    assert FileTarget.parse(S3, "avro", {"version": 1.7}).avro_version == "1.7"
    with pytest.raises(GlueError, match=r"avro format_options version='1.9': Glue writes"):
        FileTarget.parse(S3, "avro", {"version": "1.9"})


def test_a_public_script_s_avro_format_options_compression_gzip_is_accepted_with_a_warning(
    caplog,
):
    """It was refused ("avro format_options ['compression'] is not provided"); Glue's
    Avro writer takes its compression from connection_options and ignores this one."""
    target = FileTarget.parse(S3, "avro", {"compression": "gzip"})
    assert (target.avro_codec, target.compression) == ("null", "none")
    assert [m for m in caplog.messages if "compression='gzip'" in m] == [
        "avro format_options [\"compression='gzip'\"] have no effect here (not an Avro codec "
        "(bzip2, deflate, null, snappy, uncompressed, xz); Glue's Avro writer takes its "
        "compression from connection_options); accepted and ignored"
    ]
    assert FileTarget.parse(S3, "avro", {"compression": "snappy"}).avro_codec == "snappy"


def test_avro_connection_compression_is_a_codec_or_an_archive_as_glue_documents_it():
    codec = {c: FileTarget.parse({**S3, "compression": c}, "avro", {}) for c in ("deflate", "xz")}
    assert [(t.avro_codec, t.compression) for t in codec.values()] == [
        ("deflate", "none"),
        ("xz", "none"),
    ]
    archive = FileTarget.parse({**S3, "compression": "gzip"}, "avro", {})
    assert (archive.avro_codec, archive.compression) == ("null", "gzip")
    with pytest.raises(GlueError, match=r"avro connection_options compression='lzo': one of"):
        FileTarget.parse({**S3, "compression": "lzo"}, "avro", {})


def test_parquet_s_connection_compression_is_ignored_as_glue_s_writer_does(caplog):
    """It was refused; Parquet's compression is format_options' on Glue."""
    target = FileTarget.parse({**S3, "compression": "gzip"}, "parquet", {})
    assert target.compression == "snappy"
    assert any("parquet connection_options ['compression']" in m for m in caplog.messages)


def test_csv_quote_char_minus_one_turns_quoting_off():
    assert FileTarget.parse(S3, "csv", {"quoteChar": -1}).quote is None
    assert FileTarget.parse(S3, "csv", {"quoteChar": "'"}).quote == "'"


def test_csv_takes_every_option_of_aws_s_csv_page_and_warns_of_the_read_ones(caplog):
    """escaper (a read option, "used only when reading" on AWS's page) made the writer
    escape quotes with it; Glue doubles them. Read options are named, never refused."""
    options = {
        "separator": "|",
        "quoteChar": '"',
        "escaper": "\\",
        "writeHeader": False,
        "strictCheckForQuoting": True,
        "withHeader": True,
        "multiLine": True,
        "skipFirst": False,
        "optimizePerformance": True,
    }
    target = FileTarget.parse(S3, "csv", options)
    assert (target.separator, target.quote, target.header) == ("|", '"', False)
    assert not hasattr(target, "escape")  # quotes are doubled: there is no escape character
    assert [m for m in caplog.messages if m.startswith("csv format_options")] == [
        "csv format_options ['multiLine', 'optimizePerformance', 'skipFirst', 'withHeader'] "
        "have no effect here (AWS documents them for reading CSV; a write ignores them); "
        "accepted and ignored",
        "csv format_options [\"escaper='\\\\\\\\'\"] have no effect here (AWS documents "
        "escaper for reading only; a quote inside a value is written doubled, as RFC 4180); "
        "accepted and ignored",
    ]
    caplog.clear()
    FileTarget.parse(S3, "csv", {"escaper": "", "quoteChar": '"'})  # Glue Studio's empty one
    FileTarget.parse(S3, "csv", {"escaper": '"'})  # the quote itself: doubling
    assert not [m for m in caplog.messages if "escaper" in m]


@pytest.mark.parametrize(
    "options, message",
    [
        ({"quoteChar": "ab"}, r"quoteChar='ab': one character, or -1 for no quoting"),
        ({"separator": ""}, r"separator='': give the delimiter character"),
    ],
)
def test_a_csv_option_the_files_cannot_be_made_with_is_one_line(options, message):
    with pytest.raises(GlueError, match=message):
        FileTarget.parse(S3, "csv", options)


@pytest.mark.parametrize(
    "codec, compression", [("snappy", "none"), ("deflate", "none"), ("null", "gzip")]
)
def test_avro_files_carry_their_codec_or_are_gzip_archives(tmp_path, codec, compression):
    batch = pa.record_batch({"id": pa.array([1, 2], pa.int64()), "s": ["a", None]})
    output = LocalStore(str(tmp_path)).open("f.avro")
    writer = open_file(
        "avro", output, batch.schema, {"avro_codec": codec, "compression": compression}
    )
    writer.write(batch)
    writer.close()
    body = (tmp_path / "f.avro").read_bytes()
    if compression == "gzip":
        body = gzip.decompress(body)
    reader = fastavro.reader(io.BytesIO(body))
    assert reader.codec == codec
    assert [(r["id"], r["s"]) for r in reader] == [(1, "a"), (2, None)]


ATHENA_PARQUET = {
    "StorageDescriptor": {
        "Location": "s3://b/events/",
        "InputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
        "SerdeInfo": {
            "SerializationLibrary": "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"
        },
    },
    "PartitionKeys": [{"Name": "day", "Type": "string"}],
}


def test_a_table_without_classification_is_written_in_its_serde_s_format():
    """An Athena DDL Parquet table (no classification) was written as JSON."""
    kind, options, fmt, _ = catalog_sink(ATHENA_PARQUET, NAME, {})
    assert (kind, options["path"], options["partitionKeys"], fmt) == (
        "s3",
        "s3://b/events/",
        ["day"],
        "parquet",
    )

    def serde(library, input_format=""):
        storage = {"SerdeInfo": {"SerializationLibrary": library}, "InputFormat": input_format}
        return table_format({"StorageDescriptor": storage})

    assert serde("org.apache.hadoop.hive.serde2.OpenCSVSerde") == "csv"
    assert serde("org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe") == "csv"
    assert serde("org.openx.data.jsonserde.JsonSerDe") == "json"
    assert serde("org.apache.hive.hcatalog.data.JsonSerDe") == "json"
    assert serde("org.apache.hadoop.hive.serde2.avro.AvroSerDe") == "avro"
    assert serde("x", "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat") == "orc"
    assert serde("") == "json"
    with_classification = {**ATHENA_PARQUET, "Parameters": {"classification": "csv"}}
    assert table_format(with_classification) == "csv"


def test_a_kinesis_avro_table_defined_by_its_columns_reads_with_glue_s_record_schema():
    """It failed with "classification avro needs option schema"."""
    columns = [
        {"Name": "id", "Type": "bigint"},
        {"Name": "name", "Type": "string"},
        {"Name": "price", "Type": "decimal(10,2)"},
        {"Name": "tags", "Type": "array<string>"},
        {"Name": "inner", "Type": "struct<p:int,q:map<string,double>>"},
    ]
    table = {
        "Parameters": {"classification": "avro"},
        "StorageDescriptor": {
            "Columns": columns,
            "Parameters": {"typeOfData": "kinesis", "streamName": "s"},
        },
    }
    options = catalog_source_options(table, NAME, {})
    schema = json.loads(options["schema"])
    assert schema == json.loads(columns_avro_schema(columns))
    payload = PayloadFormat.parse("avro", schema_text=options["schema"])
    assert payload.avro_struct().names == ["id", "name", "price", "tags", "inner"]
    record = {
        "id": 7,
        "name": "x",
        "price": Decimal("12.30"),
        "tags": ["a"],
        "inner": {"p": 1, "q": {"k": 0.5}},
    }
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(schema), record)
    # the source's decoder reads what a producer wrote with that schema
    assert decode_datum(parse_avro_schema(payload.avro_text()), out.getvalue()) == record
    # a table naming its schema (avroSchema, a registry) keeps it
    table["Parameters"]["avroSchema"] = '{"type": "record", "name": "r", "fields": []}'
    assert "schema" not in catalog_source_options(table, NAME, {})
    with pytest.raises(GlueError, match=r"column 'bad': type 'uniontype<int>' has no Avro type"):
        columns_avro_schema([{"Name": "bad", "Type": "uniontype<int>"}])


def test_enable_update_catalog_and_update_behavior_are_the_catalog_s_options():
    rest, behavior = split_update_options(
        {"enableUpdateCatalog": True, "partitionKeys": ["a"], "path": "s3://b/"}
    )
    assert (rest, behavior) == (
        {"partitionKeys": ["a"], "path": "s3://b/"},
        UpdateBehavior.UPDATE_IN_DATABASE,
    )
    assert split_update_options({"enableUpdateCatalog": "true", "updateBehavior": "log"})[1] is (
        UpdateBehavior.LOG
    )
    assert split_update_options({"updateBehavior": "LOG"}) == ({}, None)
    with pytest.raises(GlueError, match="option updateBehavior='MERGE': one of"):
        split_update_options({"enableUpdateCatalog": True, "updateBehavior": "MERGE"})
