"""Glue Schema Registry Avro against moto's Glue registry: the serializer registers and
frames, the source's parser reads two compatible versions into the reader's schema, and
the registry is asked once per version id per process (counted at a proxy in front of
moto, as the server sees the calls)."""

from __future__ import annotations

import io
import json
import uuid
from dataclasses import replace

import fastavro
import pytest

from kinesis_dstream.aws import AWSCredentials, ClientSpec
from kinesis_dstream.errors import CredentialsError, DependencyError
from kinesis_dstream.schema_registry import (
    GlueSchemaRegistryDeserializer,
    GlueSchemaRegistrySerializer,
    frame,
)
from kinesis_dstream.sql.parsing.payload import PayloadFormat, PayloadParser, output_schema
from kinesis_dstream.sql.parsing.registry import RegistrySchema

from ..support.fault_proxy import UNREACHABLE, FaultProxy
from ..unit.test_payload import records

V1 = {
    "type": "record",
    "name": "Order",
    "fields": [{"name": "id", "type": "long"}, {"name": "item", "type": "string"}],
}
V2 = {
    "type": "record",
    "name": "Order",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "item", "type": "string"},
        {"name": "total", "type": "double", "default": -1.0},
    ],
}
CREDENTIALS = AWSCredentials(access_key_id="testing", secret_access_key="testing")


@pytest.fixture
def registry(local_aws, registry_name):
    """A registry of its own on moto, and a proxy in front of moto recording the
    GetSchemaVersion calls."""
    glue = local_aws.client("glue")
    proxy = FaultProxy(local_aws.endpoint_url).start()
    proxy.record("GetSchemaVersion")
    try:
        yield glue, registry_name, proxy
    finally:
        proxy.stop()


def produce(glue, registry_name):
    """Orders written with two versions of one schema, half of them zlib-compressed."""
    first = GlueSchemaRegistrySerializer(V1, registry_name, client=glue, compression="zlib")
    plain_first = GlueSchemaRegistrySerializer(V1, registry_name, client=glue)
    second = GlueSchemaRegistrySerializer(V2, registry_name, "Order", client=glue)
    payloads, want = [], []
    for i in range(600):
        writer = first if i % 2 else plain_first
        payloads.append(writer.serialize({"id": i, "item": f"item-{i}"}))
        want.append({"id": i, "item": f"item-{i}", "total": -1.0})
    for i in range(600, 1200):
        payloads.append(second.serialize({"id": i, "item": f"item-{i}", "total": i / 4}))
        want.append({"id": i, "item": f"item-{i}", "total": i / 4})
    return first, second, payloads, want


def reader_format(proxy, registry_name, **more):
    options = {"registryName": registry_name, "schemaName": "Order", **more}
    options["registryEndpointUrl"] = proxy.endpoint_url
    fmt = PayloadFormat.parse("avro", registry=RegistrySchema.parse(options.get))
    return fmt.resolved("us-east-1", CREDENTIALS)


def by_id(proxy) -> dict:
    """GetSchemaVersion calls by schema version id, as the proxy saw them."""
    calls: dict = {}
    for body in proxy.recorded["GetSchemaVersion"]:
        if "SchemaVersionId" in body:
            calls[body["SchemaVersionId"]] = calls.get(body["SchemaVersionId"], 0) + 1
    return calls


def test_two_versions_read_into_the_latest_unknown_ids_and_strangers_corrupt(registry):
    glue, name, proxy = registry
    first, second, payloads, want = produce(glue, name)
    versions = {
        glue.get_schema_version(SchemaVersionId=s.version_id)["VersionNumber"]: s.version_id
        for s in (first, second)
    }
    assert sorted(versions) == [1, 2]  # CreateSchema, then RegisterSchemaVersion
    unknown = str(uuid.uuid4())
    strangers = [frame(b"\x02", unknown), json.dumps({"id": 1}).encode()]
    fmt = reader_format(proxy, name)
    assert fmt.registry.reader.version_id == versions[2]  # the latest, looked up once
    assert fmt.payload_ddl() == "`id` bigint, `item` string, `total` double"
    parser = PayloadParser(fmt, output_schema(fmt.avro_struct()))

    parsed, reasons = parser.parse_counted(records(payloads + strangers))
    rows = parsed.to_pylist()
    assert [{k: r[k] for k in ("id", "item", "total")} for r in rows[:1200]] == want
    assert all(r["_corrupt_record"] is None for r in rows[:1200])
    assert [r["_corrupt_record"] for r in rows[1200:]] == strangers
    assert reasons == {
        f"schema version {unknown} is not in the registry (EntityNotFoundException)": 1,
        "not registry-framed: header version byte 123, expected 3": 1,
    }
    parser.parse(records(payloads + strangers))  # a second batch, same process
    assert by_id(proxy) == {versions[1]: 1, versions[2]: 1, unknown: 1}


