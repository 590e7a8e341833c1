"""The Glue layer's batch sources' options without Spark or AWS: S3 connection and format
options (honoured, accepted with a warning, refused in one line), Glue's exclusion globs,
the listing of local folders and its groups, DynamoDB's options and their read plan, and
the catalog tables a crawler makes over S3 files and DynamoDB tables."""

import logging
import os

import pytest

from kinesis_dstream.glue.catalog.batch_tables import batch_table, is_dynamodb_table
from kinesis_dstream.glue.catalog.tables import TableName
from kinesis_dstream.glue.errors import GlueError, NotProvidedError
from kinesis_dstream.glue.sinks import file_target
from kinesis_dstream.glue.sources.dynamodb_options import (
    DynamoDBRead,
    parse_dynamodb_options,
    planned_read,
    table_of_arn,
)
from kinesis_dstream.glue.sources.s3_listing import (
    FileEntry,
    file_groups,
    glob_regex,
    is_excluded,
    is_hidden,
    is_hidden_below,
    list_files,
)
from kinesis_dstream.glue.sources.s3_options import (
    AUTO_GROUP_FILES,
    CsvFormat,
    S3Read,
    parse_s3_read,
)

NAME = TableName("lookups", "t")
ARN = "arn:aws:dynamodb:eu-west-1:123456789012:table/priorities"


@pytest.fixture(autouse=True)
def warnings_again():
    """The layer names an ignored option once a process: each test sees its own."""
    file_target._warned.clear()
    yield
    file_target._warned.clear()


def test_glue_s_csv_lookup_options_are_read_as_glue_documents_them():
    read = parse_s3_read(
        {"paths": ["s3://b/countries/"], "recurse": True, "exclusions": '["**.pdf", "tmp/*"]'},
        "csv",
        {
            "withHeader": True,
            "separator": "|",
            "quoteChar": "'",
            "escaper": "\\",
            "multiline": "true",
        },
    )
    assert read.paths == ("s3://b/countries/",) and read.fmt == "csv" and read.recurse
    assert read.exclusions == ("**.pdf", "tmp/*")
    assert read.csv == CsvFormat("|", "'", "\\", multi_line=True, with_header=True)
    assert S3Read.from_json(read.to_json()) == read  # the plan travels as JSON
    off = parse_s3_read({"paths": "s3://b/x.csv"}, "csv", {"quoteChar": -1, "skipFirst": "true"})
    assert off.paths == ("s3://b/x.csv",) and off.csv.quote is None and off.csv.skip_first
    assert not off.recurse and off.csv.escape is None and not off.csv.with_header


def test_what_would_change_the_records_is_refused_in_one_line_at_the_call():
    cases = [
        ({}, "csv", {}, "'paths' is required"),
        ({"paths": ["s3://b/"]}, "csv", {"separator": "||"}, "separator='||': one character"),
        ({"paths": ["s3://b/"]}, "json", {"jsonPath": "$..id"}, "jsonPath='$..id'"),
        ({"paths": ["s3://b/"]}, "avro", {"version": "1.9"}, "version='1.9'"),
        ({"paths": ["s3://b/"], "compressionType": "lzo"}, "csv", {}, "compressionType='lzo'"),
        ({"paths": ["s3://b/"], "groupFiles": "all"}, "csv", {}, "groupFiles='all'"),
        ({"paths": ["s3://b/"], "boundedFiles": "0"}, "csv", {}, "boundedFiles='0'"),
        ({"paths": ["s3://b/"], "exclusions": "[broken"}, "csv", {}, "not a JSON list"),
    ]
    for connection, fmt, format_options, message in cases:
        with pytest.raises(GlueError, match=message.replace("$", r"\$").replace("|", r"\|")) as e:
            parse_s3_read(connection, fmt, format_options)
        assert "\n" not in str(e.value)
    with pytest.raises(GlueError, match="reading s3 files needs format="):
        parse_s3_read({"paths": ["s3://b/"]}, None, {})
    with pytest.raises(NotProvidedError, match="reading s3 files in format 'xml' is not provided"):
        parse_s3_read({"paths": ["s3://b/"]}, "xml", {})


