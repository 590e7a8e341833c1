"""The Glue layer in-process on the session's SparkContext: a Glue Studio-shaped batch
function from a catalog table to S3, a catalog table with inferSchema to Kinesis,
forEachBatch's retries and empty batches, the S3 formats and the field transforms."""

import contextlib
import csv
import gzip
import io
import json
import re
import sys
import threading

import fastavro
import pyarrow.parquet as pq
import pytest
from pyspark.sql import functions as F

from kinesis_dstream.demo.readback import read_all_records
from kinesis_dstream.glue import install
from kinesis_dstream.glue.context import GlueContext
from kinesis_dstream.glue.errors import GlueError, NotProvidedError
from kinesis_dstream.glue.frames.dynamicframe import DynamicFrame, DynamicFrameCollection
from kinesis_dstream.glue.options import ForEachBatchOptions
from kinesis_dstream.glue.streaming.foreach_batch import BatchLoop
from kinesis_dstream.glue.transforms import ApplyMapping, DataFrameApplyMapping
from kinesis_dstream.retrieval.streams import ensure_stream

from ..support.glue import (
    create_kinesis_table,
    create_words_table,
    json_rows,
    running_loop,
    s3_objects,
    wait_for_rows,
)
from ..support.records import put_records
from ..support.waiting import wait_until

INGEST_HOUR = ["ingest_year", "ingest_month", "ingest_day", "ingest_hour"]
PARTITIONED = re.compile(
    r"^out/ingest_year=\d{4}/ingest_month=\d\d/ingest_day=\d\d/ingest_hour=\d\d/"
    r"run-\d+-[0-9a-f]{8}-part-r-\d{5}-a\d+\.json$"
)


@pytest.fixture(scope="module")
def glue_env(spark, local_aws):
    """The local AWS as the SDK's default endpoint for the driver and for the Python
    workers of sources registered from here on (the session's keeps explicit ones)."""
    import os

    saved_env, saved_workers = os.environ.get("AWS_ENDPOINT_URL"), dict(spark.environment)
    os.environ["AWS_ENDPOINT_URL"] = local_aws.endpoint_url
    spark.environment["AWS_ENDPOINT_URL"] = local_aws.endpoint_url
    yield local_aws
    spark.environment.clear()
    spark.environment.update(saved_workers)
    if saved_env is None:
        os.environ.pop("AWS_ENDPOINT_URL", None)
    else:
        os.environ["AWS_ENDPOINT_URL"] = saved_env


@pytest.fixture(scope="module")
def glue(session, glue_env):
    return GlueContext(session)


@pytest.fixture
def bucket(local_aws, unique_name):
    local_aws.client("s3").create_bucket(Bucket=unique_name.lower())
    return unique_name.lower()


def loop_options(tmp_path, **extra):
    return ForEachBatchOptions.parse(
        {"windowSize": "1 second", "checkpointLocation": str(tmp_path / "checkpoint"), **extra}
    )


def test_a_glue_studio_batch_function_gets_every_record_of_a_catalog_table_into_s3_past_failures(
    glue, local_aws, kinesis, stream, bucket, unique_name, tmp_path
):
    """Empty batches never reach the function; a batch whose function fails twice runs
    again from the checkpoint (batchMaxRetries 3) and every record lands, partitioned."""
    table = unique_name.replace("-", "_")
    create_words_table(local_aws, table, stream, words=3)
    frame = glue.create_data_frame.from_catalog(
        database="glue_tests",
        table_name=table,
        additional_options={"startingPosition": "TRIM_HORIZON", "inferSchema": "false"},
    ).where("word1 <> 'skip'")
    calls: list = []

    def processBatch(data_frame, batchId):  # as Glue Studio generates it, failing twice
        calls.append((batchId, data_frame.count()))
        if len(calls) <= 2:
            raise ValueError(f"injected failure {len(calls)}")
        if data_frame.count() > 0:
            node = DynamicFrame.fromDF(
                glue.add_ingestion_time_columns(data_frame, "hour"), glue, "from_data_frame"
            )
            mapped = ApplyMapping.apply(
                frame=node,
                mappings=[("word1", "string", "first", "string")]
                + [(c, "string", c, "string") for c in INGEST_HOUR],
            )
            glue.write_dynamic_frame.from_options(
                frame=mapped,
                connection_type="s3",
                format="json",
                connection_options={"path": f"s3://{bucket}/out/", "partitionKeys": INGEST_HOUR},
            )

    put_records(kinesis, stream, 50, data="skip {i} x")
    s3 = local_aws.client("s3")
    options = loop_options(tmp_path, batchMaxRetries=3)
    with running_loop(BatchLoop, frame, processBatch, options) as loop:
        wait_until(lambda: loop.loop.batches_seen >= 1, 120, "a batch", failed=loop.failed)
        put_records(kinesis, stream, 300, data="w{i} b c", start=50)
        rows = wait_for_rows(s3, bucket, "out/", 300, loop)
    assert calls and all(count > 0 for _, count in calls)  # never an empty batch
    assert calls[0][0] == calls[1][0] == calls[2][0]  # the failed batch ran again
    assert sorted(row["first"] for _, row in rows) == sorted(f"w{i}" for i in range(50, 350))
    assert all(set(row) == {"first"} for _, row in rows)  # partition columns are directories
    assert [key for key, _ in rows if not PARTITIONED.match(key)] == []
    assert loop.result.value == "stopped"