def test_an_older_reader_version_drops_the_newer_field(registry):
    glue, name, proxy = registry
    _, _, payloads, want = produce(glue, name)
    fmt = reader_format(proxy, name, schemaVersionNumber="1")
    assert fmt.payload_ddl() == "`id` bigint, `item` string"
    parsed, bad = PayloadParser(fmt, output_schema(fmt.avro_struct())).parse(records(payloads))
    assert bad == 0
    assert [(r["id"], r["item"]) for r in parsed.to_pylist()] == [
        (w["id"], w["item"]) for w in want
    ]


def test_python_consumers_decode_with_the_deserializer(registry):
    glue, name, _ = registry
    _, _, payloads, want = produce(glue, name)
    assert GlueSchemaRegistryDeserializer(glue, V2).decode(payloads[1]) == want[1]
    assert GlueSchemaRegistryDeserializer(glue).decode(payloads[700]) == want[700]


def test_an_unreachable_registry_fails_the_read_instead_of_marking_records_corrupt(registry):
    glue, name, proxy = registry
    _, second, _, _ = produce(glue, name)
    fmt = reader_format(proxy, name)
    parser = PayloadParser(fmt, output_schema(fmt.avro_struct()))
    proxy.set("GetSchemaVersion", UNREACHABLE, 1.0)
    stranger = frame(b"\x02", uuid.uuid4())  # an id this process has not looked up
    with pytest.raises(DependencyError, match="GetSchemaVersion"):
        parser.parse(records([second.serialize({"id": 1, "item": "x", "total": 1.0}), stranger]))


def test_a_missing_schema_or_a_non_avro_one_is_one_line_at_load(registry, local_aws):
    glue, name, proxy = registry
    with pytest.raises(ValueError, match="the latest version of schema 'Nope' in registry"):
        PayloadFormat.parse(
            "avro",
            registry=RegistrySchema.parse(
                {
                    "registryName": name,
                    "schemaName": "Nope",
                    "registryEndpointUrl": proxy.endpoint_url,
                }.get
            ),
        ).resolved("us-east-1", CREDENTIALS)
    glue.create_schema(
        RegistryId={"RegistryName": name},
        SchemaName="Doc",
        DataFormat="JSON",
        Compatibility="NONE",
        SchemaDefinition='{"type": "object"}',
    )
    options = {"registryName": name, "schemaName": "Doc", "registryEndpointUrl": proxy.endpoint_url}
    with pytest.raises(ValueError, match="is JSON; classification avro reads AVRO"):
        PayloadFormat.parse("avro", registry=RegistrySchema.parse(options.get)).resolved(
            "us-east-1", CREDENTIALS
        )


def with_registry_credentials(fmt, proxy, credentials):
    """``fmt`` whose executors reach the registry (through ``proxy``) with ``credentials``."""
    spec = ClientSpec("glue", "us-east-1", proxy.endpoint_url, credentials)
    return replace(fmt, registry=replace(fmt.registry, client_spec=spec))


@pytest.mark.usefixtures("no_credentials")
def test_credentials_that_fail_on_an_executor_fail_the_read_and_are_not_remembered(
    registry, local_aws, monkeypatch
):
    glue, name, proxy = registry
    _, _, payloads, want = produce(glue, name)
    # An assumed role whose source credentials (the default chain) are not there yet.
    role = AWSCredentials(
        role_arn="arn:aws:iam::123456789012:role/reader",
        role_session_name="reader",
        sts_endpoint_url=local_aws.endpoint_url,
    )
    fmt = with_registry_credentials(reader_format(proxy, name), proxy, role)
    parser = PayloadParser(fmt, output_schema(fmt.avro_struct()))
    with pytest.raises(CredentialsError, match=r"cannot assume role .*operation=GetSchemaVersion"):
        parser.parse(records(payloads[:3]))
    assert by_id(proxy) == {}  # the registry was not asked
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")  # the chain finds them now
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    parsed, bad = parser.parse(records(payloads))
    assert bad == 0
    assert [{k: r[k] for k in ("id", "item", "total")} for r in parsed.to_pylist()] == want