def test_options_that_change_nothing_read_are_accepted_and_named_once(caplog):
    options = {"paths": ["s3://b/"], "maxBand": 900000, "useS3ListImplementation": True}
    with caplog.at_level(logging.WARNING):
        for _ in range(3):  # a lookup read again every batch: named once
            read = parse_s3_read(options, "csv", {"optimizePerformance": True, "writeHeader": 1})
    assert read.fmt == "csv"
    lines = [r.getMessage() for r in caplog.records]
    assert sum("maxBand" in line for line in lines) == 1
    assert sum("useS3ListImplementation" in line for line in lines) == 1
    assert sum("optimizePerformance" in line for line in lines) == 1


def test_options_that_change_nothing_are_named_whatever_the_case_of_their_names(caplog):
    # every other option is found whatever its case: these must not go unnamed
    with caplog.at_level(logging.WARNING):
        parse_s3_read({"paths": ["s3://b/"], "maxband": 9}, "csv", {"optimizeperformance": 1})
    lines = [r.getMessage() for r in caplog.records]
    assert [line for line in lines if "'maxband'" in line and "job bookmark" in line]
    assert [line for line in lines if "'optimizeperformance'" in line and "do not change" in line]


def test_json_paths_select_keys_down_to_the_records():
    assert parse_s3_read({"paths": ["s3://b/"]}, "json", {}).json.path == ()
    nested = parse_s3_read({"paths": ["s3://b/"]}, "json", {"jsonPath": "$.data['the items'][*]"})
    assert nested.json.path == ("data", "the items")
    assert parse_s3_read({"paths": ["s3://b/"]}, "glueparquet", {}).fmt == "parquet"


def test_glue_s_globs_exclude_as_the_crawlers_document_them():
    assert glob_regex("*.csv").fullmatch("a.csv") and not glob_regex("*.csv").fullmatch("d/a.csv")
    assert glob_regex("**.csv").fullmatch("d/e/a.csv")
    assert glob_regex("{2024,2025}/*").fullmatch("2025/x") and not glob_regex("{a,b}").fullmatch(
        "c"
    )
    assert glob_regex("[!a]?.txt").fullmatch("bz.txt") and not glob_regex("[!a]?.txt").fullmatch(
        "az.txt"
    )
    assert glob_regex(r"\*.txt").fullmatch("*.txt") and not glob_regex(r"\*.txt").fullmatch("a.txt")
    base = "s3://b/lookups"
    assert is_excluded(("**.pdf",), base, "s3://b/lookups/x/y.pdf")
    assert is_excluded(("tmp/**",), base, "s3://b/lookups/tmp/a.csv")  # below the path given
    assert is_excluded(("s3://b/lookups/old/**",), base, "s3://b/lookups/old/a.csv")  # the URL
    assert not is_excluded(("*.pdf",), base, "s3://b/lookups/x/y.pdf")  # * stays in a folder
    with pytest.raises(GlueError, match="unclosed"):
        glob_regex("{a,b")
    assert is_hidden("_SUCCESS") and is_hidden(".part.crc") and is_hidden("x_$folder$")
    assert not is_hidden("part-0.csv")
    assert is_hidden_below("_spark_metadata/0") and is_hidden_below("a/.hidden/x.csv")
    assert is_hidden_below("_temporary/0/_temporary/attempt_1/part-1.json")
    assert is_hidden_below("sub/") and not is_hidden_below("sub/part-0.csv")


def make_tree(root, files):
    for name, body in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body)


