"""A Glue Data Catalog table on moto's Glue server, as the Glue layer reads it: its
GetTable answer mapped onto the source's options, and a missing or non-Kinesis table
as one line naming database and table (no Spark: the error comes before any)."""

import pytest
from pyspark.sql.types import LongType, StringType, StructField, StructType

from kinesis_dstream.backoff import Backoff
from kinesis_dstream.glue.catalog.tables import TableName, catalog_source_options, get_table
from kinesis_dstream.glue.errors import GlueError, GlueServiceError
from kinesis_dstream.glue.sources.readers import read_catalog
from kinesis_dstream.glue.streaming.foreach_batch import no_restart_heals

from ..support.faults import CallErrors
from ..support.glue import create_kinesis_table


@pytest.fixture
def glue(local_aws):
    return local_aws.client("glue")


@pytest.fixture
def database(glue, unique_name):
    name = unique_name.replace("-", "_")
    glue.create_database(DatabaseInput={"Name": name})
    return name


def test_a_table_made_with_create_table_reads_back_as_the_source_s_options(
    glue, database, local_aws
):
    reference = {
        "SchemaId": {"RegistryName": "reg", "SchemaName": "orders"},
        "SchemaVersionNumber": 2,
    }
    create_kinesis_table(
        glue,
        database,
        "orders",
        {"streamName": "orders", "endpointUrl": local_aws.endpoint_url},
        {"classification": "json"},
        [("id", "bigint"), ("item", "struct<sku:string,qty:int>")],
    )
    name = TableName(database, "orders")
    assert catalog_source_options(
        get_table(glue, name), name, {"startingPosition": "earliest"}
    ) == {
        "streamName": "orders",
        "endpointUrl": local_aws.endpoint_url,
        "classification": "json",
        "startingPosition": "earliest",
        "schema": "`id` bigint, `item` struct<sku:string,qty:int>",
    }
    glue.create_table(
        DatabaseName=database,
        TableInput={
            "Name": "registry",
            "StorageDescriptor": {
                "Parameters": {"typeOfData": "kinesis", "streamName": "orders"},
                "SchemaReference": reference,
            },
        },
    )
    registry = TableName(database, "registry")
    options = catalog_source_options(get_table(glue, registry), registry, {})
    assert options == {
        "streamName": "orders",
        "registryName": "reg",
        "schemaName": "orders",
        "schemaVersionNumber": "2",
        "classification": "avro",
    }


def test_a_missing_table_and_a_table_that_is_not_kinesis_are_one_line_each(glue, database):
    with pytest.raises(GlueError) as missing:
        read_catalog(None, TableName(database, "nope"), {}, client=glue)
    text = str(missing.value)
    assert f"table {database}.nope is not in the Glue Data Catalog" in text and "\n" not in text
    glue.create_table(
        DatabaseName=database,
        TableInput={
            "Name": "files",
            "StorageDescriptor": {"Location": "s3://bucket/files/"},
            "Parameters": {"classification": "parquet"},
        },
    )
    with pytest.raises(GlueError) as not_kinesis:
        read_catalog(None, TableName(database, "files"), {}, client=glue)
    text = str(not_kinesis.value)
    assert f"table {database}.files is not a Kinesis table" in text and "\n" not in text
    with pytest.raises(GlueError, match="not in the Glue Data Catalog"):
        read_catalog(None, TableName("no_such_database", "t"), {}, client=glue)


def test_a_catalog_throttled_past_its_retries_is_a_service_failure_a_restart_may_heal(
    glue, database
):
    """It was a GlueError, which forEachBatch takes for a script error: a batch function
    reading a table while the catalog throttled failed the job at once, without restarts."""
    throttled = CallErrors(glue, "glue", "GetTable", lambda n: "ThrottlingException")
    try:
        with pytest.raises(GlueServiceError) as e:
            get_table(glue, TableName(database, "t"), Backoff(0.01, 0.02, max_attempts=3))
    finally:
        throttled.remove()
    assert throttled.calls == 3
    assert not isinstance(e.value, GlueError) and e.value.retriable
    assert not no_restart_heals(e.value)
    text = str(e.value)
    assert text.startswith(f"reading table {database}.t: ") and "\n" not in text
    assert "ThrottlingException" in text


