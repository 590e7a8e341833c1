"""A Glue Data Catalog table (a GetTable answer) mapped onto the source's options, and
the Glue layer's own options (pure: no server, no Spark)."""

import pytest

from kinesis_dstream.glue.catalog.tables import TableName, catalog_sink, catalog_source_options
from kinesis_dstream.glue.errors import GlueError, NotProvidedError
from kinesis_dstream.glue.options import ForEachBatchOptions, source_options
from kinesis_dstream.glue.sinks.s3_output import FileTarget
from kinesis_dstream.glue.streaming.foreach_batch import restart_wait_s

NAME = TableName("db", "events")
ARN = "arn:aws:kinesis:us-east-1:123456789012:stream/events"


def table(storage_params, params=None, columns=(), reference=None, location=None):
    storage = {"Columns": list(columns), "Parameters": storage_params}
    if reference is not None:
        storage["SchemaReference"] = reference
    if location is not None:
        storage["Location"] = location
    return {"Name": "events", "StorageDescriptor": storage, "Parameters": params or {}}


COLUMNS = [{"Name": "id", "Type": "bigint"}, {"Name": "user name", "Type": "struct<a:int>"}]


def test_a_same_account_table_gives_stream_endpoint_format_and_its_columns_as_schema():
    t = table(
        {
            "typeOfData": "kinesis",
            "streamName": "events",
            "endpointUrl": "https://kinesis.eu-west-1.amazonaws.com",
        },
        {"classification": "csv", "delimiter": "|"},
        COLUMNS,
    )
    assert catalog_source_options(t, NAME, {"startingPosition": "earliest"}) == {
        "streamName": "events",
        "endpointUrl": "https://kinesis.eu-west-1.amazonaws.com",
        "classification": "csv",
        "delimiter": "|",
        "startingPosition": "earliest",
        "schema": "`id` bigint, `user name` struct<a:int>",
    }


def test_a_cross_account_table_gives_its_arn_and_role_and_infer_schema_drops_the_columns():
    t = table(
        {
            "typeOfData": "kinesis",
            "streamARN": ARN,
            "awsSTSRoleARN": "arn:aws:iam::1:role/r",
            "awsSTSSessionName": "s",
        },
        {"classification": "json"},
        COLUMNS,
    )
    options = catalog_source_options(t, NAME, {"inferSchema": True, "typeOfData": "kinesis"})
    assert options == {
        "streamARN": ARN,
        "awsSTSRoleARN": "arn:aws:iam::1:role/r",
        "awsSTSSessionName": "s",
        "classification": "json",
        "inferSchema": "true",
    }


def test_a_table_may_ask_for_the_records_that_do_not_parse_in_a_column():
    params = {"classification": "json", "columnNameOfCorruptRecord": "bad"}
    t = table({"typeOfData": "kinesis", "streamARN": ARN}, params, COLUMNS)
    assert catalog_source_options(t, NAME, {})["columnNameOfCorruptRecord"] == "bad"


def test_additional_options_override_the_table_case_insensitively():
    t = table({"typeOfData": "kinesis", "streamARN": ARN}, {"classification": "json"}, COLUMNS)
    options = catalog_source_options(t, NAME, {"Classification": "csv", "schema": "`x` int"})
    assert options["Classification"] == "csv" and "classification" not in options
    assert options["schema"] == "`x` int"


def test_grok_and_schema_registry_tables_map_onto_the_source_s_option_names():
    grok = table(
        {"typeOfData": "kinesis", "streamARN": ARN},
        {
            "classification": "grok",
            "grokPattern": "%{WORD:w} %{INT:n:int}",
            "grokCustomPatterns": "A a\nB b",
        },
        COLUMNS,
    )
    assert catalog_source_options(grok, NAME, {}) == {
        "streamARN": ARN,
        "classification": "grok",
        "grokPattern": "%{WORD:w} %{INT:n:int}",
        "grokCustomPatterns": "A a\nB b",
    }
    by_name = {"SchemaId": {"RegistryName": "reg", "SchemaName": "sch"}, "SchemaVersionNumber": 3}
    registry = table({"typeOfData": "kinesis", "streamARN": ARN}, {}, (), by_name)
    assert catalog_source_options(registry, NAME, {}) == {
        "streamARN": ARN,
        "registryName": "reg",
        "schemaName": "sch",
        "schemaVersionNumber": "3",
        "classification": "avro",
    }
    by_arn = {
        "SchemaId": {"SchemaArn": "arn:aws:glue:us-east-1:1:schema/reg/sch"},
        "SchemaVersionId": "u-1",
    }
    options = catalog_source_options(
        table({"typeOfData": "kinesis", "streamARN": ARN}, {}, (), by_arn), NAME, {}
    )
    assert options["schemaArn"] == "arn:aws:glue:us-east-1:1:schema/reg/sch"
    assert options["schemaVersionId"] == "u-1" and "schemaVersionNumber" not in options