def test_from_options_with_a_stream_arn_and_inferred_schema_writes_to_kinesis_exactly(
    glue, kinesis, stream, tmp_path
):
    # ARNs as a Glue Studio script carried them: an 11-digit account, which AWS's ARN
    # parsers take (the stream's name and region are all a read needs; the warning each
    # gets is the unit tier's: it is logged in Spark's Python workers)
    out = f"{stream}-out"
    ensure_stream(kinesis, out, 1)
    out_arn = _odd_account(_arn(kinesis, out))
    sent = [{"user": f"u{i % 7}", "n": i, "tags": ["a", str(i)]} for i in range(120)]
    put_records(kinesis, stream, len(sent), data=lambda i: json.dumps(sent[i]))
    in_arn = _odd_account(_arn(kinesis, stream))
    frame = json_stream(glue, kinesis, stream, inferSchema="true", streamARN=in_arn)

    def to_kinesis(data_frame, batch_id):
        node = DynamicFrame.fromDF(data_frame, glue, "batch")
        glue.write_dynamic_frame.from_options(
            frame=node,
            connection_type="kinesis",
            connection_options={"streamARN": out_arn, "partitionKey": "user"},
        )

    got: list = []

    def all_written():
        got[:] = read_all_records(kinesis, out)
        return len(got) >= len(sent)

    with running_loop(BatchLoop, frame, to_kinesis, loop_options(tmp_path)) as loop:
        wait_until(all_written, 120, "120 records on the output stream", failed=loop.failed)
    assert sorted((json.loads(r["Data"]) for r in got), key=lambda r: r["n"]) == sent
    assert all(json.loads(r["Data"])["user"] == r["PartitionKey"] for r in got)


def _odd_account(arn):
    return re.sub(r":\d{12}:", ":12345678910:", arn)


def _arn(kinesis, name):
    return kinesis.describe_stream_summary(StreamName=name)["StreamDescriptionSummary"]["StreamARN"]


def json_stream(glue, kinesis, stream, **options):
    """``create_data_frame.from_options`` of Glue's Kinesis options, classification json,
    from the oldest record (``options`` added: inferSchema, schema...)."""
    return glue.create_data_frame.from_options(
        connection_type="kinesis",
        connection_options={
            "typeOfData": "kinesis",
            "streamARN": _arn(kinesis, stream),
            "classification": "json",
            "startingPosition": "TRIM_HORIZON",
            **options,
        },
    )


def test_with_batch_max_retries_0_a_failed_batch_fails_at_once_with_its_error(
    glue, local_aws, kinesis, stream, unique_name, tmp_path
):
    """Read from a catalog table created without columns, its schema inferred."""
    table = unique_name.replace("-", "_")
    create_kinesis_table(
        local_aws.client("glue"),
        "glue_tests",
        table,
        {"streamARN": _arn(kinesis, stream)},
        {"classification": "json"},
    )
    put_records(kinesis, stream, 10, data=lambda i: json.dumps({"id": i, "name": f"n{i}"}))
    frame = glue.create_data_frame.from_catalog(
        database="glue_tests",
        table_name=table,
        additional_options={"startingPosition": "TRIM_HORIZON", "inferSchema": "true"},
    )
    seen: list = []

    def fails(data_frame, batch_id):
        # Glue's shape: an inferSchema batch is its JSON texts until fromDF infers them
        batch = DynamicFrame.fromDF(data_frame, glue, "from_data_frame").toDF()
        seen.extend((r["id"], r["name"]) for r in batch.collect())
        raise ValueError("this batch cannot be written")

    options = loop_options(tmp_path, batchMaxRetries=0)
    with running_loop(BatchLoop, frame, fails, options) as loop:
        loop.wait_done(120)
    assert "ValueError: this batch cannot be written" in str(loop.error)
    assert sorted(seen) == [(i, f"n{i}") for i in range(10)]  # one call, every record


