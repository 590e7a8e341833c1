"""The Glue layer's batch sources under hostile input: a lookup file of any bytes (CSV,
JSON lines, a JSON document), Glue's exclusion globs, S3 and DynamoDB options of any
value, DynamoDB attribute values of any shape. Each gives a result, a named error of the
library's, or what it left out counted: never another exception type."""

import os
import tempfile

from hypothesis import given
from hypothesis import strategies as st

from kinesis_dstream.glue.errors import GlueError, NotProvidedError
from kinesis_dstream.glue.frames import dynamodb_types
from kinesis_dstream.glue.sources.dynamodb_options import parse_dynamodb_options
from kinesis_dstream.glue.sources.file_readers import infer_files, merge_summaries, read_files
from kinesis_dstream.glue.sources.s3_listing import glob_regex
from kinesis_dstream.glue.sources.s3_options import parse_s3_read

#: Bytes a CSV or JSON lookup file is made of: the formats' own characters, text, noise.
FILE_BYTES = st.lists(
    st.sampled_from(
        [
            b",",
            b'"',
            b"\n",
            b"\r\n",
            b"{",
            b"}",
            b"[",
            b"]",
            b":",
            b"1",
            b"-2.5",
            b"e9",
            b"true",
            b"null",
            b"\\",
            b"a",
            b"\xff",
            b"\x00",
            b" ",
        ]
    ),
    max_size=60,
).map(b"".join)
OPTION_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.text(max_size=12),
    st.lists(st.text(max_size=6), max_size=3),
)


def read_lookup(fmt: str, body: bytes, format_options: dict) -> list:
    """Every row the two passes read from one file of ``body``."""
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, f"lookup.{fmt}")
        with open(path, "wb") as out:
            out.write(body)
        read = parse_s3_read({"paths": [folder]}, fmt, format_options)
        schema = merge_summaries(read, [infer_files(read, [path])])
        return [r for b in read_files(read, schema, [path], [0]) for r in b.to_pylist()]


@given(FILE_BYTES, st.booleans(), st.booleans())
def test_a_csv_lookup_of_any_bytes_reads_or_counts_what_it_left_out(body, header, multi_line):
    rows = read_lookup("csv", body, {"withHeader": header, "multiLine": multi_line})
    assert isinstance(rows, list)


@given(FILE_BYTES, st.booleans())
def test_a_json_lookup_of_any_bytes_reads_or_counts_what_it_left_out(body, multi_line):
    rows = read_lookup("json", body, {"multiLine": multi_line})
    assert all(isinstance(row, dict) for row in rows)


@given(st.text(max_size=20))
def test_an_exclusion_pattern_of_any_text_is_a_pattern_or_one_named_error(pattern):
    try:
        compiled = glob_regex(pattern)
    except GlueError as exc:
        assert "exclusions" in str(exc) and "\n" not in str(exc)
        return
    compiled.fullmatch("some/key.csv")


S3_KEYS = [
    "paths",
    "recurse",
    "exclusions",
    "compressionType",
    "groupFiles",
    "groupSize",
    "boundedFiles",
    "excludeStorageClasses",
    "attachFilename",
    "maxBand",
    "other",
]
FORMAT_KEYS = ["separator", "quoteChar", "escaper", "withHeader", "jsonPath", "version", "x"]


@given(
    st.dictionaries(st.sampled_from(S3_KEYS), OPTION_VALUES, max_size=6),
    st.sampled_from(["csv", "json", "parquet", "avro", "orc", "xml", "", None]),
    st.dictionaries(st.sampled_from(FORMAT_KEYS), OPTION_VALUES, max_size=4),
)
def test_s3_options_of_any_value_are_a_read_or_one_named_error(connection, fmt, format_options):
    try:
        read = parse_s3_read(connection, fmt, format_options)
    except (GlueError, NotProvidedError) as exc:
        assert "\n" not in str(exc)
        return
    assert read.paths


DYNAMODB_KEYS = [
    "dynamodb.input.tableName",
    "dynamodb.splits",
    "dynamodb.throughput.read.percent",
    "dynamodb.export",
    "dynamodb.tableArn",
    "dynamodb.sts.roleArn",
    "dynamodb.x",
]


@given(st.dictionaries(st.sampled_from(DYNAMODB_KEYS), OPTION_VALUES, max_size=5))
def test_dynamodb_options_of_any_value_are_a_read_or_one_named_error(options):
    try:
        parsed = parse_dynamodb_options(options, "from_options")
    except GlueError as exc:
        assert "\n" not in str(exc)
        return
    assert parsed.access.table


ATTRIBUTES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=8), st.binary(max_size=4)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(
            st.sampled_from((*dynamodb_types.ATTRIBUTE_TYPES, "X")), inner, max_size=2
        ),
    ),
    max_leaves=8,
)


@given(ATTRIBUTES)
def test_an_attribute_value_of_any_shape_is_a_value_or_one_named_error(attribute):
    try:
        value = dynamodb_types.plain(attribute)
    except dynamodb_types.AttributeValueError:
        return
    dynamodb_types.value_type(value)  # a value read is a value typed
