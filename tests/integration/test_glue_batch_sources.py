"""The Glue layer's batch sources against moto's S3, DynamoDB and Glue (no Spark: a task's
work is called as a Spark task calls it, with the library's clients and pyarrow's S3
filesystem): S3 listed as Glue lists it, objects read through pyarrow, a DynamoDB table
scanned in segments at a pace and past throttling, and crawler-shaped catalog tables."""

import dataclasses
import gzip
import io
import json
import logging

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql.types import StructType

from kinesis_dstream.aws import ClientSpec
from kinesis_dstream.glue.catalog.batch_tables import batch_table
from kinesis_dstream.glue.catalog.tables import TableName, get_table
from kinesis_dstream.glue.dynamodb_connection import TableAccess, describe_table
from kinesis_dstream.glue.errors import GlueError
from kinesis_dstream.glue.frames.dynamodb_types import merge_items
from kinesis_dstream.glue.sources.dynamodb_options import parse_dynamodb_options, planned_read
from kinesis_dstream.glue.sources.dynamodb_scan import (
    infer_segment,
    read_segment,
    scan_segment,
)
from kinesis_dstream.glue.sources.file_readers import (
    file_schema,
    infer_files,
    merge_summaries,
    read_files,
)
from kinesis_dstream.glue.sources.s3_listing import list_files
from kinesis_dstream.glue.sources.s3_options import parse_s3_read
from kinesis_dstream.token_bucket import TokenBucket

from ..support.faults import CallErrors
from ..support.glue import create_crawler_dynamodb_table, create_dynamodb_table


@pytest.fixture
def aws_env(local_aws, monkeypatch):
    """The local AWS as the SDK's default, as on an executor under `glue run --local`."""
    for key, value in local_aws.env().items():
        monkeypatch.setenv(key, value)
    return local_aws


@pytest.fixture
def bucket(aws_env, unique_name):
    name = unique_name.lower()
    ClientSpec("s3").client().create_bucket(Bucket=name)
    return name


def put(bucket, key, body, **kwargs):
    ClientSpec("s3").client().put_object(Bucket=bucket, Key=key, Body=body, **kwargs)


def test_s3_paths_are_listed_as_glue_lists_them(bucket):
    for key in (
        "l/a.csv",
        "l/b.csv",
        "l/_SUCCESS",
        "l/sub/c.csv",
        "l/sub/d.pdf",
        "l/sub/",
        "lx/e.csv",
    ):
        put(bucket, key, b"x")
    put(bucket, "l/cold.csv", b"x", StorageClass="GLACIER")

    def keys(options):
        return [f.path.split("/", 3)[3] for f in list_files(parse_s3_read(options, "csv", {}))]

    base = f"s3://{bucket}/l"
    assert keys({"paths": [base]}) == ["l/a.csv", "l/b.csv", "l/cold.csv"]  # not lx/, not sub/
    assert keys(
        {
            "paths": [base + "/"],
            "recurse": True,
            "exclusions": '["**.pdf"]',
            "excludeStorageClasses": ["GLACIER"],
        }
    ) == ["l/a.csv", "l/b.csv", "l/sub/c.csv"]
    assert keys({"paths": [f"{base}/sub/c.csv"]}) == ["l/sub/c.csv"]  # an object named
    for key in ("l/_spark_metadata/0", "l/_temporary/0/_temporary/t/p.csv", "l/.h/x.csv"):
        put(bucket, key, b"x")  # a folder named as Hadoop hides: its files are not data
    assert keys({"paths": [base], "recurse": True}) == [
        "l/a.csv",
        "l/b.csv",
        "l/cold.csv",
        "l/sub/c.csv",
        "l/sub/d.pdf",
    ]
    assert keys({"paths": [f"{base}/.h"]}) == ["l/.h/x.csv"]  # the path given is read
    assert keys({"paths": [f"{base}/_temporary/"], "recurse": True}) == []  # hidden below it
    assert keys({"paths": [f"s3a://{bucket}/l/sub"]}) == ["l/sub/c.csv", "l/sub/d.pdf"]
    with pytest.raises(GlueError, match="bucket 'no-such-bucket-x' does not exist") as e:
        list_files(parse_s3_read({"paths": ["s3://no-such-bucket-x/"]}, "csv", {}))
    assert "\n" not in str(e.value)


