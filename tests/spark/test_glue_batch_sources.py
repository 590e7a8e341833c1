"""The Glue layer's batch sources on the session's SparkContext and the local AWS: lookups
read from S3 (CSV, JSON, Parquet, ORC, Avro; local paths read by Spark itself) and from
DynamoDB (by options, through a crawler-shaped catalog table, in the export's shape),
joined with a batch the way streaming jobs enrich theirs, and read again after a change."""
# ruff: noqa: F811 (the fixtures imported from test_glue are test arguments here)

import io
import json

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyarrow import orc

from kinesis_dstream.aws import AWSCredentials, ClientSpec
from kinesis_dstream.glue.errors import GlueError, NotProvidedError
from kinesis_dstream.glue.frames.dynamicframe import DynamicFrame
from kinesis_dstream.glue.transforms import Join

from ..support.glue import create_crawler_dynamodb_table, create_dynamodb_table
from .test_glue import bucket, glue, glue_env  # noqa: F401 (the Glue tests' fixtures)

COUNTRIES = "code,name,population_m\nFR,France,68.4\nDE,Germany,83.2\nJP,Japan,124\n"


def put(local_aws, bucket, key, body):
    local_aws.client("s3").put_object(Bucket=bucket, Key=key, Body=body)


def orders(glue, rows):
    df = glue.spark_session.createDataFrame(rows, "order_id long, country_code string")
    return DynamicFrame.fromDF(df, glue, "batch")


def test_a_batch_joined_with_an_s3_csv_lookup_gets_each_order_s_country(glue, local_aws, bucket):
    put(local_aws, bucket, "countries/part-1.csv", COUNTRIES)
    put(local_aws, bucket, "countries/2026/part-2.csv", "code,name,population_m\nBR,Brazil,216\n")
    put(local_aws, bucket, "countries/README.txt", "not data")
    countries = glue.create_dynamic_frame.from_options(
        connection_type="s3",
        connection_options={
            "paths": [f"s3://{bucket}/countries/"],
            "recurse": True,
            "exclusions": '["**.txt"]',
        },
        format="csv",
        format_options={"withHeader": True},
    )
    assert countries.toDF().schema.simpleString() == (
        "struct<code:string,name:string,population_m:double>"
    )
    batch = orders(glue, [(i, code) for i, code in enumerate(["FR", "BR", "JP", "XX", "FR"])])
    joined = Join.apply(frame1=batch, frame2=countries, keys1=["country_code"], keys2=["code"])
    got = sorted((r["order_id"], r["name"], r["population_m"]) for r in joined.toDF().collect())
    assert got == [
        (0, "France", 68.4),
        (1, "Brazil", 216.0),
        (2, "Japan", 124.0),
        (4, "France", 68.4),
    ]  # XX has no country: an inner join, as Glue's


def test_a_lookup_read_again_over_unchanged_files_runs_no_job_until_a_file_changes(
    glue, local_aws, bucket
):
    put(local_aws, bucket, "again/part-1.csv", COUNTRIES)
    sc = glue.spark_session.sparkContext

    def planning_jobs(group):
        sc.setJobGroup(group, "planning a lookup read")
        try:
            frame = glue.create_dynamic_frame.from_options(
                "s3",
                {"paths": [f"s3://{bucket}/again/"]},
                format="csv",
                format_options={"withHeader": True},
            )
        finally:
            sc.setJobGroup("", "")
        return len(sc.statusTracker().getJobIdsForGroup(group)), frame.toDF()

    jobs, first = planning_jobs(f"{bucket}-1")
    assert jobs == 1 and dict(first.dtypes)["population_m"] == "double"  # columns from records
    jobs, again = planning_jobs(f"{bucket}-2")
    assert jobs == 0 and again.schema == first.schema  # the same files: no job
    put(local_aws, bucket, "again/part-1.csv", COUNTRIES + "XX,Nowhere,unknown\n")
    jobs, changed = planning_jobs(f"{bucket}-3")
    assert jobs == 1 and dict(changed.dtypes)["population_m"] == "string"
    assert changed.count() == 4


def test_each_format_is_read_from_s3_and_a_local_folder_by_spark_itself(
    glue, local_aws, bucket, tmp_path
):
    table = pa.table({"code": ["FR", "DE"], "rank": pa.array([1, 2], pa.int32())})
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    put(local_aws, bucket, "p/a.parquet", buffer.getvalue())
    orc_buffer = io.BytesIO()
    orc.write_table(table, orc_buffer)
    put(local_aws, bucket, "o/a.orc", orc_buffer.getvalue())
    avro = io.BytesIO()
    schema = {
        "type": "record",
        "name": "c",
        "fields": [{"name": "code", "type": "string"}, {"name": "rank", "type": "int"}],
    }
    fastavro.writer(avro, schema, table.to_pylist())
    put(local_aws, bucket, "a/a.avro", avro.getvalue())
    put(local_aws, bucket, "j/a.json", "\n".join(json.dumps(r) for r in table.to_pylist()))
    expected = [("DE", 2), ("FR", 1)]
    for fmt, folder in [("parquet", "p"), ("orc", "o"), ("avro", "a"), ("json", "j")]:
        df = glue.create_data_frame.from_options(  # a batch DataFrame, as Glue's
            connection_type="s3",
            connection_options={"paths": [f"s3://{bucket}/{folder}/"]},
            format=fmt,
        )
        assert not df.isStreaming
        assert sorted((r["code"], r["rank"]) for r in df.collect()) == expected, fmt
    pq.write_table(table, tmp_path / "a.parquet")
    local = glue.create_dynamic_frame.from_options(
        connection_type="parquet",  # Glue's Spark SQL spelling
        connection_options={"paths": [str(tmp_path)], "attachFilename": "file"},
    ).toDF()
    rows = local.collect()
    assert sorted((r["code"], r["rank"]) for r in rows) == expected
    assert all(r["file"].endswith("a.parquet") for r in rows)  # Spark's _metadata.file_path


