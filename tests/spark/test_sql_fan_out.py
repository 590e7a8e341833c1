"""The source with enhanced fan-out (SubscribeToShard) under each connector's options.

On local Spark and ministack (the local server here that speaks SubscribeToShard; see
tests/support/ministack_server.py). Every range is read in its executor task through the
stream consumer the driver found or registered.
"""

from __future__ import annotations

import time
import uuid

import pytest

from kinesis_dstream import KinesisProducer
from kinesis_dstream.retrieval.consumers import list_consumers, register_consumer
from kinesis_dstream.retrieval.streams import ensure_stream

from ..support.records import put_records
from ..support.streaming import running

pytestmark = pytest.mark.spark


def fill(kinesis, stream):
    """10,000 user records over 4 shards: 9,000 plain, 1,000 inside KPL aggregates."""
    ensure_stream(kinesis, stream, 4)
    sent = set()
    for aggregate, count, prefix in ((False, 9000, "plain"), (True, 1000, "kpl")):
        data, key = prefix + "-{i}", prefix + "-key-{i}"
        sent |= set(put_records(kinesis, stream, count, data=data, key=key, aggregate=aggregate))
    return sent


def read_all(session, reader, tmp_path, name):
    query = (
        reader.load()
        .selectExpr("cast(data as string) as data", "subSequenceNumber")
        .writeStream.format("memory")
        .queryName(name)
        .option("checkpointLocation", str(tmp_path / f"cp-{name}"))
        .trigger(availableNow=True)
        .start()
    )
    with running(query):
        assert query.awaitTermination(240), f"{name}: AvailableNow did not stop in 240 s"
        assert query.exception() is None, query.exception()
    return session.sql(f"select * from {name}").collect()


def test_databricks_efo_reads_every_record_once_and_deregisters_on_stop(
    session, ministack, unique_name, tmp_path
):
    kinesis = ministack.client("kinesis")
    sent = fill(kinesis, unique_name)
    consumer = f"dbx-{uuid.uuid4().hex[:8]}"
    reader = (
        session.readStream.format("kinesis")
        .option("streamName", unique_name)
        .option("region", ministack.region_name)
        .option("endpoint", ministack.endpoint_url)
        .option("initialPosition", "trim_horizon")
        .option("metadataPath", str(tmp_path / "ends"))
        .option("consumerMode", "efo")
        .option("consumerName", consumer)
        .option("requireConsumerDeregistration", "true")
    )
    rows = read_all(session, reader, tmp_path, "dbx_efo")
    assert len(rows) == 10_000 and {r.data for r in rows} == sent
    assert any(r.subSequenceNumber > 0 for r in rows)  # the KPL records came de-aggregated
    deadline = time.monotonic() + 30  # the source's stop() runs as its runner winds down
    while consumer in [c.name for c in list_consumers(kinesis, unique_name)]:
        assert time.monotonic() < deadline, f"consumer {consumer} not deregistered in 30 s"
        time.sleep(0.2)


def test_awslabs_subscribe_to_shard_keeps_its_consumer(session, ministack, unique_name, tmp_path):
    kinesis = ministack.client("kinesis")
    sent = fill(kinesis, unique_name)
    reader = (
        session.readStream.format("aws-kinesis")
        .option("kinesis.region", ministack.region_name)
        .option("kinesis.streamName", unique_name)
        .option("kinesis.consumerType", "SubscribeToShard")
        .option("kinesis.endpointUrl", ministack.endpoint_url)
        .option("kinesis.startingposition", "TRIM_HORIZON")
        .option("kinesis.consumerName", "TestConsumer")
        .option("kinesis.metadataPath", str(tmp_path / "ends"))
    )
    rows = read_all(session, reader, tmp_path, "awslabs_efo")
    assert len(rows) == 10_000 and {r.data for r in rows} == sent
    assert "TestConsumer" in [c.name for c in list_consumers(kinesis, unique_name)]


def test_glue_fanout_consumer_arn_uses_that_consumer(session, ministack, unique_name, tmp_path):
    kinesis = ministack.client("kinesis")
    sent = fill(kinesis, unique_name)
    consumer = register_consumer(kinesis, unique_name, "glue-consumer")
    summary = kinesis.describe_stream_summary(StreamName=unique_name)
    reader = (
        session.readStream.format("kinesis")
        .option("streamARN", summary["StreamDescriptionSummary"]["StreamARN"])
        .option("endpointUrl", ministack.endpoint_url)
        .option("startingPosition", "TRIM_HORIZON")
        .option("fanoutConsumerARN", consumer.arn)
        .option("metadataPath", str(tmp_path / "ends"))
    )
    rows = read_all(session, reader, tmp_path, "glue_efo")
    assert len(rows) == 10_000 and {r.data for r in rows} == sent
    assert [c.name for c in list_consumers(kinesis, unique_name)] == ["glue-consumer"]


def test_a_polling_query_and_a_fan_out_query_both_get_every_record(
    session, ministack, unique_name, tmp_path
):
    kinesis = ministack.client("kinesis")
    ensure_stream(kinesis, unique_name, 2)
    queries = {}
    for name, extra in (("poll_q", {}), ("efo_q", {"consumerMode": "efo"})):
        reader = (
            session.readStream.format("kinesis")
            .option("streamName", unique_name)
            .option("endpointUrl", ministack.endpoint_url)
            .option("region", ministack.region_name)
            .option("initialPosition", "trim_horizon")
            .option("metadataPath", str(tmp_path / f"ends-{name}"))
            .options(**extra)
            .load()
        )
        queries[name] = (
            reader.selectExpr("cast(data as string) as data")
            .writeStream.format("memory")
            .queryName(name)
            .option("checkpointLocation", str(tmp_path / f"cp-{name}"))
            .trigger(processingTime="1 second")
            .start()
        )
    try:
        sent = set()
        with KinesisProducer(unique_name, client=kinesis) as producer:
            for i in range(2000):
                producer.put(f"r-{i}", f"k-{i}")
                sent.add(f"r-{i}")
        deadline = time.monotonic() + 180
        for name, query in queries.items():
            while session.sql(f"select count(*) from {name}").collect()[0][0] < len(sent):
                assert query.exception() is None, query.exception()
                assert time.monotonic() < deadline, f"{name}: not every record within 180 s"
                time.sleep(0.5)
    finally:
        for query in queries.values():
            if query.isActive:
                query.stop()
    for name in queries:
        rows = [r.data for r in session.sql(f"select data from {name}").collect()]
        assert len(rows) == len(sent) and set(rows) == sent, name