def test_write_to_a_catalog_table_names_the_arguments_it_ignores(
    glue, database, local_aws, monkeypatch, caplog
):
    """The readers warned about arguments without effect; the catalog writer dropped them
    silently (and its write_dynamic_frame.from_catalog did not even pass them on)."""
    from kinesis_dstream.glue.context import GlueContext
    from kinesis_dstream.glue.sinks.writers import DataFrameWriter, DynamicFrameWriter

    for key, value in local_aws.env().items():
        monkeypatch.setenv(key, value)
    context = object.__new__(GlueContext)  # no Spark: the table lookup fails first
    context.spark_session = None
    with pytest.raises(GlueError, match="not in the Glue Data Catalog"):
        DynamicFrameWriter(context).from_catalog(
            frame=None, database=database, table_name="absent", sink_name="x", useless=1
        )
    assert (
        "write_dynamic_frame.from_catalog: arguments ['sink_name', 'useless'] have no effect "
        "here; ignored"
    ) in caplog.messages
    # write_data_frame names itself, not the dynamic-frame method it once went through
    with pytest.raises(Exception, match="DynamicFrame wraps a Spark DataFrame"):
        DataFrameWriter(context).from_catalog(
            frame=None, database=database, table_name="absent", sink_name="x"
        )
    assert (
        "write_data_frame.from_catalog: arguments ['sink_name'] have no effect here; ignored"
    ) in caplog.messages


def test_write_from_options_names_the_arguments_it_ignores(caplog):
    """GlueContext.write_from_options took **kwargs as aws-glue-libs does and dropped
    them without a word."""
    from kinesis_dstream.glue.context import GlueContext

    context = object.__new__(GlueContext)  # no Spark: the frame check fails first
    context.spark_session = None
    with pytest.raises(TypeError, match="must be DynamicFrame"):
        context.write_from_options(None, "s3", {"path": "/tmp/x"}, sink_name="x", useless=1)
    assert (
        "write_from_options: arguments ['sink_name', 'useless'] have no effect here; ignored"
    ) in caplog.messages


def _partitions(glue, database, table):
    pages = glue.get_paginator("get_partitions").paginate(DatabaseName=database, TableName=table)
    return sorted(
        (tuple(p["Values"]), p["StorageDescriptor"]["Location"])
        for page in pages
        for p in page["Partitions"]
    )


def test_enable_update_catalog_adds_the_partitions_written_and_the_frame_s_columns(
    glue, database, caplog
):
    """enableUpdateCatalog was refused; now the partitions a write made are in the
    catalog (once each, however often they are written) and the table takes the
    frame's columns (UPDATE_IN_DATABASE) or keeps its own (LOG)."""
    from kinesis_dstream.glue.catalog.updates import CatalogUpdate, UpdateBehavior

    glue.create_table(
        DatabaseName=database,
        TableInput={
            "Name": "events",
            "StorageDescriptor": {
                "Location": "s3://b/events",
                "Columns": [{"Name": "id", "Type": "bigint"}],
                "SerdeInfo": {"SerializationLibrary": "org.openx.data.jsonserde.JsonSerDe"},
            },
            "PartitionKeys": [
                {"Name": "region", "Type": "string"},
                {"Name": "day", "Type": "string"},
            ],
            "Parameters": {"classification": "json"},
        },
    )
    name = TableName(database, "events")
    keys = ("region", "day")
    columns = [{"Name": "id", "Type": "bigint"}, {"Name": "note", "Type": "string"}]
    schema = StructType(
        [
            StructField(n, t)
            for n, t in (
                ("region", StringType()),
                ("id", LongType()),
                ("note", StringType()),
                ("day", StringType()),
            )
        ]
    )

    full = schema

    def update(behavior, values):
        table = get_table(glue, name)
        change = CatalogUpdate(glue, name, table, behavior)
        change.prepare(schema, "json", "s3://b/events", keys)
        change.add_partitions(keys, values)

    update(UpdateBehavior.LOG, [("eu", "01"), ("us/west", "01")])
    assert [c["Name"] for c in get_table(glue, name)["StorageDescriptor"]["Columns"]] == ["id"]
    assert any("updateBehavior LOG: the table is left as it is" in m for m in caplog.messages)
    # Glue's rule: with LOG, a frame with columns the table lacks adds no partition
    assert _partitions(glue, database, "events") == []
    schema = StructType([f for f in schema if f.name != "note"])
    update(UpdateBehavior.LOG, [("eu", "01"), ("us/west", "01")])
    assert len(_partitions(glue, database, "events")) == 2
    schema = full
    update(UpdateBehavior.UPDATE_IN_DATABASE, [("eu", "01"), ("eu", "02"), (None, "02")])
    table = get_table(glue, name)
    assert table["StorageDescriptor"]["Columns"] == columns
    assert [k["Name"] for k in table["PartitionKeys"]] == ["region", "day"]
    assert _partitions(glue, database, "events") == [
        (
            ("__HIVE_DEFAULT_PARTITION__", "02"),
            "s3://b/events/region=__HIVE_DEFAULT_PARTITION__/day=02/",
        ),
        (("eu", "01"), "s3://b/events/region=eu/day=01/"),
        (("eu", "02"), "s3://b/events/region=eu/day=02/"),
        (("us/west", "01"), "s3://b/events/region=us%2Fwest/day=01/"),
    ]
    with pytest.raises(GlueError, match=r"partitionKeys \['day'\] are not table .*'region', 'day'"):
        CatalogUpdate(glue, name, get_table(glue, name), UpdateBehavior.LOG).check_keys(("day",))


