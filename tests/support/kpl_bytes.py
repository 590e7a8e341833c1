"""KPL aggregates byte by byte, for what the library's aggregator never writes: key table
entries that are not UTF-8, fields in other orders, tags, a wrong MD5.

The protobuf messages refuse a ``string`` that is not UTF-8, so these are encoded by hand
with the aggregator's own field writer.
"""

from __future__ import annotations

from typing import Optional

from kinesis_dstream.kpl import MAGIC
from kinesis_dstream.kpl.aggregation import _field, _varint
from kinesis_dstream.kpl.format import md5_digest

PK_TABLE, EHK_TABLE, RECORD = 0x0A, 0x12, 0x1A


def user_record(pk_index: int, data: bytes, ehk_index: Optional[int] = None) -> bytes:
    """One ``Record`` message: partition key index, optional explicit hash key index, data."""
    out = b"\x08" + _varint(pk_index)
    if ehk_index is not None:
        out += b"\x10" + _varint(ehk_index)
    return out + _field(0x1A, data)


def body(pks: list, records: list, ehks: list = ()) -> bytes:
    """An ``AggregatedRecord``: key tables (bytes each) then ``records`` (encoded)."""
    return b"".join(
        [_field(PK_TABLE, k) for k in pks]
        + [_field(EHK_TABLE, k) for k in ehks]
        + [_field(RECORD, r) for r in records]
    )


def framed(message: bytes) -> bytes:
    """``message`` as a Kinesis record's data: magic, message, its MD5."""
    return MAGIC + message + md5_digest(message)


def aggregate(pks: list, records: list, ehks: list = ()) -> bytes:
    """:func:`framed` of :func:`body`."""
    return framed(body(pks, records, ehks))