def test_a_call_this_layer_does_not_provide_fails_the_loop_at_once_naming_it(
    glue, local_aws, kinesis, stream, tmp_path
):
    frame = glue.create_data_frame.from_options(
        "kinesis",
        {
            "streamName": stream,
            "endpointUrl": local_aws.endpoint_url,
            "startingPosition": "earliest",
        },
    )
    put_records(kinesis, stream, 5)
    calls: list = []

    def merges_frames(data_frame, batch_id):
        calls.append(batch_id)
        dyf = DynamicFrame.fromDF(data_frame, glue, "x")
        dyf.mergeDynamicFrame(dyf, ["sequenceNumber"])

    with running_loop(BatchLoop, frame, merges_frames, loop_options(tmp_path)) as loop:
        loop.wait_done(120)
    assert isinstance(loop.error, NotProvidedError)
    assert str(loop.error).startswith("DynamicFrame.mergeDynamicFrame is not provided")
    assert calls == [0]  # no restart: it would fail the same way


def test_a_stop_during_a_batch_stuck_in_a_call_ends_within_the_stop_bounds(
    glue, session, tmp_path, monkeypatch
):
    """query.stop() had no timeout: a batch stuck in a call that never returns kept the
    job from ending after its stop request. Now Spark's stop timeout bounds it."""
    from kinesis_dstream.glue.streaming import foreach_batch

    monkeypatch.setattr(foreach_batch, "STOP_WAIT_S", 0.2)
    monkeypatch.setattr(foreach_batch, "QUERY_STOP_TIMEOUT_S", 1.0)
    session.conf.unset(foreach_batch.STOP_TIMEOUT_CONF)  # Spark's 0 (another loop set it)
    frame = session.readStream.format("rate-micro-batch").option("rowsPerBatch", 10).load()
    stuck, release = threading.Event(), threading.Event()

    def hangs(data_frame, batch_id):
        stuck.set()
        release.wait(120)  # a call that does not return until the test ends

    try:
        with running_loop(BatchLoop, frame, hangs, loop_options(tmp_path)) as loop:
            wait_until(stuck.is_set, 120, "a batch in the function", failed=loop.failed)
            loop.stop_event.set()
            loop.wait_done(30)  # 0.2 s for the batch, 1 s for stop(): not forever
        assert loop.result.value == "stopped" and loop.error is None
    finally:
        release.set()
        wait_until(lambda: session.streams.active == [], 60, "the stuck query's end")
        session.conf.unset(foreach_batch.STOP_TIMEOUT_CONF)


def test_after_install_spark_s_python_workers_import_awsglue_too(spark, glue):
    saved_path, saved_env = list(sys.path), dict(spark.environment)
    try:
        shim = install(spark)
        where = spark.parallelize([0], 1).map(lambda _: __import__("awsglue").__file__).collect()
    finally:
        sys.path[:] = saved_path
        spark.environment.clear()
        spark.environment.update(saved_env)
        for name in [m for m in sys.modules if m == "awsglue" or m.startswith("awsglue.")]:
            del sys.modules[name]
    assert where[0].startswith(shim)


def test_a_checkpoint_spark_cannot_write_fails_before_the_query_starts(
    glue, local_aws, stream, session, tmp_path
):
    """gs:// (a FileSystem Hadoop names but cannot load: it passed, and the query failed
    at start() three times over ~9 s with "An error occurred while calling o54.start."),
    an S3 checkpoint (mirrored) on no bucket or a missing one, and a directory that cannot
    be made: one line naming the path each."""
    frame = glue.create_data_frame.from_options(
        "kinesis", {"streamName": stream, "endpointUrl": local_aws.endpoint_url}
    )
    (tmp_path / "a-file").write_text("")
    cases = {
        "gs://b/cp/": r"no Hadoop FileSystem it can load for gs://.*--TempDir",
        "s3://b/cp/": r"checkpointLocation: 's3://b/cp/' does not name an S3 bucket",
        "s3a://no-such-bucket-here/cp/": r"list_objects_v2 of s3://no-such-bucket-here/cp/ "
        r"failed: .*NoSuchBucket",
        str(tmp_path / "a-file" / "cp"): r"cannot be created \(org\.apache\.hadoop\.fs\."
        r"ParentNotDirectoryException: .*a-file.*--TempDir",
    }
    for location, message in cases.items():
        options = ForEachBatchOptions.parse(
            {"windowSize": "1 second", "checkpointLocation": location}
        )
        with pytest.raises(GlueError, match=message) as e:
            BatchLoop(frame, lambda df, b: None, options).run()
        assert "\n" not in str(e.value) and location.split("/")[2] in str(e.value)
    assert session.streams.active == []


