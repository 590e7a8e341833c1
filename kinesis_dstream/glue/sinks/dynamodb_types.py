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
number, nor has a double past DynamoDB's range (a magnitude above 9.99...E+125 or, not
zero, below 1E-130; more than 38 significant digits): such a row is not written
(:class:`UnwritableValue`, counted and named by the writer). Dates and timestamps become
text in Spark before the rows leave it (:data:`TEXT_TYPES`,
:func:`~.avro_types.columns_as_strings`).

The other direction (a DynamoDB table read into a frame) is the batch sources'
(:mod:`kinesis_dstream.glue.frames.dynamodb_types`).
"""

from __future__ import annotations

import math
import struct
from decimal import Decimal
from typing import Any, Callable, Optional

from ..errors import GlueError

#: Spark types written as text (cast in Spark, before the rows reach the writer).
TEXT_TYPES = ("DateType", "TimestampType", "TimestampNTZType")
#: What an ``L``'s element with no value is written as.
NULL = {"NULL": True}

Converter = Callable[[Any], Optional[dict]]


#: DynamoDB's numbers (its "Supported data types" page): at most 38 significant digits,
#: a magnitude from 1E-130 to 9.99...E+125 (the exponents of the first digit), or zero.
MAX_DIGITS = 38
MAX_EXPONENT = 125
MIN_EXPONENT = -130
#: Numbers that need no check: ints of at most 38 digits, doubles (17 digits) between
#: these magnitudes.
_INT_BOUND = 10**MAX_DIGITS
_FLOAT_SAFE = (1e-129, 1e125)


class UnwritableValue(ValueError):
    """A value DynamoDB has no attribute for (a NaN or infinite number, one past
    DynamoDB's range): its row is not written; the writer counts and names it."""


def number_text(value: Any, single: bool = False) -> str:
    """A number as DynamoDB's ``N`` text: an int's digits, a decimal's as they are, a
    float's shortest text (a ``float`` column's as a 4-byte float prints, as Glue's JVM
    does: ``0.1``, not ``0.10000000149011612``). :class:`UnwritableValue` for a number
    DynamoDB cannot store (DynamoDB would refuse the whole request it is in)."""
    if isinstance(value, int) and -_INT_BOUND < value < _INT_BOUND:
        return str(value)  # the common case, at most 38 digits
    if isinstance(value, float):
        if not math.isfinite(value):
            raise UnwritableValue(f"{value} is not a DynamoDB number")
        text = str(Decimal(_shortest_single(value) if single else repr(value)))
        if value == 0 or _FLOAT_SAFE[0] < abs(value) < _FLOAT_SAFE[1]:
            return text  # a double's 17 digits, well inside DynamoDB's range
        check_number(Decimal(text))
        return text
    number = Decimal(value)
    if not number.is_finite():
        raise UnwritableValue(f"{value} is not a DynamoDB number")
    check_number(number)
    return str(value)


def check_number(number: Decimal) -> None:
    """:class:`UnwritableValue` when DynamoDB cannot store ``number`` (see
    :data:`MAX_DIGITS`); its digits counted as DynamoDB counts them, without leading or
    trailing zeros."""
    _, digits, exponent = number.as_tuple()
    text = "".join(map(str, digits)).lstrip("0")
    if not text:
        return  # zero
    significant = text.rstrip("0")
    first = int(exponent) + len(text) - 1  # the exponent of the first digit
    if len(significant) > MAX_DIGITS:
        raise UnwritableValue(
            f"{number} has {len(significant)} significant digits; DynamoDB stores {MAX_DIGITS}"
        )
    if first > MAX_EXPONENT:
        raise UnwritableValue(
            f"{number} is past DynamoDB's number range (magnitude at most 9.99...E+125)"
        )
    if first < MIN_EXPONENT:
        raise UnwritableValue(
            f"{number} is past DynamoDB's number range (a magnitude of at least 1E-130, or 0)"
        )


def _shortest_single(value: float) -> str:
    """The shortest text that reads back as the same 4-byte float (how Java prints a
    ``float``): 0.1 for the float nearest 0.1, which Python shows as
    0.10000000149011612."""
    for digits in range(1, 10):
        text = f"{value:.{digits}g}"
        if struct.unpack("f", struct.pack("f", float(text)))[0] == value:
            return text
    return repr(value)


def converter(data_type: Any, column: str) -> Converter:
    """The function that turns a value of the Spark type ``data_type`` (as a row of the
    frame holds it in Python) into a DynamoDB attribute, or None when it has no value.
    ``column`` names the field in the error for a type with no DynamoDB attribute."""
    from pyspark.sql import types as T

    if isinstance(data_type, T.NullType):
        return lambda v: None
    if isinstance(data_type, T.BooleanType):
        return lambda v: None if v is None else {"BOOL": v}
    if isinstance(data_type, (T.ByteType, T.ShortType, T.IntegerType, T.LongType)):
        return lambda v: None if v is None else {"N": number_text(v)}
    if isinstance(data_type, T.DecimalType):
        return lambda v: None if v is None else {"N": number_text(v)}
    if isinstance(data_type, (T.FloatType, T.DoubleType)):
        single = isinstance(data_type, T.FloatType)
        return lambda v: None if v is None else {"N": number_text(v, single)}
    if isinstance(data_type, T.StringType):
        return lambda v: None if v is None else {"S": v}
    if isinstance(data_type, T.BinaryType):
        return lambda v: None if v is None else {"B": bytes(v)}
    if isinstance(data_type, T.StructType):
        fields = [(f.name, converter(f.dataType, column)) for f in data_type.fields]
        return lambda v: None if v is None else {"M": _attributes(fields, v)}
    if isinstance(data_type, T.MapType):
        value = converter(data_type.valueType, column)
        return lambda v: None if v is None else {"M": _map_attributes(value, v)}
    if isinstance(data_type, T.ArrayType):
        element = converter(data_type.elementType, column)
        return lambda v: None if v is None else {"L": [element(x) or NULL for x in v]}
    raise GlueError(
        f"column {column!r}: Spark type {data_type.simpleString()} has no DynamoDB attribute "
        "here; cast it (ApplyMapping, or Spark's cast) to a string or a number before "
        "writing to DynamoDB"
    )


def _attributes(fields: list, row: Any) -> dict:
    """A struct's fields (a Row, in its schema's order) as an ``M``'s attributes."""
    out = {}
    for (name, convert), value in zip(fields, row):
        attribute = convert(value)
        if attribute is not None:
            out[name] = attribute
    return out


def _map_attributes(convert: Converter, values: dict) -> dict:
    out = {}
    for key, item in values.items():
        attribute = convert(item)
        if attribute is not None:
            out[str(key)] = attribute
    return out


def row_converter(schema: Any) -> Callable[[Any], Any]:
    """The function that turns a row of a frame of ``schema`` into its DynamoDB item, or
    an :class:`UnwritableValue` standing in its place (the other rows are unaffected)."""
    fields = [(f.name, converter(f.dataType, f.name)) for f in schema.fields]

    def item(row: Any) -> Any:
        try:
            return _attributes(fields, row)
        except UnwritableValue as exc:
            return UnwritableValue(f"{exc} (in {row_text(zip(schema.names, row))})")

    return item


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
