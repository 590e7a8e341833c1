"""Glue Schema Registry framing (schema_registry/framing.py) and the registry's options
(sql/parsing/registry.py, payload_format.py). Pure: no server."""

from __future__ import annotations

import uuid
import zlib

import pytest

from kinesis_dstream.aws import AWSCredentials
from kinesis_dstream.schema_registry import (
    GlueSchemaRegistryDeserializer,
    GlueSchemaRegistrySerializer,
    RegistryPayloadError,
    SchemaVersion,
    frame,
    unframe,
)
from kinesis_dstream.sql.parsing.payload import PayloadFormat
from kinesis_dstream.sql.parsing.registry import RegistrySchema, schema_reference_options

VERSION = "00112233-4455-6677-8899-aabbccddeeff"


def test_the_header_is_version_3_compression_then_the_uuid_most_significant_half_first():
    framed = frame(b"datum", VERSION)
    # As SerializationDataEncoder writes it: putLong(most), putLong(least), big-endian.
    assert framed == b"\x03\x00" + bytes.fromhex("00112233445566778899aabbccddeeff") + b"datum"
    assert unframe(framed) == (VERSION, b"datum")


def test_zlib_is_javas_deflater_format_and_inflates():
    datum = b"abc" * 1000
    framed = frame(datum, uuid.UUID(VERSION), compress=True)
    assert framed[1] == 5
    assert zlib.decompress(framed[18:]) == datum  # zlib: header and Adler-32, as Deflater
    assert unframe(framed) == (VERSION, datum)


@pytest.mark.parametrize(
    "data, says",
    [
        (b'{"json": true, "padding": 1}', "header version byte 123, expected 3"),
        (b"\x03\x00short", "not registry-framed: 7 bytes, the header alone is 18"),
        (b"\x03\x07" + bytes(16) + b"x", "compression byte 7, expected 0 \\(none\\) or 5"),
        (b"\x03\x05" + bytes(16) + b"not zlib", "zlib-flagged registry payload does not inflate"),
        (
            b"\x03\x05" + bytes(16) + zlib.compress(b"x" * 100)[:-6],
            "truncated or too large",
        ),
    ],
)
def test_a_payload_that_is_not_the_registrys_says_why(data, says):
    with pytest.raises(RegistryPayloadError, match=says):
        unframe(data)


def _options(**given):
    return RegistrySchema.parse(lambda name: given.get(name))


def test_options_name_the_schema_and_version():
    assert _options() is None
    schema = _options(registryName="sales", schemaName="orders", schemaVersionNumber="2")
    assert schema.request() == {
        "SchemaId": {"RegistryName": "sales", "SchemaName": "orders"},
        "SchemaVersionNumber": {"VersionNumber": 2},
    }
    assert schema.describe() == "version 2 of schema 'orders' in registry 'sales'"
    latest = _options(schemaArn="arn:aws:glue:eu-west-1:123456789012:schema/sales/orders")
    assert latest.request()["SchemaVersionNumber"] == {"LatestVersion": True}
    assert latest.region("us-east-1") == "eu-west-1"
    by_id = _options(schemaVersionId=VERSION.upper())
    assert by_id.request() == {"SchemaVersionId": VERSION}


@pytest.mark.parametrize(
    "given, says",
    [
        (dict(registryName="r"), "option schemaName is needed with registryName"),
        (dict(schemaName="s"), "option registryName is needed with schemaName"),
        (
            dict(registryName="r", schemaName="s", schemaArn="arn:aws:glue:x"),
            "schemaArn and registryName/schemaName both name the schema",
        ),
        (dict(schemaArn="arn:aws:kinesis:x"), "is not a schema ARN"),
        (
            dict(
                registryName="r", schemaName="s", schemaVersionNumber="1", schemaVersionId=VERSION
            ),
            "schemaVersionNumber and schemaVersionId both",
        ),
        (dict(registryName="r", schemaName="s", schemaVersionNumber="0"), "positive integer"),
        (dict(schemaVersionId="v1"), "schemaVersionId='v1' is not a UUID"),
        (dict(schemaVersionNumber="3"), "schemaVersionNumber needs registryName"),
        (dict(registryEndpointUrl="http://x"), "registryEndpointUrl needs registryName"),
    ],
)
def test_options_that_do_not_go_together_are_refused_naming_them(given, says):
    with pytest.raises(ValueError, match=says):
        _options(**given)


