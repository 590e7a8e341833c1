"""The registry serializers' frame around each Avro datum.

awslabs/aws-glue-schema-registry's ``SerializationDataEncoder``: byte 0 is the header
version (3), byte 1 the compression (0 none, 5 zlib), bytes 2-17 the schema version id (a
UUID, most significant half first), then the Avro binary datum, zlib-compressed (Java's
``Deflater``: zlib with its header and Adler-32) when byte 1 is 5.
"""

from __future__ import annotations

import uuid
import zlib
from typing import Union

from ..errors import KinesisDStreamError

HEADER_VERSION = 3
COMPRESSION_NONE = 0
COMPRESSION_ZLIB = 5
HEADER_BYTES = 18
#: A datum that inflates past this is refused (a Kinesis record is at most 1 MiB).
MAX_INFLATED_BYTES = 128 * 1024 * 1024


class RegistryPayloadError(KinesisDStreamError, ValueError):
    """A payload that cannot be read as registry-framed Avro; the message is the reason."""


class SchemaVersionNotFoundError(RegistryPayloadError):
    """A record names a schema version id the registry does not have."""


def frame(datum: bytes, version_id: Union[str, uuid.UUID], compress: bool = False) -> bytes:
    """``datum`` framed as the registry's serializers frame it (zlib when ``compress``)."""
    version = version_id if isinstance(version_id, uuid.UUID) else uuid.UUID(str(version_id))
    body = zlib.compress(datum) if compress else datum
    flag = COMPRESSION_ZLIB if compress else COMPRESSION_NONE
    return bytes((HEADER_VERSION, flag)) + version.bytes + body


def unframe(data: bytes, max_bytes: int = MAX_INFLATED_BYTES) -> tuple:
    """``(schema version id, datum)`` of a framed payload (inflated when compressed);
    :class:`RegistryPayloadError` saying why when it is not the registry's framing."""
    key, datum = split_frame(data, max_bytes)
    return str(uuid.UUID(bytes=key)), datum


def split_frame(data: bytes, max_bytes: int = MAX_INFLATED_BYTES) -> tuple:
    """``(the 16 bytes of the version id, datum)``: :func:`unframe` without the UUID."""
    if data[:1] and data[0] != HEADER_VERSION:
        raise RegistryPayloadError(
            f"not registry-framed: header version byte {data[0]}, expected {HEADER_VERSION}"
        )
    if len(data) < HEADER_BYTES:
        raise RegistryPayloadError(
            f"not registry-framed: {len(data)} bytes, the header alone is {HEADER_BYTES}"
        )
    key = bytes(data[2:HEADER_BYTES])
    if data[1] == COMPRESSION_NONE:
        return key, data[HEADER_BYTES:]
    if data[1] != COMPRESSION_ZLIB:
        raise RegistryPayloadError(
            f"not registry-framed: compression byte {data[1]}, expected {COMPRESSION_NONE} "
            f"(none) or {COMPRESSION_ZLIB} (zlib)"
        )
    inflater = zlib.decompressobj()
    try:
        datum = inflater.decompress(data[HEADER_BYTES:], max_bytes + 1)
    except zlib.error as exc:
        raise RegistryPayloadError(
            f"zlib-flagged registry payload does not inflate: {exc}"
        ) from None
    if len(datum) > max_bytes or not inflater.eof:
        raise RegistryPayloadError("zlib-flagged registry payload is truncated or too large")
    return key, datum
