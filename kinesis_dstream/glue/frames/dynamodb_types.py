"""DynamoDB's attribute types as Glue maps them to a frame's types, when a table is read.

The Glue layer's DynamoDB reader (:mod:`~kinesis_dstream.glue.sources`): an item's
attributes arrive in DynamoDB's wire form (``{"S": "x"}``, ``{"N": "12"}``...). The other
direction, a frame's rows written to a table, is the sink's
(:mod:`kinesis_dstream.glue.sinks.dynamodb_types`); a round trip through both gives the
values back (tested).

Read, as Glue's DynamoDB reader types a DynamicFrame's fields:

======== ========================================================================
DynamoDB frame
======== ========================================================================
S        string
N        long when integral and within 64 bits, double when it has a fraction or
         an exponent, decimal(38,0) when integral beyond 64 bits
B        binary
BOOL     boolean
NULL     null (the field's type comes from the other items)
SS/NS/BS array of string / of the numbers' type / of binary, in the order DynamoDB
         returns the set's members
L        array of the members' merged type
M        struct of the map's keys
======== ========================================================================

Over the items of a table, a field's types merge as the library's JSON inference merges
them (:func:`~kinesis_dstream.sql.parsing.payload_types.merge_types`): long and double
make double, structs merge their fields, arrays their members; any other mix is string
(Glue would keep a choice type; a frame here has one type a column). A field that is null
in every item is a string. Values of a type other than their column's become the column's
type where they can: a string column holds a number's digits, ``true``/``false``, a
binary as base64, a list or map as JSON text. A nested value that cannot (a member of a
list, a map's field) is null, and a map's key its struct does not have is left out: both
told to the reader's count (:data:`DROPPED_MISFIT`, :data:`DROPPED_UNKNOWN`), never
silently.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from typing import Any, Callable, Optional

from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    DataType,
    DecimalType,
    StringType,
    StructField,
    StructType,
)

from ...sql.parsing.payload_types import converter, infer_json_type, merge_structs, merge_types

#: The attribute type letters DynamoDB's wire form uses.
ATTRIBUTE_TYPES = ("S", "N", "B", "BOOL", "NULL", "SS", "NS", "BS", "L", "M")
#: What each type's value is, as botocore parses it.
_SHAPES: dict = {
    "S": str,
    "N": str,
    "B": (bytes, bytearray),
    "BOOL": bool,
    "SS": list,
    "NS": list,
    "BS": list,
    "L": list,
    "M": Mapping,
}
_INT64 = (-(1 << 63), (1 << 63) - 1)
#: Why :func:`conformer` dropped a nested value (what its ``dropped`` is told).
DROPPED_MISFIT = "nested values that did not fit their type (null)"
DROPPED_UNKNOWN = "nested attributes not in their struct (left out)"


class AttributeValueError(ValueError):
    """An attribute value that is not DynamoDB's wire form (names the type seen)."""


def number(text: str) -> Any:
    """A DynamoDB number's text as Glue types it: int (integral), float (a fraction or
    an exponent) or, past 64 bits, a Decimal."""
    try:
        value = Decimal(text)
    except InvalidOperation:
        raise AttributeValueError(f"not a DynamoDB number: {text!r}") from None
    if not value.is_finite():
        raise AttributeValueError(f"not a DynamoDB number: {text!r}")
    if "." in text or "e" in text.lower():
        return float(value)
    integral = int(value)
    return integral if _INT64[0] <= integral <= _INT64[1] else value


def plain(attribute: Mapping[str, Any]) -> Any:
    """An attribute in DynamoDB's wire form as a plain Python value (see the module);
    AttributeValueError naming what is not that form."""
    if not isinstance(attribute, Mapping) or len(attribute) != 1:
        raise AttributeValueError(f"not a DynamoDB attribute value: {attribute!r:.200}")
    ((kind, value),) = attribute.items()
    expected = _SHAPES.get(kind)
    if expected is not None and not isinstance(value, expected):
        raise AttributeValueError(
            f"DynamoDB attribute {kind} holds {type(value).__name__}: {value!r:.200}"
        )
    if kind == "S":
        return str(value)
    if kind == "N":
        return number(str(value))
    if kind == "B":
        return bytes(value)
    if kind == "BOOL":
        return bool(value)
    if kind == "NULL":
        return None
    if kind == "SS":
        return [str(v) for v in value]
    if kind == "NS":
        return [number(str(v)) for v in value]
    if kind == "BS":
        return [_bytes(v) for v in value]
    if kind == "L":
        return [plain(v) for v in value]
    if kind == "M":
        return {str(k): plain(v) for k, v in value.items()}
    raise AttributeValueError(f"not a DynamoDB attribute type: {kind!r}")