def test_a_table_that_is_not_kinesis_or_has_no_columns_is_one_line_naming_it():
    with pytest.raises(
        GlueError, match=r"table db\.events is not a Kinesis table \(typeOfData='kafka'\)"
    ) as e:
        catalog_source_options(table({"typeOfData": "kafka"}), NAME, {})
    assert "\n" not in str(e.value)
    with pytest.raises(GlueError, match=r"table db\.events is not a Kinesis table \(no typeOfData"):
        catalog_source_options(table({}, location="s3://b/p/"), NAME, {})
    no_columns = table({"typeOfData": "kinesis", "streamARN": ARN}, {"classification": "json"})
    with pytest.raises(GlueError, match="has no columns and inferSchema is not true"):
        catalog_source_options(no_columns, NAME, {})


def test_a_catalog_sink_is_a_kinesis_stream_or_an_s3_location_with_its_partitions():
    kinesis = table({"typeOfData": "kinesis", "streamARN": ARN}, {"classification": "json"})
    assert catalog_sink(kinesis, NAME, {"partitionKey": "id"}) == (
        "kinesis",
        {"streamARN": ARN, "partitionKey": "id"},
        "json",
        {},
    )
    s3 = table({}, {"classification": "parquet"}, location="s3://b/out/")
    s3["PartitionKeys"] = [{"Name": "day", "Type": "string"}]
    assert catalog_sink(s3, NAME, {}) == (
        "s3",
        {"path": "s3://b/out/", "partitionKeys": ["day"]},
        "parquet",
        {},
    )


def test_a_csv_table_s_serde_field_delimiter_is_the_files_separator():
    """The catalog S3 sink wrote a '|' table's files with commas."""
    csv = table({}, {"classification": "csv"}, location="s3://b/out/")
    csv["StorageDescriptor"]["SerdeInfo"] = {"Parameters": {"field.delim": "|"}}
    kind, options, fmt, format_options = catalog_sink(csv, NAME, {})
    assert kind == "s3"
    assert (fmt, format_options) == ("csv", {"separator": "|"})
    assert FileTarget.parse(options, fmt, format_options).separator == "|"


def test_an_open_csv_serde_table_s_separator_quote_and_escape_are_the_files():
    """OpenCSVSerde (what crawlers make for quoted CSV) names them separatorChar,
    quoteChar and escapeChar; only field.delim was read, so such a '|' table got commas."""
    csv = table({}, {"classification": "csv"}, location="s3://b/out/")
    csv["StorageDescriptor"]["SerdeInfo"] = {
        "SerializationLibrary": "org.apache.hadoop.hive.serde2.OpenCSVSerde",
        "Parameters": {"separatorChar": "|", "quoteChar": "'", "escapeChar": "#"},
    }
    _, options, fmt, format_options = catalog_sink(csv, NAME, {})
    assert format_options == {"separator": "|", "quoteChar": "'", "escaper": "#"}
    target = FileTarget.parse(options, fmt, format_options)
    # escaper is a read option on AWS's CSV page: the writer doubles quotes (issue 54)
    assert (target.separator, target.quote) == ("|", "'")