def test_set_catalog_info_on_a_new_table_creates_it_in_the_format_written(glue, database):
    """The table is created before the files are written; a missing database is one
    line naming it (a script error, not a service failure to restart on)."""
    from kinesis_dstream.glue.catalog.updates import CatalogUpdate, UpdateBehavior

    name = TableName(database, "fresh")
    change = CatalogUpdate(glue, name, None, UpdateBehavior.UPDATE_IN_DATABASE)
    schema = StructType([StructField("id", LongType()), StructField("k", StringType())])
    change.prepare(schema, "parquet", "s3://b/fresh/", ("k",))
    change.add_partitions(("k",), [("x",)])
    table = get_table(glue, name)
    storage = table["StorageDescriptor"]
    assert (storage["Location"], storage["SerdeInfo"]["SerializationLibrary"]) == (
        "s3://b/fresh/",
        "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe",
    )
    assert table["Parameters"]["classification"] == "parquet"
    assert _partitions(glue, database, "fresh") == [(("x",), "s3://b/fresh/k=x/")]
    absent = CatalogUpdate(glue, TableName("no_db", "t"), None, UpdateBehavior.LOG)
    with pytest.raises(GlueError, match=r"CreateTable of table no_db.t: database 'no_db' is not"):
        absent.prepare(schema, "parquet", "s3://b/t/", ("k",))


def test_update_catalog_partitions_point_where_the_files_went_and_keys_match_in_any_case(
    glue, database
):
    """(review) A sink whose path was not the table's Location got partitions at the
    table's Location, where no file was: the data could not be seen through the table. And
    partitionKeys ["Region"] against the catalog's lower-case "region" failed the write."""
    from kinesis_dstream.glue.catalog.updates import CatalogUpdate, UpdateBehavior

    glue.create_table(
        DatabaseName=database,
        TableInput={
            "Name": "moved",
            "StorageDescriptor": {
                "Location": "s3://b/old-place",
                "Columns": [{"Name": "id", "Type": "bigint"}],
            },
            "PartitionKeys": [{"Name": "region", "Type": "string"}],
            "Parameters": {"classification": "json"},
        },
    )
    name = TableName(database, "moved")
    schema = StructType([StructField("id", LongType()), StructField("Region", StringType())])
    change = CatalogUpdate(glue, name, get_table(glue, name), UpdateBehavior.UPDATE_IN_DATABASE)
    change.prepare(schema, "json", "s3://b/new-place/", ("Region",))
    change.add_partitions(("Region",), [("eu",)])
    parts = glue.get_partitions(DatabaseName=database, TableName="moved")["Partitions"]
    assert [(p["Values"], p["StorageDescriptor"]["Location"]) for p in parts] == [
        (["eu"], "s3://b/new-place/Region=eu/")
    ]
