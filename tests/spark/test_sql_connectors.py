"""Queries written only with each JVM connector's documented option names, end to end.

Each test reads the way its seed's own examples do (../shared/seeds), on local Spark and
moto's server, and checks that every record arrives exactly once with the columns that
connector documents.
"""

from __future__ import annotations

import json

import pytest

from kinesis_dstream import KinesisProducer
from kinesis_dstream.retrieval.streams import ensure_stream

from ..support.records import put_records
from ..support.streaming import running

pytestmark = pytest.mark.spark

DATABRICKS_COLUMNS = [
    "partitionKey",
    "data",
    "stream",
    "shardId",
    "sequenceNumber",
    "approximateArrivalTimestamp",
]
AWSLABS_COLUMNS = [
    "data",
    "streamName",
    "partitionKey",
    "sequenceNumber",
    "approximateArrivalTimestamp",
]


def put(kinesis, stream, n, prefix):
    """{data: partition key} of ``n`` records ``{prefix}-{i}`` keyed ``{prefix}-key-{i}``."""
    return put_records(kinesis, stream, n, data=prefix + "-{i}", key=prefix + "-key-{i}")


def available_now(session, df, tmp_path, table):
    """Run ``df`` into a memory table with Trigger.AvailableNow; its rows."""
    query = (
        df.writeStream.format("memory")
        .queryName(table)
        .option("checkpointLocation", str(tmp_path / f"cp-{table}"))
        .trigger(availableNow=True)
        .start()
    )
    with running(query):
        assert query.awaitTermination(180), f"{table}: AvailableNow did not stop within 180 s"
        assert query.exception() is None, query.exception()
    return query, session.sql(f"select * from {table}").collect()


def test_databricks_options_two_streams_several_shards_a_task(
    session, local_aws, kinesis, unique_name, tmp_path
):
    streams = [f"{unique_name}-a", f"{unique_name}-b"]
    sent = {}
    for index, stream in enumerate(streams):
        ensure_stream(kinesis, stream, 3)
        sent[stream] = put(kinesis, stream, 1_500, f"s{index}")
    df = (
        session.readStream.format("kinesis")
        .option("streamName", ",".join(streams))
        .option("region", local_aws.region_name)
        .option("endpoint", local_aws.endpoint_url)
        .option("initialPosition", "earliest")
        .option("maxRecordsPerFetch", "1000")
        .option("minFetchPeriod", "200ms")
        .option("maxFetchDuration", "5s")
        .option("fetchBufferSize", "10mb")
        .option("shardsPerTask", "4")
        .option("shardFetchInterval", "1s")
        .option("maxShardsPerDescribe", "100")  # moto rejects the AWS way of paging
        .option("coalesceThresholdBlockSize", "10000000")
        .load()
    )
    assert set(DATABRICKS_COLUMNS) <= set(df.columns)
    query, rows = available_now(session, df, tmp_path, "databricks_two")
    assert len(rows) == 3_000
    for row in rows:
        assert sent[row.stream][row.data.decode()] == row.partitionKey
        assert row.shardId.startswith("shardId-") and int(row.sequenceNumber) > 0
        assert row.approximateArrivalTimestamp is not None
    assert {row.data.decode() for row in rows} == set(sent[streams[0]]) | set(sent[streams[1]])
    assert {row.stream for row in rows} == set(streams)
    end_offset = json.dumps(query.lastProgress["sources"][0]["endOffset"])
    assert all(stream in end_offset for stream in streams)  # one offset per stream


def test_awslabs_options_and_columns(session, local_aws, kinesis, unique_name, tmp_path):
    ensure_stream(kinesis, unique_name, 2)
    sent = put(kinesis, unique_name, 2_000, "aws")
    df = (
        session.readStream.format("aws-kinesis")
        .option("kinesis.region", local_aws.region_name)
        .option("kinesis.streamName", unique_name)
        .option("kinesis.consumerType", "GetRecords")
        .option("kinesis.endpointUrl", local_aws.endpoint_url)
        .option("kinesis.startingposition", "TRIM_HORIZON")
        .option("kinesis.metadataPath", str(tmp_path / "metadata"))
        .option("kinesis.maxFetchRecordsPerShard", "400")
        .option("kinesis.maxFetchTimePerShardSec", "10")
        .option("kinesis.clientNumRetries", "5")
        .option("kinesis.clientRetryIntervalsMs", "100")
        .option("kinesis.clientMaxRetryIntervalMs", "1000")
        .option("kinesis.checkNewRecordThreads", "2")
        .option("kinesis.minBatchesToRetain", "3")
        .load()
    )
    assert df.columns[: len(AWSLABS_COLUMNS)] == AWSLABS_COLUMNS
    query, rows = available_now(session, df.selectExpr(*AWSLABS_COLUMNS), tmp_path, "awslabs")
    assert len(rows) == 2_000
    assert {r.data.decode(): r.partitionKey for r in rows} == sent
    assert {r.streamName for r in rows} == {unique_name}
    assert max(p["numInputRows"] for p in query.recentProgress) <= 2 * 400