def test_a_registry_schema_is_for_avro_and_excludes_a_schema_option():
    registry = _options(registryName="r", schemaName="s")
    with pytest.raises(ValueError, match=r"options schema and the registry's .* give one"):
        PayloadFormat.parse("avro", '"string"', registry=registry)
    with pytest.raises(ValueError, match="avroSchema and the registry's"):
        PayloadFormat.parse("avro", avro_schema='"string"', registry=registry)
    with pytest.raises(ValueError, match="are for classification avro, not 'json'"):
        PayloadFormat.parse("json", "`a` INT", registry=registry)
    with pytest.raises(ValueError, match="inferSchema=true is not supported"):
        PayloadFormat.parse("avro", infer_schema="true", registry=registry)
    fmt = PayloadFormat.parse("avro", registry=registry)
    with pytest.raises(ValueError, match="not resolved yet"):
        fmt.payload_ddl()


def test_a_catalog_tables_schema_reference_becomes_these_options():
    reference = {
        "SchemaId": {"RegistryName": "sales", "SchemaName": "orders"},
        "SchemaVersionNumber": 3,
    }
    assert schema_reference_options(reference) == {
        "registryName": "sales",
        "schemaName": "orders",
        "schemaVersionNumber": "3",
    }
    assert schema_reference_options({"SchemaVersionId": VERSION}) == {"schemaVersionId": VERSION}


BAD_DECIMAL = (
    '{"type": "record", "name": "R", "fields": [{"name": "p", "type": '
    '{"type": "bytes", "logicalType": "decimal", "precision": 2, "scale": 4}}]}'
)


def test_a_schema_fastavro_refuses_is_a_value_error_naming_the_version_or_argument():
    # fastavro's SchemaParseException is not a ValueError: the cache would not keep it.
    with pytest.raises(RegistryPayloadError, match=f"schema version {VERSION} is not a usable"):
        SchemaVersion(VERSION, BAD_DECIMAL, "AVRO").parsed()
    with pytest.raises(ValueError, match=r"argument schema: not an Avro schema \(SchemaParse"):
        GlueSchemaRegistrySerializer(BAD_DECIMAL, client=object())
    with pytest.raises(ValueError, match="argument reader_schema: not an Avro schema"):
        GlueSchemaRegistryDeserializer(object(), BAD_DECIMAL)


def test_a_schema_name_given_is_kept_whole_and_a_derived_one_loses_its_namespace():
    order = {"type": "record", "name": "Order", "namespace": "com.example", "fields": []}
    given = GlueSchemaRegistrySerializer(order, schema_name="com.example.orders-v2", client=1)
    assert given.schema_name == "com.example.orders-v2"
    assert GlueSchemaRegistrySerializer(order, client=1).schema_name == "Order"


def test_the_registrys_credentials_are_the_connections_without_its_sts_role():
    role = {"role_arn": "arn:aws:iam::210987654321:role/r", "role_session_name": "s"}
    assert AWSCredentials(**role).without_role() is None  # the default chain
    keys = AWSCredentials(access_key_id="k", secret_access_key="s", **role).without_role()
    assert keys == AWSCredentials(access_key_id="k", secret_access_key="s")
    provider = "tests.support.credentials_provider.StaticProvider"
    given = AWSCredentials(provider=provider, provider_param="AKID", external_id="x", **role)
    assert given.without_role() == AWSCredentials(provider=provider, provider_param="AKID")
