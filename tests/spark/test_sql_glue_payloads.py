"""The two payloads a Glue Kinesis job reads beside json/csv/avro, end to end through
``spark.readStream.format("kinesis")``: grok log lines, and Glue Schema Registry Avro
(moto's registry, behind a proxy that counts the executors' GetSchemaVersion calls)."""

from __future__ import annotations

import gzip
import math
import uuid

import pytest

from kinesis_dstream import KinesisProducer
from kinesis_dstream.retrieval.streams import ensure_stream
from kinesis_dstream.schema_registry import GlueSchemaRegistrySerializer, frame

from ..integration.test_schema_registry import V1, V2, by_id
from ..support.fault_proxy import FaultProxy
from ..support.weblog import COLUMNS, CUSTOM_PATTERNS, PATTERN, weblog
from .test_sql_connectors import available_now

pytestmark = pytest.mark.spark


def test_grok_weblog_every_field_right_bad_lines_corrupt(
    session, local_aws, kinesis, unique_name, tmp_path
):
    lines, expected = weblog(1_200)
    ensure_stream(kinesis, unique_name, 2)
    payloads = {}
    with KinesisProducer(unique_name, client=kinesis) as producer:
        for i, line in enumerate(lines):
            data = line.encode()
            payloads[i] = gzip.compress(data) if i % 10 == 3 else data
            producer.put(payloads[i], f"line-{i}")
    df = (
        session.readStream.format("kinesis")
        .options(
            streamName=unique_name,
            endpointUrl=local_aws.endpoint_url,
            startingPosition="TRIM_HORIZON",
            classification="grok",
            grokPattern=PATTERN,
            grokCustomPatterns=CUSTOM_PATTERNS,
        )
        .load()
    )
    assert df.columns == [*COLUMNS, "_corrupt_record"]
    assert dict(df.dtypes)["worker"] == "smallint" and dict(df.dtypes)["bytes"] == "bigint"
    _, rows = available_now(session, df, tmp_path, "grok_weblog")
    assert len(rows) == 1_200
    by_payload = {bytes(r._corrupt_record): r for r in rows if r._corrupt_record is not None}
    assert sorted(by_payload) == sorted(payloads[i] for i, e in enumerate(expected) if e is None)
    good = {(r.request, r.latency_ms): r for r in rows if r._corrupt_record is None}
    assert len(good) == 1_200 - len(by_payload)
    for want in (e for e in expected if e is not None):
        row = good[(want["request"], want["latency_ms"])]
        for column in COLUMNS:
            if column == "httpversion":
                assert math.isclose(row[column], want[column], rel_tol=1e-6)
            else:
                assert row[column] == want[column], column


def test_registry_avro_two_versions_zlib_unknown_ids_and_calls_per_version(
    session, local_aws, kinesis, registry_name, tmp_path
):
    unique_name = registry_name
    glue = local_aws.client("glue")
    first = GlueSchemaRegistrySerializer(V1, unique_name, client=glue, compression="zlib")
    second = GlueSchemaRegistrySerializer(V2, unique_name, client=glue)
    assert first.version_id != second.version_id  # registered in this order: V2 is the latest
    unknown = str(uuid.uuid4())
    ensure_stream(kinesis, unique_name, 2)
    want = {}
    with KinesisProducer(unique_name, client=kinesis) as producer:
        for i in range(400):
            if i % 2:
                data = first.serialize({"id": i, "item": f"item-{i}"})
                want[i] = (i, f"item-{i}", -1.0)
            else:
                data = second.serialize({"id": i, "item": f"item-{i}", "total": i / 8})
                want[i] = (i, f"item-{i}", i / 8)
            producer.put(data, f"order-{i}")
        strangers = [frame(b"\x02", unknown), b'{"id": 1}']
        for data in strangers:
            producer.put(data, "stranger")
    proxy = FaultProxy(local_aws.endpoint_url).start()
    proxy.record("GetSchemaVersion")
    try:
        df = (
            session.readStream.format("kinesis")
            .options(
                streamName=unique_name,
                endpointUrl=local_aws.endpoint_url,
                startingPosition="TRIM_HORIZON",
                classification="avro",
                registryName=unique_name,
                schemaName="Order",
                registryEndpointUrl=proxy.endpoint_url,
            )
            .load()
        )
        assert df.dtypes == [
            ("id", "bigint"), ("item", "string"), ("total", "double"), ("_corrupt_record", "binary")
        ]  # fmt: skip
        _, rows = available_now(session, df, tmp_path, "registry_orders")
    finally:
        proxy.stop()
    good = sorted((r.id, r.item, r.total) for r in rows if r._corrupt_record is None)
    assert good == sorted(want.values())
    assert sorted(bytes(r._corrupt_record) for r in rows if r.id is None) == sorted(strangers)
    # Each executor process asks for a version once (local[2]: at most two processes),
    # not once per record: 200 records of each version, one of the unknown id.
    calls = by_id(proxy)
    assert set(calls) == {first.version_id, second.version_id, unknown}
    assert max(calls.values()) <= 2, calls