def test_glue_write_options_key_by_column_or_fixed_aggregated_in_bounds(
    session, local_aws, kinesis, unique_name
):
    from kinesis_dstream.demo.readback import read_all_records
    from kinesis_dstream.kpl import deaggregate, is_aggregated

    ensure_stream(kinesis, unique_name, 2)
    summary = kinesis.describe_stream_summary(StreamName=unique_name)
    arn = summary["StreamDescriptionSummary"]["StreamARN"]
    rows = [(f"v{i}", f"user-{i % 7}") for i in range(300)]
    df = session.createDataFrame(rows, "data string, user string")
    glue = {
        "streamARN": arn,
        "endpointUrl": local_aws.endpoint_url,
        "aggregationEnabled": "true",
        "aggregationMaxCount": "10",
        "aggregationMaxSize": "51200",
        "collectionMaxCount": "100",
        "collectionMaxSize": "5242880",
        "recordMaxBufferedTime": "1000",
        "producerRateLimit": "150",
    }
    df.write.format("kinesis").mode("append").options(**glue, partitionKey="user").save()
    writer = df.select("data").write.format("kinesis").mode("append")
    writer.options(**glue, partitionKey="fixed").save()
    raw = read_all_records(kinesis, unique_name)
    assert any(is_aggregated(r["Data"]) for r in raw)
    users = deaggregate(raw)
    assert len(users) == 600
    by_column = [u for u in users if u.partition_key != "fixed"]
    assert sorted((u.data.decode(), u.partition_key) for u in by_column) == sorted(rows)
    assert sorted(u.data.decode() for u in users if u.partition_key == "fixed") == sorted(
        d for d, _ in rows
    )
    assert max(len(deaggregate([r])) for r in raw) == 10  # aggregationMaxCount


@pytest.mark.parametrize(
    "classification, compress",
    [("json", False), ("json", True), ("csv", False), ("csv", True)],
)
def test_glue_options_give_the_parsed_payload(
    session, local_aws, kinesis, unique_name, tmp_path, classification, compress
):
    import gzip
    import json as json_module

    ensure_stream(kinesis, unique_name, 2)
    rows = [(i, f"name-{i}", i * 1.5) for i in range(400)]
    with KinesisProducer(unique_name, client=kinesis) as producer:
        for i, name, score in rows:
            if classification == "json":
                text = json_module.dumps({"id": i, "name": name, "score": score, "extra": 1})
            else:
                text = f"{i};{name};{score}"
            data = text.encode()
            producer.put(gzip.compress(data) if compress else data, f"k{i}")
        producer.put(b"\x00 not a record", "bad")
    summary = kinesis.describe_stream_summary(StreamName=unique_name)
    # the seed's own example: streamARN, startingPosition, inferSchema, classification
    glue = {
        "streamARN": summary["StreamDescriptionSummary"]["StreamARN"],
        "endpointUrl": local_aws.endpoint_url,
        "startingPosition": "TRIM_HORIZON",
        "classification": classification,
        "addRecordTimestamp": "true",
    }
    if classification == "json":
        glue["inferSchema"] = "true"
    else:
        glue.update(schema="`id` INT, `name` STRING, `score` DOUBLE", delimiter=";")
    df = session.readStream.format("kinesis").options(**glue).load()
    assert df.columns[:3] == ["id", "name", "score"]
    assert df.columns[-2:] == ["_corrupt_record", "__src_timestamp"]
    _, got = available_now(
        session,
        df.drop("extra") if "extra" in df.columns else df,
        tmp_path,
        f"glue_{classification}_{int(compress)}",
    )
    good = [r for r in got if r._corrupt_record is None]
    assert sorted((r.id, r.name, r.score) for r in good) == rows
    assert all(r["__src_timestamp"] is not None for r in got)
    [bad] = [r for r in got if r._corrupt_record is not None]
    assert bad._corrupt_record == b"\x00 not a record" and bad.id is None