ROWS = [
    (1, "a", "x,1", {"p": 1, "q": "one"}, "2026-04-09 07:05:00"),
    (2, "b", "y|2", {"p": 2, "q": None}, "2026-04-10 08:00:00"),
    (3, "a", None, None, "2026-04-11 09:30:00"),
]


@pytest.fixture(scope="module")
def sample(glue):
    return glue.spark_session.createDataFrame(
        ROWS, "id long, kind string, text string, inner struct<p:int,q:string>, at string"
    ).withColumn("at", F.to_timestamp("at"))


def test_s3_formats_written_from_the_executors_read_back_as_written(
    glue, local_aws, bucket, sample
):
    s3 = local_aws.client("s3")
    frame = DynamicFrame.fromDF(sample, glue, "sample")
    write = glue.write_dynamic_frame.from_options
    write(
        frame=frame.drop_fields(["inner"]),
        connection_type="s3",
        format="csv",
        connection_options={"path": f"s3://{bucket}/csv", "partitionKeys": ["kind"]},
        format_options={"separator": "|"},
    )
    write(
        frame=frame,
        connection_type="s3",
        format="glueparquet",
        connection_options={"path": f"s3://{bucket}/pq/"},
    )
    write(
        frame=frame,
        connection_type="s3",
        format="avro",
        connection_options={"path": f"s3://{bucket}/avro/"},
        format_options={"version": "1.8"},  # logical types (1.7, the default: strings)
    )
    write(
        frame=frame,
        connection_type="s3",
        format="json",
        connection_options={"path": f"s3://{bucket}/gz/", "compression": "gzip"},
    )
    # s3a:// as EMR and Glue users write it: Hadoop names a FileSystem this Spark cannot load
    write(
        frame=frame,
        connection_type="s3",
        format="json",
        connection_options={"path": f"s3a://{bucket}/s3a/"},
    )
    assert sorted(row["id"] for _, row in json_rows(s3_objects(s3, bucket, "s3a/"))) == [1, 2, 3]

    rows = {}
    for key, body in s3_objects(s3, bucket, "csv/").items():
        lines = list(csv.reader(io.StringIO(body.decode()), delimiter="|"))
        assert lines[0] == ["id", "text", "at"]
        rows.update({int(r[0]): (key.split("/")[1], r[1]) for r in lines[1:]})
    assert rows == {1: ("kind=a", "x,1"), 2: ("kind=b", "y|2"), 3: ("kind=a", "")}
    parquet = [
        r
        for body in s3_objects(s3, bucket, "pq/").values()
        for r in pq.read_table(io.BytesIO(body)).to_pylist()
    ]
    assert sorted((r["id"], r["inner"]) for r in parquet) == [
        (1, {"p": 1, "q": "one"}),
        (2, {"p": 2, "q": None}),
        (3, None),
    ]
    avro = [
        r
        for body in s3_objects(s3, bucket, "avro/").values()
        for r in fastavro.reader(io.BytesIO(body))
    ]
    assert sorted((r["id"], r["kind"], r["at"].isoformat()) for r in avro)[0] == (
        1,
        "a",
        "2026-04-09T07:05:00+00:00",
    )
    glue_api = local_aws.client("glue")
    database = f"db_{bucket}".replace("-", "_")
    glue_api.create_database(DatabaseInput={"Name": database})
    glue_api.create_table(
        DatabaseName=database,
        TableInput={
            "Name": "sink",
            "StorageDescriptor": {"Location": f"s3://{bucket}/catalog/"},
            "PartitionKeys": [{"Name": "kind", "Type": "string"}],
            "Parameters": {"classification": "json"},
        },
    )
    glue.write_dynamic_frame.from_catalog(frame=frame, database=database, table_name="sink")
    catalog = json_rows(s3_objects(s3, bucket, "catalog/"))
    assert sorted((key.split("/")[1], row["id"]) for key, row in catalog) == [
        ("kind=a", 1),
        ("kind=a", 3),
        ("kind=b", 2),
    ]
    objects = s3_objects(s3, bucket, "gz/")
    assert all(k.endswith(".json.gz") for k in objects)
    ids = sorted(
        json.loads(line)["id"]
        for body in objects.values()
        for line in gzip.decompress(body).splitlines()
    )
    assert ids == [1, 2, 3]


