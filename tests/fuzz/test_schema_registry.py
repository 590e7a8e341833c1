"""Glue Schema Registry payloads (``schema_registry/framing.py``, ``versions.decode``).

Inputs: Avro datums written by fastavro and framed by the library's own ``frame`` (plain and
zlib, as the registry's serializers write them), then mutated: bits flipped in the header
and the body, bytes cut, inserted or dropped, zlib bombs; and random bytes.

The rule (docs/reliability.md#stream-payloads): ``unframe`` gives the version id and a
datum of at most its bound, or raises ``RegistryPayloadError`` saying why; ``decode`` of a
frame naming a known version gives the value or raises ``RegistryPayloadError``; nothing
else.
"""

from __future__ import annotations

import io
import json
import uuid
import zlib

import fastavro
from hypothesis import given
from hypothesis import strategies as st

from kinesis_dstream.schema_registry import (
    RegistryPayloadError,
    SchemaVersion,
    SchemaVersionCache,
    decode,
    frame,
    unframe,
)

from .mutations import mutate
from .test_payload import AVRO_ROWS, AVRO_SCHEMA

VERSION = uuid.UUID("00112233-4455-6677-8899-aabbccddeeff")
BOUND = 64 * 1024


def _datum(row: dict) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(AVRO_SCHEMA), row)
    return out.getvalue()


@st.composite
def frames(draw) -> bytes:
    if draw(st.integers(0, 9)) == 0:  # a zlib bomb, framed as the serializers frame
        return bytes((3, 5)) + VERSION.bytes + zlib.compress(b"\0" * 1_000_000)
    data = frame(_datum(draw(AVRO_ROWS)), VERSION, compress=draw(st.booleans()))
    return mutate(draw, data) if draw(st.booleans()) else data


@given(frames() | st.binary(max_size=60))
def test_unframe_gives_a_bounded_datum_or_says_why(data):
    try:
        version, datum = unframe(data, max_bytes=BOUND)
    except RegistryPayloadError as exc:
        assert str(exc)
        return
    assert uuid.UUID(version).bytes == data[2:18] and len(datum) <= BOUND


def _cache() -> SchemaVersionCache:
    """A cache that knows the one writer version; nothing else is ever asked of it."""
    cache = SchemaVersionCache(lambda: None)
    version = SchemaVersion(str(VERSION), json.dumps(AVRO_SCHEMA), "AVRO")
    cache._entries[VERSION.bytes] = (version, version.parsed())  # as a fetch leaves it
    return cache


@st.composite
def body_mutated_frames(draw) -> bytes:
    """Frames whose header names the known version; the rest written, then mutated."""
    data = frame(_datum(draw(AVRO_ROWS)), VERSION, compress=draw(st.booleans()))
    if draw(st.booleans()):
        data = data[:18] + mutate(draw, data[18:])
    return data


@given(body_mutated_frames())
def test_decode_gives_the_value_or_says_why(data):
    reader = fastavro.parse_schema(AVRO_SCHEMA)
    try:
        value = decode(_cache(), data, reader, None)
    except RegistryPayloadError as exc:
        assert str(VERSION) in str(exc) or "registry" in str(exc)
        return
    assert set(value) == {f["name"] for f in AVRO_SCHEMA["fields"]}
