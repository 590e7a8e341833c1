"""The frames a Glue script sees are Glue's shapes: inferSchema's text column inferred per
batch, and source frames with the data's columns only (issue 42)."""
# ruff: noqa: F811 (the fixtures imported from test_glue are test arguments here)

from __future__ import annotations

import io
import json
import logging

import pyarrow.parquet as pq
from pyspark.sql.functions import col, from_json
from pyspark.sql.types import LongType, StringType, StructField, StructType

from kinesis_dstream.glue.frames.dynamicframe import DynamicFrame
from kinesis_dstream.glue.streaming.foreach_batch import BatchLoop
from kinesis_dstream.glue.transforms import ApplyMapping

from ..support.glue import json_rows, running_loop, s3_objects, wait_for_rows
from ..support.records import put_records
from ..support.waiting import wait_until

# The Glue tests' fixtures (the local AWS as the SDK's endpoint, a GlueContext, a bucket).
from .test_glue import INGEST_HOUR, bucket, glue, glue_env, json_stream, loop_options  # noqa: F401

TEXT = "$json$data_infer_schema$_temporary$"


def test_an_infer_schema_job_starts_on_an_empty_stream_and_reads_each_batch_in_its_shape(
    glue, local_aws, kinesis, stream, bucket, tmp_path, caplog
):
    """Glue Studio's shape (ingestion columns, then DynamicFrame.fromDF) on an empty stream
    that later changes shape; the same batches read by a script selecting the text column."""
    frame = json_stream(glue, kinesis, stream, inferSchema="true")
    assert frame.columns == [TEXT]  # nothing read to infer: the stream is empty
    shapes: list = []
    selected: list = []
    envelope = StructType([StructField("id", LongType()), StructField("name", StringType())])

    def processBatch(data_frame, batchId):
        if data_frame.count() > 0:
            ids = data_frame.select(
                from_json(col(TEXT).cast("string"), envelope).alias("d")
            ).select("d.*")
            selected.extend(row.id for row in ids.collect() if row.id is not None)
            node = DynamicFrame.fromDF(
                glue.add_ingestion_time_columns(data_frame, "hour"), glue, "from_data_frame"
            )
            shapes.append(node.toDF().columns)
            glue.write_dynamic_frame.from_options(
                frame=node,
                connection_type="s3",
                format="json",
                connection_options={"path": f"s3://{bucket}/out/", "partitionKeys": INGEST_HOUR},
            )

    s3 = local_aws.client("s3")
    caplog.set_level(logging.WARNING, "kinesis_dstream.glue")
    with running_loop(BatchLoop, frame, processBatch, loop_options(tmp_path)) as loop:
        wait_until(lambda: loop.loop.batches_seen >= 1, 120, "a batch", failed=loop.failed)
        put_records(kinesis, stream, 30, data=lambda i: json.dumps({"id": i, "name": f"n{i}"}))
        wait_for_rows(s3, bucket, "out/", 30, loop)
        put_records(
            kinesis,
            stream,
            30,
            data=lambda i: json.dumps({"id": i, "price": i / 4, "tags": ["t", str(i)]}),
            start=30,
        )
        put_records(kinesis, stream, 1, data="not json", start=60)
        rows = [row for _, row in wait_for_rows(s3, bucket, "out/", 60, loop)]
    assert shapes[0] == ["id", "name", *INGEST_HOUR]
    assert shapes[-1] == ["id", "price", "tags", *INGEST_HOUR]
    assert sorted(rows, key=lambda r: r["id"]) == [
        {"id": i, "name": f"n{i}"} for i in range(30)
    ] + [{"id": i, "price": i / 4, "tags": ["t", str(i)]} for i in range(30, 60)]
    assert sorted(selected) == list(range(60))
    assert "1 records of the batch are not json objects (first: 'not json')" in caplog.text


