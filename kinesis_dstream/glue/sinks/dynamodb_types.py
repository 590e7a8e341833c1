"""Glue's DynamoDB type mapping, Spark (a DynamicFrame's types) to DynamoDB attributes:
what ``write_dynamic_frame.from_options(connection_type="dynamodb")`` writes.

- string: ``S``;
- byte, short, int, long, float, double, decimal: ``N`` (a decimal's digits as they are,
  ``12.30``; a float's shortest text, ``0.1``);
- boolean: ``BOOL``; binary: ``B``;
- date, timestamp: ``S``, Spark's text (``2026-04-09``, ``2026-04-09 07:05:00``, in the
  session's time zone);
- struct: ``M`` of its fields; map: ``M`` (keys as text); array: ``L``;
- a field with no value: left out of the item (in an ``L``, ``NULL``, to keep the
  positions).

AWS documents the writer's options, not this table: it is what the writer Glue builds on
(awslabs' emr-dynamodb-connector, whose null serialization is off by default) does, and
what reads back as the frame that was written. A NaN or infinite float has no DynamoDB
number: such a row is not written (:class:`UnwritableValue`, counted and named by the
writer). Dates and timestamps become text in Spark before the rows leave it
(:data:`TEXT_TYPES`, :func:`~.avro_types.columns_as_strings`).

The other direction (a DynamoDB table read into a frame) belongs to the batch sources.
"""

from __future__ import annotations

import math
import struct
from decimal import Decimal
from typing import Any, Callable, Optional

import pyarrow as pa  # type: ignore[import-untyped]

from ..errors import GlueError

#: Spark types written as text (cast in Spark, before the rows reach the writer).
TEXT_TYPES = ("DateType", "TimestampType", "TimestampNTZType")
#: What an ``L``'s element with no value is written as.
NULL = {"NULL": True}

Converter = Callable[[Any], Optional[dict]]


class UnwritableValue(ValueError):
    """A value DynamoDB has no attribute for (a NaN or infinite number): its row is not
    written; the writer counts and names it."""


def number_text(value: Any, single: bool = False) -> str:
    """A number as DynamoDB's ``N`` text: an int's digits, a decimal's as they are, a
    float's shortest text (a ``float`` column's as a 4-byte float prints, as Glue's JVM
    does: ``0.1``, not ``0.10000000149011612``)."""
    if isinstance(value, (int, Decimal)):
        if isinstance(value, Decimal) and not value.is_finite():
            raise UnwritableValue(f"{value} is not a DynamoDB number")
        return str(value)
    if not math.isfinite(value):
        raise UnwritableValue(f"{value} is not a DynamoDB number")
    return str(Decimal(_shortest_single(value) if single else repr(value)))


def _shortest_single(value: float) -> str:
    """The shortest text that reads back as the same 4-byte float (how Java prints a
    ``float``): 0.1 for the float nearest 0.1, which Python shows as
    0.10000000149011612."""
    for digits in range(1, 10):
        text = f"{value:.{digits}g}"
        if struct.unpack("f", struct.pack("f", float(text)))[0] == value:
            return text
    return repr(value)


def converter(arrow_type: Any, column: str) -> Converter:
    """The function that turns a value of ``arrow_type`` (as Arrow's ``to_pylist`` gives
    it) into a DynamoDB attribute, or None when it has no value. ``column`` names the
    field in the error for a type with no DynamoDB attribute."""
    t = pa.types
    if t.is_null(arrow_type):
        return lambda v: None
    if t.is_boolean(arrow_type):
        return lambda v: None if v is None else {"BOOL": v}
    if t.is_integer(arrow_type) or t.is_decimal(arrow_type):
        return lambda v: None if v is None else {"N": number_text(v)}
    if t.is_floating(arrow_type):
        single = t.is_float32(arrow_type) or t.is_float16(arrow_type)
        return lambda v: None if v is None else {"N": number_text(v, single)}
    if t.is_string(arrow_type) or t.is_large_string(arrow_type):
        return lambda v: None if v is None else {"S": v}
    if t.is_binary(arrow_type) or t.is_large_binary(arrow_type):
        return lambda v: None if v is None else {"B": bytes(v)}
    if t.is_struct(arrow_type):
        fields = [
            (arrow_type.field(i).name, converter(arrow_type.field(i).type, column))
            for i in range(arrow_type.num_fields)
        ]
        return lambda v: None if v is None else {"M": _attributes(fields, v)}
    if t.is_map(arrow_type):
        value = converter(arrow_type.item_type, column)
        return lambda v: None if v is None else {"M": _map_attributes(value, v)}
    if t.is_list(arrow_type) or t.is_large_list(arrow_type):
        element = converter(arrow_type.value_type, column)
        return lambda v: None if v is None else {"L": [element(x) or NULL for x in v]}
    raise GlueError(
        f"column {column!r}: Spark type {arrow_type} has no DynamoDB attribute here; cast it "
        "(ApplyMapping, or Spark's cast) to a string or a number before writing to DynamoDB"
    )


def _attributes(fields: list, value: dict) -> dict:
    out = {}
    for name, convert in fields:
        attribute = convert(value[name])
        if attribute is not None:
            out[name] = attribute
    return out


def _map_attributes(convert: Converter, pairs: list) -> dict:
    out = {}
    for key, item in pairs:
        attribute = convert(item)
        if attribute is not None:
            out[str(key)] = attribute
    return out


def batch_items(batch: Any, converters: list) -> list:
    """Each row of an Arrow record batch as a DynamoDB item, or an
    :class:`UnwritableValue` in its place (the row's other items are unaffected)."""
    names = batch.schema.names
    columns = [batch.column(i).to_pylist() for i in range(batch.num_columns)]
    items: list = []
    for row in zip(*columns):
        try:
            item = {}
            for name, convert, value in zip(names, converters, row):
                attribute = convert(value)
                if attribute is not None:
                    item[name] = attribute
            items.append(item)
        except UnwritableValue as exc:
            items.append(UnwritableValue(f"{exc} (in {row_text(zip(names, row))})"))
    return items


def row_text(pairs: Any) -> str:
    """A row's ``(name, value)`` pairs as one short line for a log."""
    text = ", ".join(f"{n}={v!r}" for n, v in pairs)
    return text if len(text) <= 200 else text[:197] + "..."


def attribute_size(attribute: dict) -> int:
    """An attribute value's size as DynamoDB counts it (its "Item sizes and formats"
    page): text and bytes by their length, a number about one byte per two digits
    plus one, 1 for BOOL and NULL, 3 for a list or map plus its elements (and one byte
    each)."""
    kind, value = next(iter(attribute.items()))
    if kind == "S":
        return len(value.encode("utf-8"))
    if kind == "B":
        return len(value)
    if kind == "N":
        digits = len(value.lstrip("-").split("E")[0].replace(".", "").strip("0")) or 1
        return (digits + 1) // 2 + 1
    if kind == "M":
        return 3 + sum(len(k.encode("utf-8")) + attribute_size(v) + 1 for k, v in value.items())
    if kind == "L":
        return 3 + sum(attribute_size(v) + 1 for v in value)
    return 1


def item_size(item: dict) -> int:
    """An item's size in bytes as DynamoDB counts it: its attributes' names and values."""
    return sum(len(name.encode("utf-8")) + attribute_size(v) for name, v in item.items())
