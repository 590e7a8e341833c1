"""Spark types for parsed payloads: value converters, schema inference, DDL text.

A *converter* turns one decoded value (a JSON value, a CSV field's text, a fastavro
datum) into the Python value pyarrow builds the column from, or raises ``ValueError``
when the value does not fit the column's type (the caller nulls the field and keeps the
record as corrupt, like Spark's PERMISSIVE mode).
"""

from __future__ import annotations

import base64
import datetime as dt
import json
from decimal import Decimal, InvalidOperation
from typing import Any, Callable, Optional

from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    ByteType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    MapType,
    ShortType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from ...isotime import parse_date, parse_datetime

Converter = Callable[[Any], Any]

_INT_RANGES = {
    ByteType: 8,
    ShortType: 16,
    IntegerType: 32,
    LongType: 64,
}


def _int_converter(bits: int, from_text: bool) -> Converter:
    low, high = -(1 << (bits - 1)), (1 << (bits - 1)) - 1

    def convert(v: Any) -> Any:
        if from_text and isinstance(v, str):
            v = int(v.strip())
        if type(v) is not int or not low <= v <= high:
            raise ValueError(f"not an integer of {bits} bits: {v!r}")
        return v

    return convert


def _float_converter(from_text: bool) -> Converter:
    def convert(v: Any) -> Any:
        if from_text and isinstance(v, str):
            return float(v)
        if type(v) is bool or not isinstance(v, (int, float)):
            raise ValueError(f"not a number: {v!r}")
        return float(v)

    return convert


def _to_timestamp(v: Any) -> dt.datetime:
    if isinstance(v, dt.datetime):
        stamp = v
    elif isinstance(v, str):
        stamp = parse_datetime(v.strip())
    elif type(v) is not bool and isinstance(v, (int, float)):
        return dt.datetime.fromtimestamp(v, dt.timezone.utc)  # epoch seconds, as Spark casts
    else:
        raise ValueError(f"not a timestamp: {v!r}")
    # A timestamp without an offset is read as UTC (Spark would use the session zone).
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=dt.timezone.utc)


def _to_date(v: Any) -> dt.date:
    if isinstance(v, dt.datetime):
        return v.date()
    if isinstance(v, dt.date):
        return v
    if isinstance(v, str):
        return parse_date(v.strip())
    raise ValueError(f"not a date: {v!r}")


def _decimal_converter(precision: int, scale: int) -> Converter:
    quantum = Decimal(1).scaleb(-scale)

    def convert(v: Any) -> Any:
        if type(v) is bool or not isinstance(v, (int, float, str, Decimal)):
            raise ValueError(f"not a decimal: {v!r}")
        try:
            d = Decimal(str(v).strip()).quantize(quantum)
        except InvalidOperation as e:
            raise ValueError(f"not a decimal({precision},{scale}): {v!r}") from e
        if len(d.as_tuple().digits) > precision:
            raise ValueError(f"does not fit decimal({precision},{scale}): {v!r}")
        return d

    return convert


def _bool_converter(from_text: bool) -> Converter:
    def convert(v: Any) -> Any:
        if from_text and isinstance(v, str):
            text = v.strip().lower()
            if text in ("true", "false"):
                return text == "true"
        if type(v) is not bool:
            raise ValueError(f"not a boolean: {v!r}")
        return v

    return convert


def _string_json(v: Any) -> Any:
    # Spark keeps a non-string JSON value's text in a string column.
    return v if isinstance(v, str) else json.dumps(v, separators=(",", ":"))


def _binary(v: Any) -> Any:
    if isinstance(v, (bytes, bytearray)):
        return bytes(v)
    if isinstance(v, str):
        return base64.b64decode(v, validate=True)  # JSON carries binary as base64
    raise ValueError(f"not binary: {v!r}")


def converter(data_type: DataType, from_text: bool = False) -> Converter:
    """The converter for one column; ``from_text`` for CSV fields (every value a str).

    Nulls are handled by the caller for top-level fields and here for nested ones.
    """
    kind = type(data_type)
    if kind in _INT_RANGES:
        return _int_converter(_INT_RANGES[kind], from_text)
    if kind in (DoubleType, FloatType):
        return _float_converter(from_text)
    if kind is BooleanType:
        return _bool_converter(from_text)
    if kind is StringType:
        return str if from_text else _string_json
    if kind is BinaryType:
        return (lambda v: v.encode()) if from_text else _binary
    if kind is TimestampType:
        return _to_timestamp
    if kind is DateType:
        return _to_date
    if isinstance(data_type, DecimalType):
        return _decimal_converter(data_type.precision, data_type.scale)
    if from_text:
        raise ValueError(
            f"text cannot be read into type {data_type.simpleString()} (atomic types only)"
        )
    if isinstance(data_type, ArrayType):
        element = _nullable(converter(data_type.elementType))

        def convert_array(v: Any) -> Any:
            if not isinstance(v, list):
                raise ValueError(f"not an array: {v!r}")
            return [element(x) for x in v]

        return convert_array
    if isinstance(data_type, MapType):
        value = _nullable(converter(data_type.valueType))

        def convert_map(v: Any) -> Any:
            if not isinstance(v, dict):
                raise ValueError(f"not an object: {v!r}")
            return [(str(k), value(x)) for k, x in v.items()]

        return convert_map
    if isinstance(data_type, StructType):
        fields = [(f.name, _nullable(converter(f.dataType))) for f in data_type.fields]

        def convert_struct(v: Any) -> Any:
            if not isinstance(v, dict):
                raise ValueError(f"not an object: {v!r}")
            return {name: conv(v.get(name)) for name, conv in fields}

        return convert_struct
    raise ValueError(f"unsupported column type {data_type.simpleString()}")