def test_a_local_folder_is_listed_as_glue_lists_s3_hidden_files_excluded_and_bounded(tmp_path):
    make_tree(
        tmp_path,
        {
            "a.csv": "1",
            "b.csv": "22",
            "_SUCCESS": "",
            "sub/c.csv": "333",
            "sub/d.pdf": "x",
            "_spark_metadata/0": "{}",
            "_temporary/0/part-1.csv": "4",
            "sub/.hidden/e.csv": "5",
        },
    )
    names = lambda files: [os.path.relpath(f.path, tmp_path) for f in files]  # noqa: E731
    flat = list_files(parse_s3_read({"paths": [str(tmp_path)]}, "csv", {}))
    assert names(flat) == ["a.csv", "b.csv"] and flat[1].size == 2
    deep = parse_s3_read(
        {"paths": [f"file://{tmp_path}/"], "recurse": True, "exclusions": ["**.pdf"]}, "csv", {}
    )
    assert names(list_files(deep)) == ["a.csv", "b.csv", os.path.join("sub", "c.csv")]
    one = list_files(parse_s3_read({"paths": [str(tmp_path / "b.csv")]}, "csv", {}))
    assert names(one) == ["b.csv"]
    bounded = parse_s3_read(
        {"paths": [str(tmp_path)], "recurse": True, "boundedSize": 4}, "csv", {}
    )
    assert names(list_files(bounded)) == ["a.csv", "b.csv"]  # 1 + 2 bytes; 3 more: past 4
    assert (
        len(list_files(parse_s3_read({"paths": [str(tmp_path)], "boundedFiles": 1}, "csv", {})))
        == 1
    )
    with pytest.raises(GlueError, match="does not exist"):
        list_files(parse_s3_read({"paths": [str(tmp_path / "nope")]}, "csv", {}))


def test_files_are_a_task_each_unless_grouped_as_glue_groups_them():
    files = [FileEntry(f"s3://b/{i}", 40, 0) for i in range(5)]
    assert file_groups(files, S3Read(("s3://b/",), "csv")) == [[f] for f in files]
    grouped = S3Read(("s3://b/",), "csv", grouping="inpartition", group_bytes=100)
    assert [len(g) for g in file_groups(files, grouped)] == [2, 2, 1]
    many = [FileEntry(f"s3://b/{i}", 1, 0) for i in range(AUTO_GROUP_FILES + 1)]
    assert len(file_groups(many, S3Read(("s3://b/",), "csv"))) == 1  # past 50,000: grouped
    none = S3Read(("s3://b/",), "csv", grouping="none")
    assert len(file_groups(many, none)) == len(many)


def test_dynamodb_s_documented_read_options_plan_a_paced_parallel_scan():
    options = parse_dynamodb_options(
        {
            "dynamodb.input.tableName": "priorities",
            "dynamodb.throughput.read.percent": "1.0",
            "dynamodb.splits": "4",
            "dynamodb.sts.roleArn": "arn:aws:iam::1:role/reader",
            "dynamodb.region": "eu-west-1",
        },
        "from_options",
    )
    access = options.access
    assert (access.table, options.splits, access.region) == ("priorities", 4, "eu-west-1")
    assert access.role_session_name == "glue-dynamodb-read-sts-session"  # Glue's default
    provisioned = {"ProvisionedThroughput": {"ReadCapacityUnits": 100}}
    read = planned_read(options, provisioned, default_splits=2)
    assert read.segments == 4 and read.segment_units_per_s == 25.0  # 100 units, 1.0, 4 ways
    assert DynamoDBRead.from_json(read.to_json()) == read
    on_demand = {"BillingModeSummary": {"BillingMode": "PAY_PER_REQUEST"}}
    default = parse_dynamodb_options({"dynamodb.input.tableName": "t"}, "from_options")
    plan = planned_read(default, on_demand, default_splits=2)
    # Glue's on-demand capacity (40,000) at the default 0.5, over Spark's parallelism
    assert plan.segments == 2 and plan.segment_units_per_s == 10_000.0
    spec = read.client_spec()
    assert spec.region_name == "eu-west-1" and spec.credentials.role_arn.endswith("role/reader")


