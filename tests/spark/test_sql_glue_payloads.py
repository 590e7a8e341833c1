"""The two payloads a Glue Kinesis job reads beside json/csv/avro, end to end through
``spark.readStream.format("kinesis")``: grok log lines, and Glue Schema Registry Avro
(moto's registry, behind a proxy that counts the executors' GetSchemaVersion calls); and
hostile payloads among good ones (issue 52)."""

from __future__ import annotations

import gzip
import json
import math
import uuid

import cramjam
import pytest
import zstandard

from kinesis_dstream import KinesisProducer
from kinesis_dstream.retrieval.streams import ensure_stream, list_shards
from kinesis_dstream.schema_registry import GlueSchemaRegistrySerializer, frame

from ..integration.test_schema_registry import V1, V2, by_id
from ..support.fault_proxy import FaultProxy
from ..support.kpl_bytes import aggregate, user_record
from ..support.weblog import COLUMNS, CUSTOM_PATTERNS, PATTERN, weblog
from .test_sql_connectors import available_now

pytestmark = pytest.mark.spark


def from_the_start(session, local_aws, stream: str, **options):
    """The source on ``stream`` from TRIM_HORIZON with the payload ``options``."""
    return (
        session.readStream.format("kinesis")
        .options(
            streamName=stream,
            endpointUrl=local_aws.endpoint_url,
            startingPosition="TRIM_HORIZON",
            **options,
        )
        .load()
    )


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
    df = from_the_start(
        session,
        local_aws,
        unique_name,
        classification="grok",
        grokPattern=PATTERN,
        grokCustomPatterns=CUSTOM_PATTERNS,
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


def test_poison_aggregates_a_zstd_bomb_and_deep_json_are_corrupt_rows_every_good_one_read(
    session, local_aws, kinesis, unique_name, tmp_path
):
    """Issue 52 through the source, inferSchema's sample included: KPL aggregates whose
    keys are not UTF-8 (their user records read), malformed ones (passed through whole: not
    JSON, so corrupt), a zstd record inflating to 256 MiB (refused at 128 MiB) and JSON
    nested 991 and 100,000 deep each one corrupt row; every good record, plain, gzip, zstd,
    framed Snappy or inside an aggregate, one row."""
    ensure_stream(kinesis, unique_name, 2)
    low = [s["HashKeyRange"]["StartingHashKey"] for s in list_shards(kinesis, unique_name)]
    codecs = [
        lambda d: d,
        gzip.compress,
        zstandard.ZstdCompressor().compress,
        lambda d: bytes(cramjam.snappy.compress(d)),
    ]
    want = {}
    with KinesisProducer(unique_name, client=kinesis, aggregate=True) as producer:
        for i in range(300):  # 100 aggregated (small records), 200 plain (compressed: not)
            data = json.dumps({"id": i, "v": f"g-{i}"}).encode()
            producer.put(codecs[i % 4](data) if i >= 100 else data, f"pk-{i}")
            want[i] = f"g-{i}"
    clean = aggregate([b"k"], [user_record(0, b'{"id": -1}'), user_record(0, b'{"id": -2}')])
    bad_key = aggregate(
        [b"\xff", b"\xed\xa0\x80"],
        [user_record(0, b'{"id": 900, "v": "k-0"}'), user_record(1, b'{"id": 901, "v": "k-1"}')],
    )
    want.update({900: "k-0", 901: "k-1"})
    corrupt = [
        clean[:-1] + bytes([clean[-1] ^ 1]),  # wrong MD5: a plain record
        clean[:-7],  # cut: a plain record
        aggregate([b"k"], [user_record(0, b'{"id": -3}'), user_record(2, b"{}")]),  # malformed
        zstandard.ZstdCompressor().compress(b"\0" * (256 * 1024 * 1024)),
        b'{"id": -4, "v": ' + b"[" * 990 + b"]" * 990 + b"}",
        b"[" * 100_000 + b"]" * 100_000,
    ]
    entries = [{"Data": d, "PartitionKey": "poison", "ExplicitHashKey": low[0]} for d in corrupt]
    entries.append({"Data": bad_key, "PartitionKey": "poison", "ExplicitHashKey": low[1]})
    assert kinesis.put_records(StreamName=unique_name, Records=entries)["FailedRecordCount"] == 0
    with KinesisProducer(unique_name, client=kinesis) as producer:  # and good ones after
        for i in range(300, 350):
            producer.put(json.dumps({"id": i, "v": f"g-{i}"}).encode(), f"pk-{i}")
            want[i] = f"g-{i}"
    df = from_the_start(session, local_aws, unique_name, classification="json", inferSchema="true")
    assert df.dtypes == [("id", "bigint"), ("v", "string"), ("_corrupt_record", "binary")]
    _, rows = available_now(session, df, tmp_path, "poison")
    good = {r.id: r.v for r in rows if r._corrupt_record is None}
    assert good == want
    assert sorted(bytes(r._corrupt_record) for r in rows if r._corrupt_record) == sorted(corrupt)
    assert len(rows) == len(want) + len(corrupt)