def _nullable(conv: Converter) -> Converter:
    return lambda v: None if v is None else conv(v)


# ---- inference ----------------------------------------------------------------------


def infer_json_type(v: Any) -> Optional[DataType]:
    """Spark's type for one JSON value (None for null: it says nothing)."""
    if v is None:
        return None
    if type(v) is bool:
        return BooleanType()
    if type(v) is int:
        return LongType() if -(1 << 63) <= v < (1 << 63) else DecimalType(38, 0)
    if isinstance(v, float):
        return DoubleType()
    if isinstance(v, str):
        return StringType()
    if isinstance(v, list):
        element: Optional[DataType] = None
        for x in v:
            element = merge_types(element, infer_json_type(x))
        return ArrayType(element or StringType(), True)
    if isinstance(v, dict):
        return StructType(
            [StructField(str(k), infer_json_type(x) or StringType(), True) for k, x in v.items()]
        )
    return StringType()


def merge_types(a: Optional[DataType], b: Optional[DataType]) -> Optional[DataType]:
    """The widest of two inferred types: long+double is double, struct+struct merges
    their fields (first-seen order), array+array merges elements, other conflicts are
    string."""
    if a is None:
        return b
    if b is None or a == b:
        return a
    numeric = (LongType, DoubleType)
    if type(a) in numeric and type(b) in numeric:
        return DoubleType()
    if isinstance(a, StructType) and isinstance(b, StructType):
        return merge_structs(a, b)
    if isinstance(a, ArrayType) and isinstance(b, ArrayType):
        return ArrayType(merge_types(a.elementType, b.elementType) or StringType(), True)
    return StringType()


def merge_structs(a: StructType, b: StructType) -> StructType:
    """``a``'s fields then ``b``'s new ones, each typed by :func:`merge_types`."""
    types: dict[str, Optional[DataType]] = {f.name: f.dataType for f in a.fields}
    for f in b.fields:
        types[f.name] = merge_types(types.get(f.name), f.dataType)
    return StructType([StructField(n, t or StringType(), True) for n, t in types.items()])


def infer_text_type(text: str) -> Optional[DataType]:
    """Spark's CSV inference for one field: int, bigint, double, boolean, timestamp,
    else string; an empty field says nothing."""
    text = text.strip()
    if not text:
        return None
    try:
        n = int(text)
        return IntegerType() if -(1 << 31) <= n < (1 << 31) else LongType()
    except ValueError:
        pass
    try:
        float(text)
        return DoubleType()
    except ValueError:
        pass
    if text.lower() in ("true", "false"):
        return BooleanType()
    if len(text) >= 10 and text[4:5] == "-" and text[7:8] == "-":
        try:
            parse_datetime(text)
            return TimestampType()
        except ValueError:
            pass
    return StringType()


def merge_text_types(a: Optional[DataType], b: Optional[DataType]) -> Optional[DataType]:
    """CSV widening: int < bigint < double; any other conflict is string."""
    if a is None:
        return b
    if b is None or a == b:
        return a
    order = (IntegerType, LongType, DoubleType)
    if type(a) in order and type(b) in order:
        return max(a, b, key=lambda t: order.index(type(t)))
    return StringType()


# ---- DDL ----------------------------------------------------------------------------


def quote_name(name: str) -> str:
    """A column name as DDL writes it: backquoted, inner backquotes doubled."""
    return "`" + name.replace("`", "``") + "`"


def type_ddl(t: DataType) -> str:
    """``t`` in DDL (nested struct field names backquoted)."""
    if isinstance(t, StructType):
        return (
            "struct<"
            + ", ".join(f"{quote_name(f.name)}: {type_ddl(f.dataType)}" for f in t.fields)
            + ">"
        )
    if isinstance(t, ArrayType):
        return f"array<{type_ddl(t.elementType)}>"
    if isinstance(t, MapType):
        return f"map<{type_ddl(t.keyType)}, {type_ddl(t.valueType)}>"
    return t.simpleString()


def struct_ddl(struct: StructType) -> str:
    """A schema's DDL: "`a` bigint, `b` string"."""
    return ", ".join(f"{quote_name(f.name)} {type_ddl(f.dataType)}" for f in struct.fields)