def test_where_spark_can_write_the_path_its_own_writer_writes_the_partitions(
    glue, sample, tmp_path
):
    frame = DynamicFrame.fromDF(sample, glue, "sample")
    frame.write(
        "s3",
        {"path": str(tmp_path / "pq"), "partitionKeys": ["kind"]},
        "parquet",
        {"compression": "uncompressed"},  # was written as Spark's default, snappy
    )
    assert sorted(p.name for p in (tmp_path / "pq").iterdir() if p.is_dir()) == ["kind=a", "kind=b"]
    codecs = {
        pq.ParquetFile(f).metadata.row_group(0).column(0).compression
        for f in (tmp_path / "pq").rglob("*.parquet")
    }
    assert codecs == {"UNCOMPRESSED"}
    back = glue.spark_session.read.parquet(str(tmp_path / "pq"))
    assert sorted((r["id"], r["kind"]) for r in back.collect()) == [(1, "a"), (2, "b"), (3, "a")]


def test_field_transforms_select_drop_rename_and_map_nested_fields(glue, sample):
    frame = DynamicFrame.fromDF(sample, glue, "sample")
    assert (
        frame.select_fields(["id", "inner.q"]).toDF().schema.simpleString()
        == "struct<id:bigint,inner:struct<q:string>>"
    )
    dropped = frame.drop_fields(["inner.p", "at", "text"]).toDF()
    assert sorted(tuple(r) for r in dropped.collect())[2] == (
        3,
        "a",
        None,
    )  # a null struct stays null
    renamed = frame.rename_field("inner.q", "inner.word").rename_field("kind", "k").toDF()
    assert renamed.columns == ["id", "k", "text", "inner", "at"]
    assert renamed.schema["inner"].dataType.simpleString() == "struct<p:int,word:string>"
    moved = frame.rename_field("inner.p", "top_p").toDF()
    assert (
        moved.columns[-1] == "top_p"
        and moved.schema["inner"].dataType.simpleString() == "struct<q:string>"
    )
    mapped = frame.apply_mapping(
        [
            ("id", "long", "out.id", "string"),
            ("inner.p", "int", "out.p", "long"),
            ("KIND", "string", "kind", "string"),
            ("missing", "string", "gone", "string"),
        ]
    ).toDF()
    assert mapped.schema.simpleString() == "struct<out:struct<id:string,p:bigint>,kind:string>"
    assert sorted((*r["out"], r["kind"]) for r in mapped.collect())[0] == ("1", 1, "a")
    assert frame.count() == 3


def test_apply_mapping_makes_a_value_it_cannot_cast_null_and_counts_it(
    glue, session, tmp_path, caplog
):
    """Spark 4's ANSI cast raised on 'abc' -> int, failing the batch at every restart;
    Glue's ApplyMapping makes it null. Counted per call on a batch frame, per micro-batch
    on a streaming one."""
    caplog.set_level("WARNING", logger="kinesis_dstream.glue.transforms.cast_failures")
    frame = glue.spark_session.createDataFrame([("1",), ("abc",), (None,)], "n string")
    mapped = DynamicFrame.fromDF(frame, glue, "x").apply_mapping([("n", "string", "n", "int")])
    assert [r.n for r in mapped.toDF().collect()] == [1, None, None]
    assert "ApplyMapping: 1 of the values could not be cast and are null (n -> int: 1)" in (
        caplog.messages
    )
    stream = session.readStream.format("rate-micro-batch").option("rowsPerBatch", 200).load()
    narrowed = DataFrameApplyMapping.apply(stream, [("value", "long", "v", "byte")])
    query = narrowed.writeStream.format("noop").trigger(availableNow=True).start()
    try:
        wait_until(
            lambda: any("batch 0: 72 of the values" in m for m in caplog.messages),
            60,
            "the count of values 128-199 that are not bytes",
            failed=lambda: query.exception(),
        )
    finally:
        query.stop()