def test_a_failing_credentials_provider_fails_the_read_at_its_first_record(registry):
    glue, name, proxy = registry
    _, _, payloads, _ = produce(glue, name)
    provider = AWSCredentials(provider="tests.support.credentials_provider.FailingProvider")
    fmt = with_registry_credentials(reader_format(proxy, name), proxy, provider)
    parser = PayloadParser(fmt, output_schema(fmt.avro_struct()))
    for _ in range(2):  # not cached as corrupt: the second batch fails as the first
        with pytest.raises(CredentialsError, match="RuntimeError: the provider's backend"):
            parser.parse(records(payloads[:50]))
    assert by_id(proxy) == {}


def test_a_version_fastavro_cannot_parse_is_asked_once_and_named_at_load(registry):
    glue, name, proxy = registry
    first, _, _, _ = produce(glue, name)
    # Java's Avro ignores an invalid logical type; fastavro refuses the definition.
    bad = {
        **V2,
        "fields": [
            *V1["fields"],
            {
                "name": "price",
                "type": {"type": "bytes", "logicalType": "decimal", "precision": 2, "scale": 4},
                "default": "",
            },
        ],
    }
    version = glue.register_schema_version(
        SchemaId={"RegistryName": name, "SchemaName": "Order"}, SchemaDefinition=json.dumps(bad)
    )["SchemaVersionId"]
    with pytest.raises(
        ValueError,
        match=f"version 3 of schema 'Order' in registry '{name}' \\(id {version}\\) "
        "is not a usable Avro schema: not an Avro schema \\(SchemaParseException: decimal",
    ):
        reader_format(proxy, name, schemaVersionNumber="3")
    with pytest.raises(ValueError, match=f"the latest version of .* \\(version 3, id {version}\\)"):
        reader_format(proxy, name)
    fmt = reader_format(proxy, name, schemaVersionNumber="1")
    datum = io.BytesIO()
    fastavro.schemaless_writer(datum, fastavro.parse_schema(V1), {"id": 1, "item": "x"})
    payloads = [frame(datum.getvalue(), version) for _ in range(50)]
    parser = PayloadParser(fmt, output_schema(fmt.avro_struct()))
    parsed, reasons = parser.parse_counted(records(payloads))
    assert [r["_corrupt_record"] for r in parsed.to_pylist()] == payloads
    [(reason, count)] = reasons.items()
    assert count == 50
    assert reason.startswith(f"schema version {version} is not a usable Avro schema: not an Avro")
    parser.parse(records(payloads))  # a second batch, same process
    assert by_id(proxy) == {version: 1}
    assert first.version_id not in by_id(proxy)


def test_a_dotted_schema_name_is_registered_and_found_as_given(registry):
    glue, name, _ = registry
    writer = GlueSchemaRegistrySerializer(V1, name, "com.example.orders-v2", client=glue)
    payload = writer.serialize({"id": 1, "item": "x"})
    schema = glue.get_schema(SchemaId={"RegistryName": name, "SchemaName": "com.example.orders-v2"})
    assert schema["SchemaName"] == "com.example.orders-v2"
    again = GlueSchemaRegistrySerializer(V1, name, "com.example.orders-v2", client=glue)
    assert again.version_id == writer.version_id  # found by its definition under that name
    assert GlueSchemaRegistryDeserializer(glue).decode(payload) == {"id": 1, "item": "x"}


def test_the_registry_is_read_without_the_streams_sts_role(registry, dead_endpoint):
    # Glue's awsSTSRoleARN is the stream account's role; the registry is the job's own.
    glue, name, proxy = registry
    _, _, payloads, want = produce(glue, name)
    stream_role = AWSCredentials(
        access_key_id="testing",
        secret_access_key="testing",
        role_arn="arn:aws:iam::210987654321:role/stream-reader",
        role_session_name="stream",
        sts_endpoint_url=dead_endpoint,  # STS is never asked: nothing listens there
    )
    options = {"registryName": name, "schemaName": "Order"}
    options["registryEndpointUrl"] = proxy.endpoint_url
    fmt = PayloadFormat.parse("avro", registry=RegistrySchema.parse(options.get))
    fmt = fmt.resolved("us-east-1", stream_role)
    assert fmt.registry.client_spec.credentials == CREDENTIALS  # the keys, not the role
    parsed, bad = PayloadParser(fmt, output_schema(fmt.avro_struct())).parse(records(payloads))
    assert bad == 0
    assert [{k: r[k] for k in ("id", "item", "total")} for r in parsed.to_pylist()] == want