def dynamodb_table(local_aws, name, items):
    ddb = local_aws.client("dynamodb")
    create_dynamodb_table(ddb, name, "customer", items)
    return ddb


def priority(customer, level, tier=None):
    item = {"customer": {"S": customer}, "priority": {"N": str(level)}}
    if tier:
        item["tier"] = {"S": tier}
    return item


def test_a_dynamodb_lookup_through_a_crawler_table_is_joined_and_read_again_after_a_change(
    glue, local_aws, unique_name
):
    ddb = dynamodb_table(local_aws, unique_name, [priority(f"c{i}", i % 3) for i in range(12)])
    create_crawler_dynamodb_table(
        local_aws.client("glue"),
        "lookups",
        unique_name.lower(),
        unique_name,
        local_aws.region_name,
        [("customer", "string")],
    )

    def read():
        return glue.create_dynamic_frame.from_catalog(
            database="lookups",
            table_name=unique_name.lower(),
            additional_options={"dynamodb.splits": "3"},
        )

    priorities = read()
    assert priorities.toDF().schema.simpleString() == "struct<customer:string,priority:bigint>"
    batch = glue.spark_session.createDataFrame(
        [(1, "c1"), (2, "c5"), (3, "nobody")], "event_id long, customer_id string"
    )
    events = DynamicFrame.fromDF(batch, glue, "events")
    joined = Join.apply(events, priorities, "customer_id", "customer").toDF()
    assert sorted((r["event_id"], r["priority"]) for r in joined.collect()) == [(1, 1), (2, 2)]
    ddb.put_item(TableName=unique_name, Item=priority("c5", 9, tier="gold"))
    again = Join.apply(events, read(), "customer_id", "customer").toDF()
    assert sorted((r["event_id"], r["priority"], r["tier"]) for r in again.collect()) == [
        (1, 1, None),
        (2, 9, "gold"),  # the new item's new attribute is a new column
    ]


def test_dynamodb_by_options_and_in_the_export_s_shape(glue, local_aws, unique_name):
    dynamodb_table(local_aws, unique_name, [priority("a", 1, "gold"), priority("b", 2)])
    plain = glue.create_data_frame.from_options(
        connection_type="dynamodb",
        connection_options={"dynamodb.input.tableName": unique_name, "dynamodb.splits": "2"},
    )
    assert sorted(tuple(r) for r in plain.collect()) == [("a", 1, "gold"), ("b", 2, None)]
    arn = f"arn:aws:dynamodb:{local_aws.region_name}:123456789012:table/{unique_name}"
    export = glue.create_dynamic_frame.from_options(
        connection_type="dynamodb",
        connection_options={"dynamodb.export": "ddb", "dynamodb.tableArn": arn},
    ).toDF()
    items = sorted(
        r["Item"]["customer"]["S"] + ":" + r["Item"]["priority"]["N"] for r in export.collect()
    )
    assert items == ["a:1", "b:2"]


def test_a_dynamodb_read_describes_and_scans_the_table_where_its_options_say(
    glue, local_aws, dynalite, unique_name
):
    """``dynamodb.sts.roleArn`` (AWS's cross-account read; moto keeps accounts apart) and
    ``dynamodb.endpoint`` (a table in dynalite) are used by every call of the read: the
    driver's DescribeTable as the executors' Scans."""
    role = "arn:aws:iam::222222222222:role/lookup-reader"
    as_role = AWSCredentials(role_arn=role, role_session_name="setup")
    other_account = ClientSpec("dynamodb", credentials=as_role).client()
    create_dynamodb_table(other_account, unique_name, "customer", [priority("a", 1)])
    options = {"dynamodb.input.tableName": unique_name, "dynamodb.sts.roleArn": role}
    frame = glue.create_dynamic_frame.from_options("dynamodb", options).toDF()
    assert [tuple(r) for r in frame.collect()] == [("a", 1)]
    with pytest.raises(GlueError, match=f"DynamoDB table '{unique_name}' does not exist"):
        glue.create_dynamic_frame.from_options(
            "dynamodb",
            {"dynamodb.input.tableName": unique_name},  # the job's own account
        )
    create_dynamodb_table(dynalite.client("dynamodb"), unique_name, "customer", [priority("d", 2)])
    options = {"dynamodb.input.tableName": unique_name, "dynamodb.endpoint": dynalite.endpoint_url}
    frame = glue.create_dynamic_frame.from_options("dynamodb", options).toDF()
    assert [tuple(r) for r in frame.collect()] == [("d", 2)]


def test_what_this_layer_does_not_read_is_one_line_at_the_call(glue, local_aws, bucket):
    with pytest.raises(NotProvidedError, match=r"connection_type='mysql'\) is not provided"):
        glue.create_dynamic_frame.from_options(connection_type="mysql", connection_options={})
    with pytest.raises(NotProvidedError, match="connection_type='kinesis'"):
        glue.create_dynamic_frame.from_options("kinesis", {"streamName": "s"})
    with pytest.raises(GlueError, match="DynamoDB table 'nope' does not exist"):
        glue.create_dynamic_frame.from_options("dynamodb", {"dynamodb.input.tableName": "nope"})
    empty = glue.create_dynamic_frame.from_options(
        "s3", {"paths": [f"s3://{bucket}/nothing/"]}, format="csv"
    )
    assert empty.count() == 0 and empty.toDF().columns == []  # as Glue: an empty frame