def test_catalog_tables_of_grok_log_lines_and_schema_registry_avro_read_through_glue(
    glue, session, local_aws, kinesis, registry_name, tmp_path
):
    """A Glue job reads a grok table (grokPattern, grokCustomPatterns) and a Schema
    Registry table (StorageDescriptor.SchemaReference) as the catalog holds them."""
    from kinesis_dstream import KinesisProducer
    from kinesis_dstream.schema_registry import GlueSchemaRegistrySerializer

    from ..integration.test_schema_registry import V1, V2
    from ..support.weblog import COLUMNS, CUSTOM_PATTERNS, PATTERN, weblog
    from .test_sql_connectors import available_now

    unique_name = registry_name
    catalog = local_aws.client("glue")
    logs, orders = f"{unique_name}-logs", f"{unique_name}-orders"
    lines, expected = weblog(40)
    ensure_stream(kinesis, logs, 1)
    put_records(kinesis, logs, len(lines), data=lambda i: lines[i])
    create_kinesis_table(
        catalog,
        "glue_tests",
        logs.replace("-", "_"),
        {"streamName": logs, "endpointUrl": local_aws.endpoint_url},
        {"classification": "grok", "grokPattern": PATTERN, "grokCustomPatterns": CUSTOM_PATTERNS},
    )
    frame = glue.create_data_frame.from_catalog(
        database="glue_tests",
        table_name=logs.replace("-", "_"),
        additional_options={
            "startingPosition": "TRIM_HORIZON",
            "columnNameOfCorruptRecord": "_corrupt_record",  # kept only when asked for
        },
    )
    assert frame.columns == [*COLUMNS, "_corrupt_record"]
    _, rows = available_now(session, frame, tmp_path / "logs", "glue_grok")
    good = [r for r in rows if r._corrupt_record is None]
    assert len(rows) == 40 and len(good) == sum(1 for e in expected if e is not None)
    assert sorted(r.request for r in good) == sorted(e["request"] for e in expected if e)

    older = GlueSchemaRegistrySerializer(V1, unique_name, client=catalog, compression="zlib")
    newer = GlueSchemaRegistrySerializer(V2, unique_name, client=catalog)
    ensure_stream(kinesis, orders, 1)
    with KinesisProducer(orders, client=kinesis) as producer:
        producer.put(older.serialize({"id": 1, "item": "old"}), "a")
        producer.put(newer.serialize({"id": 2, "item": "new", "total": 2.5}), "b")
    create_kinesis_table(
        catalog,
        "glue_tests",
        orders.replace("-", "_"),
        {"streamName": orders, "endpointUrl": local_aws.endpoint_url},
    )
    table = catalog.get_table(DatabaseName="glue_tests", Name=orders.replace("-", "_"))["Table"]
    storage = {
        **table["StorageDescriptor"],
        "SchemaReference": {
            "SchemaId": {"RegistryName": unique_name, "SchemaName": "Order"},
            "SchemaVersionNumber": 2,
        },
    }
    catalog.update_table(
        DatabaseName="glue_tests",
        TableInput={"Name": table["Name"], "StorageDescriptor": storage},
    )
    frame = glue.create_data_frame.from_catalog(
        database="glue_tests",
        table_name=orders.replace("-", "_"),
        additional_options={"startingPosition": "TRIM_HORIZON"},
    )
    _, rows = available_now(session, frame, tmp_path / "orders", "glue_registry")
    assert sorted((r.id, r.item, r.total) for r in rows) == [(1, "old", -1.0), (2, "new", 2.5)]


def _avro_files(files):
    """(schema, records, codec) of each Avro body in ``files`` (gzip archives opened)."""
    out = []
    for body in files:
        if body[:2] == b"\x1f\x8b":
            body = gzip.decompress(body)
        reader = fastavro.reader(io.BytesIO(body))
        out.append((reader.writer_schema, list(reader), reader.codec))
    return out


def _field_types(schema):
    return {f["name"]: f["type"][0] for f in schema["fields"]}