def _bytes(value: Any) -> bytes:
    if not isinstance(value, (bytes, bytearray)):
        raise AttributeValueError(f"a binary set's member is {type(value).__name__}")
    return bytes(value)


def plain_item(item: Mapping[str, Any]) -> dict:
    """A scanned item (``{name: attribute}``) as ``{name: plain value}``."""
    return {str(name): plain(attribute) for name, attribute in item.items()}


def value_type(value: Any) -> Optional[DataType]:
    """The frame type of one plain value (None for null: it says nothing)."""
    if isinstance(value, (bytes, bytearray)):
        return BinaryType()
    if isinstance(value, Decimal):
        return DecimalType(38, 0)
    if isinstance(value, list):
        element: Optional[DataType] = None
        for member in value:
            element = merge_types(element, value_type(member))
        return ArrayType(element or StringType(), True)
    if isinstance(value, dict):
        return StructType(
            [StructField(k, value_type(v) or StringType(), True) for k, v in value.items()]
        )
    return infer_json_type(value)


def item_struct(item: Mapping[str, Any]) -> StructType:
    """The struct of one plain item, its fields in the item's order."""
    fields = [StructField(k, value_type(v) or StringType(), True) for k, v in item.items()]
    return StructType(fields)


def merge_items(a: StructType, b: StructType) -> StructType:
    """The schema holding the items of ``a`` and of ``b`` (``a``'s fields first)."""
    return merge_structs(a, b)


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, (list, dict)):
        return json.dumps(value, separators=(",", ":"), default=_json_default)
    return str(value)


def _json_default(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, Decimal):
        return str(value)
    raise TypeError(f"{type(value).__name__} is not JSON")


def conformer(data_type: DataType, dropped: Callable[[str], None]) -> Callable[[Any], Any]:
    """A function giving a plain value as a column of ``data_type`` holds it (see the
    module), built once a schema; it raises ValueError when the value cannot be held
    there (the caller nulls the field and counts it). A nested value dropped is told to
    ``dropped`` with the reason (:data:`DROPPED_MISFIT`, :data:`DROPPED_UNKNOWN`)."""
    if isinstance(data_type, StringType):
        return lambda v: v if isinstance(v, str) else _text(v)
    if isinstance(data_type, BinaryType):
        return _binary
    if isinstance(data_type, StructType):
        fields = [
            (f.name, _nullable(conformer(f.dataType, dropped), dropped)) for f in data_type.fields
        ]
        names = frozenset(data_type.names)

        def struct(v: Any) -> Any:
            if not isinstance(v, dict):
                raise ValueError(f"not a map: {v!r}")
            for key in v:
                if key not in names:
                    dropped(DROPPED_UNKNOWN)
            return {name: conv(v.get(name)) for name, conv in fields}

        return struct
    if isinstance(data_type, ArrayType):
        member = _nullable(conformer(data_type.elementType, dropped), dropped)

        def array(v: Any) -> Any:
            if not isinstance(v, list):
                raise ValueError(f"not a list or set: {v!r}")
            return [member(x) for x in v]

        return array
    atomic = converter(data_type)
    if isinstance(data_type, DecimalType):
        return atomic
    return lambda v: atomic(float(v) if isinstance(v, Decimal) else v)


def _binary(v: Any) -> bytes:
    if not isinstance(v, (bytes, bytearray)):
        raise ValueError(f"not binary: {v!r}")
    return bytes(v)


def _nullable(conv: Callable[[Any], Any], dropped: Callable[[str], None]) -> Callable[[Any], Any]:
    def convert(v: Any) -> Any:
        if v is None:
            return None
        try:
            return conv(v)
        except ValueError:
            dropped(DROPPED_MISFIT)
            return None

    return convert
