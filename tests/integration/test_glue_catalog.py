"""A Glue Data Catalog table on moto's Glue server, as the Glue layer reads it: its
GetTable answer mapped onto the source's options, and a missing or non-Kinesis table
as one line naming database and table (no Spark: the error comes before any)."""

import pytest

from kinesis_dstream.backoff import Backoff
from kinesis_dstream.glue.catalog import TableName, catalog_source_options, get_table
from kinesis_dstream.glue.errors import GlueError, GlueServiceError
from kinesis_dstream.glue.foreach_batch import no_restart_heals
from kinesis_dstream.glue.readers import read_catalog

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
    from kinesis_dstream.glue.writers import DataFrameWriter, DynamicFrameWriter

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