def test_avro_as_glue_writes_it_version_1_7_strings_1_8_logical_types_codecs_and_local_paths(
    glue, local_aws, bucket, sample, tmp_path, caplog
):
    """Avro was always written with logical types, its connection compression refused,
    a format_options compression refused, and a local path failed on pip-installed
    PySpark (no spark-avro jar)."""
    s3 = local_aws.client("s3")
    typed = (
        sample.drop("inner")
        .coalesce(1)
        .withColumns({"price": F.expr("CAST(id * 1.5 AS DECIMAL(10,2))"), "day": F.to_date("at")})
    )
    frame = DynamicFrame.fromDF(typed, glue, "typed")
    write = glue.write_dynamic_frame.from_options
    # a local path on pip-installed PySpark (no spark-avro jar), the snappy codec
    write(
        frame=frame,
        connection_type="s3",
        format="avro",
        connection_options={"path": str(tmp_path / "v17"), "compression": "snappy"},
    )
    write(
        frame=frame,
        connection_type="s3",
        format="avro",
        connection_options={"path": f"s3://{bucket}/v18/"},
        format_options={"version": "1.8", "compression": "gzip"},  # Glue ignores this one
    )
    assert any("avro format_options [\"compression='gzip'\"]" in m for m in caplog.messages)
    files = _avro_files(p.read_bytes() for p in (tmp_path / "v17").rglob("*.avro"))
    assert files and {codec for _, _, codec in files} == {"snappy"}
    for schema, _, _ in files:
        assert [_field_types(schema)[k] for k in ("price", "day", "at")] == ["string"] * 3
    records = [r for _, rows, _ in files for r in rows]
    assert sorted((r["id"], r["price"], r["day"], r["at"]) for r in records) == [
        (1, "1.50", "2026-04-09", "2026-04-09 07:05:00"),
        (2, "3.00", "2026-04-10", "2026-04-10 08:00:00"),
        (3, "4.50", "2026-04-11", "2026-04-11 09:30:00"),
    ]
    files = _avro_files(s3_objects(s3, bucket, "v18/").values())
    assert {codec for _, _, codec in files} == {"null"}
    for schema, _, _ in files:
        types = _field_types(schema)
        assert [types[k]["logicalType"] for k in ("price", "day", "at")] == [
            "decimal",
            "date",
            "timestamp-micros",
        ]
    records = [r for _, rows, _ in files for r in rows]
    assert sorted(str(r["price"]) for r in records) == ["1.50", "3.00", "4.50"]

    # a gzip "archive" of the Avro file, as AWS's Avro page lists it
    frame.write("s3", {"path": str(tmp_path / "gz"), "compression": "gzip"}, "avro", {})
    archives = sorted((tmp_path / "gz").rglob("*.avro.gz"))
    back = _avro_files(p.read_bytes() for p in archives)
    assert archives and {codec for _, _, codec in back} == {"null"}
    assert sorted(r["id"] for _, records, _ in back for r in records) == [1, 2, 3]


def test_csv_quote_char_minus_one_writes_values_unquoted(glue, sample, tmp_path):
    """quoteChar -1 (quoting off, as AWS documents it) failed at write time."""
    frame = DynamicFrame.fromDF(sample.select("id", "text"), glue, "sample")
    frame.write("s3", {"path": str(tmp_path / "csv")}, "csv", {"quoteChar": -1})
    files = [f.read_text().splitlines() for f in (tmp_path / "csv").rglob("*.csv")]
    assert files and all(lines[0] == "id,text" for lines in files)
    assert sorted(line for lines in files for line in lines[1:]) == ["1,x,1", "2,y|2", "3,"]
    # a DynamicFrameCollection is written frame by frame, as Glue's DataSink.write (refused)
    collection = DynamicFrameCollection({"one": frame}, glue)
    glue.write_dynamic_frame.from_options(
        frame=collection,
        connection_type="s3",
        connection_options={"path": str(tmp_path / "c")},
        format="json",
    )
    back = [json.loads(line) for f in (tmp_path / "c").rglob("*.json") for line in f.open()]
    assert sorted(r["id"] for r in back) == [1, 2, 3]


def _catalog_partitions(catalog, database, table):
    pages = catalog.get_paginator("get_partitions").paginate(DatabaseName=database, TableName=table)
    return {
        tuple(p["Values"]): p["StorageDescriptor"]["Location"]
        for page in pages
        for p in page["Partitions"]
    }