def test_for_each_batch_options_name_what_is_missing_or_wrong():
    with pytest.raises(GlueError, match="option 'windowSize' is required"):
        ForEachBatchOptions.parse({"checkpointLocation": "/tmp/c"})
    with pytest.raises(GlueError, match="option 'checkpointLocation' is required"):
        ForEachBatchOptions.parse({"windowSize": "10 seconds"})
    with pytest.raises(
        GlueError, match=r"'batchMaxRetries'='101' must be an integer in \[0, 100\]"
    ):
        ForEachBatchOptions.parse(
            {"windowSize": "1 second", "checkpointLocation": "c", "batchMaxRetries": 101}
        )
    with pytest.raises(GlueError, match="'storageLevel'='RAM' is not a storage level"):
        ForEachBatchOptions.parse(
            {"windowSize": "1 second", "checkpointLocation": "c", "storageLevel": "RAM"}
        )
    parsed = ForEachBatchOptions.parse({"windowSize": "100 seconds", "checkpointLocation": "c"})
    assert (parsed.batch_max_retries, parsed.persist, parsed.storage_level) == (
        3,
        True,
        "MEMORY_AND_DISK",
    )
    assert [restart_wait_s(n) for n in (1, 2, 3, 4, 100)] == [1.0, 2.0, 5.0, 5.0, 5.0]


def test_connection_options_lose_the_glue_layer_s_keys_and_keep_the_source_s():
    assert source_options(
        {"typeOfData": "kinesis", "streamARN": ARN, "inferSchema": True}, "here"
    ) == {
        "streamARN": ARN,
        "inferSchema": "true",
    }
    with pytest.raises(GlueError, match="typeOfData='kafka' is not a Kinesis source"):
        source_options({"typeOfData": "kafka"}, "from_options")


def test_s3_targets_take_glue_s_formats_and_refuse_only_what_changes_the_files(caplog):
    target = FileTarget.parse(
        {"path": "s3://b/p/", "partitionKeys": ["a"]}, "glueparquet", {"compression": "gzip"}
    )
    assert (target.fmt, target.partition_keys, target.compression) == ("parquet", ("a",), "gzip")
    assert FileTarget.parse({"path": "s3://b/p"}, "csv", {"separator": "|"}).separator == "|"
    # options Glue's writer ignores: accepted, named once in a warning
    FileTarget.parse({"path": "s3://b/p", "groupFiles": "inPartition"}, "json", {"x": 1})
    FileTarget.parse({"path": "s3://b/p", "groupFiles": "inPartition"}, "json", {"x": 1})
    named = [m for m in caplog.messages if "['groupFiles']" in m]
    assert named == [
        "s3 connection_options ['groupFiles'] have no effect here (Glue's writer ignores "
        "them); accepted and ignored"
    ]
    assert any("json format_options ['x']" in m for m in caplog.messages)
    with pytest.raises(NotProvidedError, match="format 'orc'"):
        FileTarget.parse({"path": "s3://b/p"}, "orc", {})
    with pytest.raises(GlueError, match="'path' is required"):
        FileTarget.parse({}, "json", {})


def test_partition_key_is_one_rule_for_the_sink_and_the_glue_writer():
    from kinesis_dstream.sql.sink import partition_key_source

    assert partition_key_source("user", ["data", "user"]) == ("user", None)
    assert partition_key_source("fixed-key", ["data", "user"]) == (None, "fixed-key")
    assert partition_key_source(None, ["data", "partitionKey"]) == ("partitionKey", None)


def test_an_s3_write_without_a_region_is_one_line_before_any_task(monkeypatch, tmp_path):
    """The executors' S3 settings defaulted the region to us-east-1, silently."""
    from kinesis_dstream.glue.sinks.s3_output import check_s3_output

    for name in ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "config").write_text("")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    with pytest.raises(GlueError) as e:
        check_s3_output("s3://bucket/out/")
    assert str(e.value).startswith("write_dynamic_frame to s3://bucket/out/: no AWS region")
    assert "\n" not in str(e.value)
    check_s3_output(str(tmp_path / "out"))  # a local path needs none
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    check_s3_output("s3a://bucket/out/")
    # a path the executors' S3 writer cannot parse fails here too, not in every task
    with pytest.raises(
        GlueError,
        match=r"^write_dynamic_frame to s3://My_Bucket/out/: .* "
        r"does not name an S3 bucket",
    ):
        check_s3_output("s3://My_Bucket/out/")