def test_s3_objects_are_read_through_pyarrow_s_filesystem_compressed_or_not(bucket):
    put(bucket, "c/a.csv", b"code,name\nFR,France\n")
    put(bucket, "c/b.csv.gz", gzip.compress(b"code,name\nDE,Germany\n"))
    put(bucket, "c/plain", b"code,name\nUS,United States\n")
    read = parse_s3_read({"paths": [f"s3://{bucket}/c/"]}, "csv", {"withHeader": True})
    files = list_files(read)
    paths, times = [f.path for f in files], [f.modified_ms for f in files]
    schema = merge_summaries(read, [infer_files(read, paths)])
    got = [r for b in read_files(read, schema, paths, times) for r in b.to_pylist()]
    assert sorted(r["code"] for r in got) == ["DE", "FR", "US"]
    buffer = io.BytesIO()
    pq.write_table(pa.table({"k": [1, 2, 3], "v": ["a", "b", "c"]}), buffer, row_group_size=2)
    put(bucket, "p/a.parquet", buffer.getvalue())
    parquet = parse_s3_read({"paths": [f"s3://{bucket}/p/"]}, "parquet", {})
    path = f"s3://{bucket}/p/a.parquet"
    schema = file_schema(parquet, path)  # the footer, by ranged reads
    assert schema.simpleString() == "struct<k:bigint,v:string>"
    got = [r for b in read_files(parquet, schema, [path], [0]) for r in b.to_pylist()]
    assert got == [{"k": 1, "v": "a"}, {"k": 2, "v": "b"}, {"k": 3, "v": "c"}]
    with pytest.raises(OSError):  # listed, then deleted: the task fails naming it
        list(read_files(read, schema, [f"s3://{bucket}/c/deleted.csv"], [0]))


@pytest.fixture
def table(aws_env, unique_name):
    client = ClientSpec("dynamodb").client()
    name = unique_name
    items = []
    for i in range(60):
        item = {"id": {"S": f"c{i}"}, "priority": {"N": str(i % 5)}}
        if i % 2:
            item["labels"] = {"SS": ["x", f"y{i}"]}
        items.append(item)
    create_dynamodb_table(client, name, "id", items)
    return client, name


def test_a_table_is_scanned_in_segments_each_item_once_and_typed(table):
    _, name = table
    options = parse_dynamodb_options(
        {"dynamodb.input.tableName": name, "dynamodb.splits": "3"}, "from_options"
    )
    read = planned_read(options, describe_table(options.access, "x"), default_splits=2)
    assert read.segments == 3
    parts = [infer_segment(read, s) for s in range(read.segments)]
    assert sum(p["items"] for p in parts) == 60
    schema = StructType([])
    for part in parts:
        schema = merge_items(schema, StructType.fromJson(json.loads(part["struct"])))
    assert schema.simpleString() == "struct<id:string,priority:bigint,labels:array<string>>"
    rows = [r for s in range(3) for b in read_segment(read, schema, s) for r in b.to_pylist()]
    assert sorted(r["id"] for r in rows) == sorted(f"c{i}" for i in range(60))
    by_id = {r["id"]: r for r in rows}
    assert by_id["c7"] == {"id": "c7", "priority": 2, "labels": ["x", "y7"]}
    assert by_id["c8"]["labels"] is None


def test_what_items_changed_since_the_columns_lose_is_counted_in_one_warning(
    aws_env, unique_name, caplog
):
    """Between the columns' Scan and the read's, an item gains an attribute, another's
    nested list and map change type: nothing silently dropped (the library's rule)."""
    client = ClientSpec("dynamodb").client()
    create_dynamodb_table(
        client,
        unique_name,
        "id",
        [{"id": {"S": "a"}, "m": {"M": {"k": {"N": "1"}}}, "l": {"L": [{"N": "1"}]}}],
    )
    options = parse_dynamodb_options({"dynamodb.input.tableName": unique_name}, "x")
    read = planned_read(options, describe_table(options.access, "x"), default_splits=1)
    schema = StructType.fromJson(json.loads(infer_segment(read, 0)["struct"]))
    assert schema.simpleString() == "struct<id:string,m:struct<k:bigint>,l:array<bigint>>"
    export = dataclasses.replace(read, ddb_json=True)  # the export's shape, one Item struct
    export_schema = StructType.fromJson(json.loads(infer_segment(export, 0)["struct"]))
    client.put_item(
        TableName=unique_name,
        Item={
            "id": {"S": "b"},
            "m": {"M": {"k": {"S": "text"}, "added": {"N": "2"}}},
            "l": {"L": [{"N": "2"}, {"S": "x"}]},
            "new": {"S": "attribute"},
        },
    )
    with caplog.at_level(logging.WARNING):
        rows = [r for b in read_segment(read, schema, 0) for r in b.to_pylist()]
    assert sorted(rows, key=lambda r: r["id"])[1] == {"id": "b", "m": {"k": None}, "l": [2, None]}
    (line,) = [m for m in caplog.messages if f"DynamoDB table {unique_name}, segment 0" in m]
    assert "'attributes with no column (not read)': 1" in line
    assert "'m: nested values that did not fit their type (null)': 1" in line
    assert "'m: nested attributes not in their struct (left out)': 1" in line
    assert "'l: nested values that did not fit their type (null)': 1" in line
    assert line.endswith("; attributes not in the columns: new")
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        assert len([r for b in read_segment(export, export_schema, 0) for r in b.to_pylist()]) == 2
    assert "'attributes with no column (not read)': 1" in caplog.text