def test_get_sink_with_set_catalog_info_creates_the_table_and_from_catalog_updates_it(
    glue, local_aws, bucket, unique_name
):
    """AWS's "adding new partitions" shapes, refused before (no getSink; enableUpdateCatalog
    not provided): getSink + setFormat + setCatalogInfo + writeFrame on a table not yet in
    the catalog creates it; a later from_catalog write with a new column and a new
    partition updates its columns (UPDATE_IN_DATABASE) and adds the partition. Every
    record reads back from the locations the catalog gives."""
    catalog, s3 = local_aws.client("glue"), local_aws.client("s3")
    database, table = "glue_tests", unique_name.replace("-", "_")
    with contextlib.suppress(catalog.exceptions.AlreadyExistsException):
        catalog.create_database(DatabaseInput={"Name": database})
    first = [(i, ("eu", "us")[i % 2], i / 2) for i in range(6)]
    second = [(i, "ap", i / 2, f"n{i}") for i in range(6, 9)]
    spark = glue.spark_session
    sink = glue.getSink(
        connection_type="s3",
        path=f"s3://{bucket}/fresh/",
        enableUpdateCatalog=True,
        updateBehavior="UPDATE_IN_DATABASE",
        partitionKeys=["region"],
    )
    sink.setFormat("glueparquet")
    sink.setCatalogInfo(catalogDatabase=database, catalogTableName=table)
    frame = spark.createDataFrame(first, "id long, region string, amount double")
    sink.writeFrame(DynamicFrame.fromDF(frame, glue, "first"))
    created = catalog.get_table(DatabaseName=database, Name=table)["Table"]
    assert [c["Name"] for c in created["StorageDescriptor"]["Columns"]] == ["id", "amount"]
    assert created["Parameters"]["classification"] == "parquet"

    later = spark.createDataFrame(second, "id long, region string, amount double, note string")
    glue.write_dynamic_frame.from_catalog(
        frame=DynamicFrame.fromDF(later, glue, "second"),
        database=database,
        table_name=table,
        additional_options={"enableUpdateCatalog": True, "partitionKeys": ["region"]},
    )
    updated = catalog.get_table(DatabaseName=database, Name=table)["Table"]
    assert [c["Name"] for c in updated["StorageDescriptor"]["Columns"]] == ["id", "amount", "note"]
    partitions = _catalog_partitions(catalog, database, table)
    assert partitions == {(r,): f"s3://{bucket}/fresh/region={r}/" for r in ("eu", "us", "ap")}
    back = []
    for (region,), location in partitions.items():
        prefix = location.split(f"s3://{bucket}/", 1)[1]
        for key, body in s3_objects(s3, bucket, prefix).items():
            assert key.endswith(".parquet")
            back += [(r["id"], region) for r in pq.read_table(io.BytesIO(body)).to_pylist()]
    assert sorted(back) == sorted([(i, r) for i, r, _ in first] + [(i, r) for i, r, _, _ in second])


def test_a_kinesis_avro_table_defined_only_by_its_columns_reads_through_glue(
    glue, session, local_aws, kinesis, stream, unique_name, tmp_path
):
    """The console's "define a schema" Avro table (columns, no avroSchema) failed at
    from_catalog with "classification avro needs option schema"; Glue builds the record
    schema from the columns, and so does this layer: a producer writing with that schema
    is read back whole."""
    from kinesis_dstream.glue.sinks.avro_types import columns_avro_schema

    from .test_sql_connectors import available_now

    columns = [("id", "bigint"), ("name", "string"), ("tags", "array<string>")]
    table = unique_name.replace("-", "_")
    create_kinesis_table(
        local_aws.client("glue"),
        "glue_tests",
        table,
        {"streamName": stream, "endpointUrl": local_aws.endpoint_url},
        {"classification": "avro"},
        columns,
    )
    schema = fastavro.parse_schema(
        json.loads(columns_avro_schema([{"Name": n, "Type": t} for n, t in columns]))
    )
    sent = [{"id": i, "name": f"n{i}", "tags": ["a", str(i)]} for i in range(20)]

    def datum(i):
        out = io.BytesIO()
        fastavro.schemaless_writer(out, schema, sent[i])
        return out.getvalue()

    put_records(kinesis, stream, len(sent), data=datum)
    frame = glue.create_data_frame.from_catalog(
        database="glue_tests",
        table_name=table,
        additional_options={"startingPosition": "TRIM_HORIZON"},
    )
    _, rows = available_now(session, frame, tmp_path, f"avro_columns_{table}")
    assert sorted((r.id, r.name, list(r.tags)) for r in rows) == [
        (s["id"], s["name"], s["tags"]) for s in sent
    ]
