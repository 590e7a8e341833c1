"""Avro container files as Glue's Avro reader types them, version 1.7 or 1.8.

Glue's table (AWS's "Avro format" page), for the reader: version 1.7 (the default) reads
every logical type as its Avro primitive (decimal as binary, date as int,
timestamp-millis as long...); 1.8 reads decimal, date and timestamp-millis as their
types, and time-millis, time-micros and timestamp-micros as their primitives (int,
long). fastavro always decodes logical types, so the primitives are given back here
(:func:`primitive`). Other types as the Kinesis source maps Avro
(:mod:`~kinesis_dstream.sql.parsing.payload_avro`): enum is string, fixed binary, a
union of null and one type that type, a union of several a struct of ``member0``...
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from ...sql.parsing import payload_avro

#: The logical types each version reads as their type (the others: their primitive).
VERSION_LOGICAL = {"1.7": (), "1.8": ("decimal", "date", "timestamp-millis")}
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
_UNIT = {
    "timestamp-millis": dt.timedelta(milliseconds=1),
    "timestamp-micros": dt.timedelta(microseconds=1),
    "local-timestamp-millis": dt.timedelta(milliseconds=1),
    "local-timestamp-micros": dt.timedelta(microseconds=1),
}


def reader_schema(writer_schema: Any, version: str) -> Any:
    """``writer_schema`` without the logical types ``version`` reads as primitives."""
    kept = VERSION_LOGICAL[version]
    if isinstance(writer_schema, list):
        return [reader_schema(s, version) for s in writer_schema]
    if not isinstance(writer_schema, dict):
        return writer_schema
    out = {
        k: reader_schema(v, version) if k in ("type", "items", "values", "fields") else v
        for k, v in writer_schema.items()
        if not (k == "logicalType" and v not in kept)
    }
    return out


def primitive(writer_schema: Any, value: Any, version: str) -> Any:
    """A fastavro value with the logical types ``version`` does not read turned back into
    their Avro primitive (see the module)."""
    if value is None:
        return None
    if isinstance(writer_schema, list):
        branches = [b for b in writer_schema if b != "null"]
        for branch in branches:
            if len(branches) == 1 or payload_avro.fits(branch, value):
                return primitive(branch, value, version)
        return value
    if not isinstance(writer_schema, dict):
        return value
    kind = writer_schema.get("type")
    logical = writer_schema.get("logicalType")
    if logical and logical not in VERSION_LOGICAL[version]:
        return _unlogical(writer_schema, logical, value)
    if kind in ("record", "error"):
        return {
            f["name"]: primitive(f["type"], value.get(f["name"]), version)
            for f in writer_schema["fields"]
        }
    if kind == "array":
        return [primitive(writer_schema["items"], v, version) for v in value]
    if kind == "map":
        return {k: primitive(writer_schema["values"], v, version) for k, v in value.items()}
    if isinstance(kind, (list, dict)):
        return primitive(kind, value, version)
    return value


def _unlogical(schema: dict, logical: str, value: Any) -> Any:
    if logical == "date" and isinstance(value, dt.date):
        return (value - dt.date(1970, 1, 1)).days
    if logical in _UNIT and isinstance(value, dt.datetime):
        stamp = value if value.tzinfo else value.replace(tzinfo=dt.timezone.utc)
        return (stamp - _EPOCH) // _UNIT[logical]
    if logical == "time-millis" and isinstance(value, dt.time):
        return _micros(value) // 1000
    if logical == "time-micros" and isinstance(value, dt.time):
        return _micros(value)
    if logical == "decimal" and isinstance(value, Decimal):
        unscaled = int(value.scaleb(int(schema.get("scale", 0))))
        size = schema.get("size") or max(1, (unscaled.bit_length() + 8) // 8)
        return unscaled.to_bytes(size, "big", signed=True)
    return value


def _micros(value: dt.time) -> int:
    return ((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000 + value.microsecond


def columns(writer_schema: Any, version: str) -> Any:
    """The frame's columns (a StructType) of files of ``writer_schema``."""
    return payload_avro.payload_struct(reader_schema(writer_schema, version))


def record_values(writer_schema: Any, record: Any, version: str) -> dict:
    """One decoded record as ``{column: value}`` of :func:`columns`."""
    plain = primitive(writer_schema, record, version)
    return payload_avro.shape(reader_schema(writer_schema, version), plain)