def test_dynamodb_options_out_of_glue_s_ranges_are_one_line_each():
    for options, message in [
        ({}, "'dynamodb.input.tableName' is required"),
        ({"dynamodb.input.tableName": "t", "dynamodb.throughput.read.percent": "x"}, "a number"),
        ({"dynamodb.input.tableName": "t", "dynamodb.splits": "0"}, "from 1 to 1,000,000"),
        ({"dynamodb.export": "ddb"}, "needs dynamodb.tableArn"),
        (
            {"dynamodb.export": "s3", "dynamodb.tableArn": "arn:aws:s3:::b"},
            "not a DynamoDB table ARN",
        ),
    ]:
        with pytest.raises(GlueError, match=message) as e:
            parse_dynamodb_options(options, "from_options")
        assert "\n" not in str(e.value)


def test_the_export_connector_is_read_with_a_scan_in_the_export_s_shape(caplog):
    with caplog.at_level(logging.WARNING):
        export = parse_dynamodb_options(
            {"dynamodb.export": "ddb", "dynamodb.tableArn": ARN, "dynamodb.s3.bucket": "b"}, "x"
        )
    assert (export.access.table, export.access.region, export.ddb_json) == (
        "priorities",
        "eu-west-1",
        True,
    )
    assert "parallel Scan, not exported to S3" in caplog.text
    unnested = parse_dynamodb_options(
        {"dynamodb.export": "s3", "dynamodb.tableArn": ARN, "dynamodb.unnestDDBJson": True}, "x"
    )
    assert not unnested.ddb_json
    assert table_of_arn(ARN) == ("eu-west-1", "priorities")


def crawler_table(location, params, columns=(), serde=None, keys=()):
    """A table as Glue's crawler writes it (StorageDescriptor and table Parameters)."""
    return {
        "Name": "t",
        "Parameters": params,
        "PartitionKeys": [{"Name": k, "Type": t} for k, t in keys],
        "StorageDescriptor": {
            "Columns": [{"Name": n, "Type": t} for n, t in columns],
            "Location": location,
            "Parameters": params,
            "SerdeInfo": {"Parameters": serde or {}},
        },
    }


def test_a_crawler_s_dynamodb_table_reads_the_table_its_arn_names():
    table = crawler_table(
        ARN,
        {"classification": "dynamodb", "hashKey": "id", "typeOfData": "table"},
        [("id", "string"), ("priority", "bigint"), ("tags", "set<string>")],
    )
    assert is_dynamodb_table(table)
    source = batch_table(table, NAME, {"dynamodb.splits": "8"})
    assert source.connection_type == "dynamodb"
    assert source.connection_options == {
        "dynamodb.region": "eu-west-1",
        "dynamodb.input.tableName": "priorities",
        "dynamodb.splits": "8",
    }
    by_name = batch_table(crawler_table("priorities", {"classification": "dynamodb"}), NAME, {})
    assert by_name.connection_options == {"dynamodb.input.tableName": "priorities"}


def test_a_crawler_s_csv_table_reads_its_location_with_its_serde_and_header():
    table = crawler_table(
        "s3://b/countries/",
        {"classification": "csv", "skip.header.line.count": "1"},
        [("code", "string")],
        {"field.delim": ";"},
        keys=[("year", "int")],
    )
    source = batch_table(table, NAME, {"groupFiles": "none", "multiLine": True})
    assert (source.connection_type, source.format) == ("s3", "csv")
    assert source.connection_options == {
        "paths": ["s3://b/countries/"],
        "recurse": True,
        "groupFiles": "none",
    }
    assert source.format_options == {"separator": ";", "withHeader": True, "multiLine": True}
    assert source.partition_keys == (("year", "int"),)
    kinesis = crawler_table("", {"typeOfData": "kinesis", "streamName": "s"})
    with pytest.raises(GlueError, match="is a Kinesis table"):
        batch_table(kinesis, NAME, {})
    with pytest.raises(GlueError, match="has no Location"):
        batch_table(crawler_table("", {"classification": "json"}), NAME, {})