def test_a_glue_studio_kinesis_to_s3_job_writes_the_data_s_columns_and_counts_a_bad_record(
    glue, local_aws, kinesis, stream, bucket, tmp_path, caplog
):
    """A fixed schema (Glue Studio's "define a schema"), JSON and Parquet out: exactly the
    mapped columns, as on Glue; the record that does not parse is counted for its batch."""
    schema = "`id` BIGINT, `name` STRING, `price` STRING"
    frame = json_stream(glue, kinesis, stream, inferSchema="false", schema=schema)
    assert frame.columns == ["id", "name", "price"]

    def processBatch(data_frame, batchId):
        if data_frame.count() > 0:
            node = DynamicFrame.fromDF(
                glue.add_ingestion_time_columns(data_frame, "hour"), glue, "from_data_frame"
            )
            mapped = ApplyMapping.apply(
                frame=node,
                mappings=[
                    ("id", "bigint", "id", "bigint"),
                    ("name", "string", "name", "string"),
                    ("price", "string", "price", "decimal"),
                ]
                + [(c, "string", c, "string") for c in INGEST_HOUR],
            )
            for fmt in ("json", "glueparquet"):
                glue.write_dynamic_frame.from_options(
                    frame=mapped,
                    connection_type="s3",
                    format=fmt,
                    connection_options={
                        "path": f"s3://{bucket}/{fmt}/",
                        "partitionKeys": INGEST_HOUR,
                    },
                )

    sent = [{"id": i, "name": f"n{i}", "price": f"{i}.25"} for i in range(40)]
    put_records(kinesis, stream, 40, data=lambda i: json.dumps(sent[i]))
    put_records(kinesis, stream, 1, data=lambda i: "{broken", start=40)
    s3 = local_aws.client("s3")
    caplog.set_level(logging.WARNING, "kinesis_dstream.glue")
    with running_loop(BatchLoop, frame, processBatch, loop_options(tmp_path)) as loop:
        wait_for_rows(s3, bucket, "json/", 41, loop)
        tables: list = []

        def parquet_rows():
            objects = s3_objects(s3, bucket, "glueparquet/").values()
            tables[:] = [pq.read_table(io.BytesIO(body)) for body in objects]
            return sum(t.num_rows for t in tables) >= 41

        wait_until(parquet_rows, 60, "41 Parquet rows", failed=loop.failed)
        # the count comes with the batch's progress event, delivered after the batch
        line = "records did not parse and are not in the frame"
        wait_until(lambda: line in caplog.text, 30, "the batch's count in the log")
    rows = [row for _, row in json_rows(s3_objects(s3, bucket, "json/"))]
    assert all(set(row) <= {"id", "name", "price"} for row in rows)
    assert sorted((r for r in rows if r), key=lambda r: r["id"]) == [
        {**row, "price": float(row["price"])} for row in sent
    ]
    assert {tuple(t.column_names) for t in tables} == {("id", "name", "price")}
    assert {str(t.schema.field("price").type) for t in tables} == {"decimal128(10, 2)"}


def test_from_df_infers_each_batch_s_texts_in_place_and_keeps_bad_ones_only_on_request(
    glue, session, caplog
):
    """DynamicFrame.fromDF of inferSchema batches (no stream: the batches themselves)."""
    from kinesis_dstream.glue.sources.infer_schema import CSV_TEXT_COLUMN, METADATA_KEY

    def batch(column, texts, **how):
        df = session.createDataFrame([(t, "2026") for t in texts], [column, "ingest_year"])
        return df.withMetadata(column, {METADATA_KEY: how}) if how else df

    texts = ['{"a": 1, "b": {"c": "x"}}', '{"a": 2, "d": [1.5]}', "oops", ""]
    caplog.set_level(logging.WARNING, "kinesis_dstream.glue")
    plain = DynamicFrame.fromDF(batch(TEXT, texts), glue, "from_data_frame").toDF()
    assert plain.columns == ["a", "b", "d", "ingest_year"]
    assert [r.a for r in plain.collect()] == [1, 2]  # the bad record is left out...
    assert "2 records of the batch are not json objects (first: " in caplog.text
    kept = DynamicFrame.fromDF(
        batch(TEXT, texts, classification="json", corrupt="bad"), glue, "x"
    ).toDF()
    assert [r.bad for r in kept.collect()] == [None, None, "oops", ""]  # ...or kept on request
    csv = DynamicFrame.fromDF(
        batch(CSV_TEXT_COLUMN, ["1|x", "2|y"], classification="csv", delimiter="|"), glue, "x"
    ).toDF()
    assert csv.dtypes == [("_c0", "int"), ("_c1", "string"), ("ingest_year", "string")]
    # (review) a later line longer than the first keeps its extra fields
    longer = DynamicFrame.fromDF(
        batch(CSV_TEXT_COLUMN, ["1|x", "2|y|z|w"], classification="csv", delimiter="|"),
        glue,
        "x",
    ).toDF()
    assert [tuple(r)[:4] for r in longer.orderBy("_c0").collect()] == [
        (1, "x", None, None),
        (2, "y", "z", "w"),
    ]


def test_a_script_s_own_write_stream_logs_each_batch_s_records_that_did_not_parse(
    glue, session, kinesis, stream, tmp_path, caplog
):
    """No forEachBatch: the counts come with the micro-batch's progress all the same."""
    from .test_sql_connectors import available_now

    put_records(kinesis, stream, 5, data=lambda i: json.dumps({"id": i}))
    put_records(kinesis, stream, 1, data=lambda i: "{broken", start=5)
    frame = json_stream(glue, kinesis, stream, schema="`id` BIGINT")
    caplog.set_level(logging.WARNING, "kinesis_dstream.glue")
    _, rows = available_now(session, frame, tmp_path, "glue_write_stream")
    assert frame.columns == ["id"] and sorted(r.id for r in rows if r.id is not None) == [
        0,
        1,
        2,
        3,
        4,
    ]
    line = "1 records did not parse and are not in the frame"
    wait_until(lambda: line in caplog.text, 30, "the batch's count in the log")