def test_a_scan_keeps_its_pace_and_gets_past_throttling(table):
    _, name = table
    read = planned_read(
        parse_dynamodb_options({"dynamodb.input.tableName": name, "dynamodb.splits": "1"}, "x"),
        {"ProvisionedThroughput": {"ReadCapacityUnits": 2}},
        default_splits=1,
    )
    assert read.segment_units_per_s == 1.0  # 2 units at Glue's default 0.5
    scans = read.client_spec().client()
    throttled = CallErrors(
        scans,
        "dynamodb",
        "Scan",
        lambda n: "ProvisionedThroughputExceededException" if n < 2 else None,
    )
    slept: list = []
    now = [0.0]

    def sleep(seconds):
        slept.append(seconds)
        now[0] += seconds

    pace = TokenBucket(read.segment_units_per_s, clock=lambda: now[0])
    pages = []

    def small_pages(params, **_):
        params["Limit"] = 10  # pages of 10 items: several pages to pace

    scans.meta.events.register("before-parameter-build.dynamodb.Scan", small_pages)
    try:
        for page in scan_segment(read, 0, sleep=sleep, pace=pace):
            pages.append(page)
    finally:
        scans.meta.events.unregister("before-parameter-build.dynamodb.Scan", small_pages)
        throttled.remove()
    assert throttled.injected == 2  # retried with the library's backoff
    assert sum(len(p) for p in pages) == 60 and len(pages) >= 6
    # a unit a page (moto's answer) at a unit a second: the first page from the bucket's
    # second, then a second before each further page (none after the last)
    assert slept == [1.0] * (len(pages) - 2)


def test_a_missing_table_is_one_line_naming_it(aws_env):
    with pytest.raises(GlueError, match="DynamoDB table 'no_such_table' does not exist") as e:
        describe_table(TableAccess("no_such_table"), "reading DynamoDB table no_such_table")
    assert "\n" not in str(e.value) and f"(endpoint {aws_env.endpoint_url}" in str(e.value)


def test_a_table_of_another_account_is_described_and_read_with_the_role(aws_env, unique_name):
    """moto keeps each account's tables apart: the table the role's account holds is
    found by the read's DescribeTable (with the role, as its Scans) and read."""
    role = "arn:aws:iam::222222222222:role/lookup-reader"
    options = parse_dynamodb_options(
        {"dynamodb.input.tableName": unique_name, "dynamodb.sts.roleArn": role}, "x"
    )
    other_account = options.access.client_spec().client()
    create_dynamodb_table(other_account, unique_name, "id", [{"id": {"S": "a"}}])
    with pytest.raises(GlueError, match="does not exist"):  # not in the job's own account
        describe_table(TableAccess(unique_name), "x")
    described = describe_table(options.access, "x")
    assert described["TableArn"].split(":")[4] == "222222222222"
    read = planned_read(options, described, default_splits=1)
    assert infer_segment(read, 0)["items"] == 1


def test_a_read_honours_dynamodb_endpoint_as_a_write_does(aws_env, dynalite, unique_name):
    """The SDK's default endpoint is moto's; the table is in dynalite, named by the
    connector's own option: described, inferred and read there."""
    create_dynamodb_table(dynalite.client("dynamodb"), unique_name, "id", [{"id": {"S": "d"}}])
    options = parse_dynamodb_options(
        {"dynamodb.input.tableName": unique_name, "dynamodb.endpoint": dynalite.endpoint_url},
        "from_options",
    )
    read = planned_read(options, describe_table(options.access, "x"), default_splits=1)
    schema = StructType.fromJson(json.loads(infer_segment(read, 0)["struct"]))
    assert [r for b in read_segment(read, schema, 0) for r in b.to_pylist()] == [{"id": "d"}]


def test_a_crawler_s_tables_in_moto_s_glue_map_onto_the_batch_readers(aws_env, unique_name):
    glue = ClientSpec("glue").client()
    database = unique_name.replace("-", "_")
    columns = [("id", "string"), ("tags", "set<string>")]  # as crawlers write sets
    create_crawler_dynamodb_table(
        glue, database, "priorities", "priorities", aws_env.region_name, columns
    )
    name = TableName(database, "priorities")
    source = batch_table(get_table(glue, name), name, {})
    assert source.connection_options == {
        "dynamodb.region": aws_env.region_name,
        "dynamodb.input.tableName": "priorities",
    }
