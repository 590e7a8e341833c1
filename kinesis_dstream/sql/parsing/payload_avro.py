"""Avro *datum* payloads (no container header) decoded with ``fastavro``.

The writer's schema is the ``schema`` option (or the deprecated ``avroSchema``), as Glue
requires when schema detection is off. Types map as Glue and spark-avro map them: enum
is string, fixed is binary, a union of null and one type is that type (nullable), a union
of several types is a struct with fields ``member0``, ``member1``... (one set, the rest
null), logical date/timestamp/decimal are date/timestamp/decimal. A record root gives one
column per field; any other root gives one column named ``value``.
"""

from __future__ import annotations

import io
from typing import Any

from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from ... import schema_registry
from ...extras import require

ROOT_VALUE_COLUMN = "value"

_PRIMITIVES: dict[str, DataType] = {
    "boolean": BooleanType(),
    "int": IntegerType(),
    "long": LongType(),
    "float": FloatType(),
    "double": DoubleType(),
    "bytes": BinaryType(),
    "string": StringType(),
    "enum": StringType(),
    "fixed": BinaryType(),
}
_LOGICAL: dict[str, DataType] = {
    "date": DateType(),
    "timestamp-millis": TimestampType(),
    "timestamp-micros": TimestampType(),
}


def parse_avro_schema(text: str) -> Any:
    """The parsed (fastavro) schema; ValueError naming what is wrong, fastavro's own
    exceptions included (:func:`~kinesis_dstream.schema_registry.parse_avro_schema`)."""
    return schema_registry.parse_avro_schema(text, "classification avro")


def _branches(schema: Any) -> list:
    return [b for b in schema if b != "null"]


def spark_type(schema: Any) -> DataType:
    """The Spark type of a parsed Avro schema."""
    if isinstance(schema, list):
        branches = _branches(schema)
        if len(branches) == 1:
            return spark_type(branches[0])
        return StructType(
            [StructField(f"member{i}", spark_type(b), True) for i, b in enumerate(branches)]
        )
    if isinstance(schema, str):
        return _PRIMITIVES.get(schema, StringType())
    logical = schema.get("logicalType")
    if logical == "decimal":
        return DecimalType(schema["precision"], schema.get("scale", 0))
    if logical in _LOGICAL:
        return _LOGICAL[logical]
    kind = schema["type"]
    if kind == "record" or kind == "error":
        return StructType(
            [StructField(f["name"], spark_type(f["type"]), True) for f in schema["fields"]]
        )
    if kind == "array":
        return ArrayType(spark_type(schema["items"]), True)
    if kind == "map":
        return MapType(StringType(), spark_type(schema["values"]), True)
    if isinstance(kind, (list, dict)):
        return spark_type(kind)
    return _PRIMITIVES.get(kind, StringType())


def payload_struct(schema: Any) -> StructType:
    """The payload columns of a parsed Avro schema."""
    root = spark_type(schema)
    if isinstance(root, StructType) and not isinstance(schema, list):
        return root
    return StructType([StructField(ROOT_VALUE_COLUMN, root, True)])


def fits(schema: Any, v: Any) -> bool:
    """Whether a decoded value came from this union branch (Python type test)."""
    name = schema if isinstance(schema, str) else schema.get("type")
    checks = {
        "boolean": lambda: type(v) is bool,
        "int": lambda: type(v) is int,
        "long": lambda: type(v) is int,
        "float": lambda: isinstance(v, float),
        "double": lambda: isinstance(v, float),
        "bytes": lambda: isinstance(v, bytes),
        "fixed": lambda: isinstance(v, bytes),
        "string": lambda: isinstance(v, str),
        "enum": lambda: isinstance(v, str),
        "array": lambda: isinstance(v, list),
        "map": lambda: isinstance(v, dict),
        "record": lambda: isinstance(v, dict),
    }
    check = checks.get(name) if isinstance(name, str) else None
    return check() if check else True


def adapt(schema: Any, v: Any) -> Any:
    """A fastavro value shaped like :func:`spark_type`'s type (unions become structs)."""
    if v is None:
        return None
    if isinstance(schema, list):
        branches = _branches(schema)
        if len(branches) == 1:
            return adapt(branches[0], v)
        out: dict[str, Any] = {f"member{i}": None for i in range(len(branches))}
        for i, branch in enumerate(branches):
            if fits(branch, v):
                out[f"member{i}"] = adapt(branch, v)
                break
        return out
    if not isinstance(schema, dict):
        return v
    kind = schema["type"]
    if kind in ("record", "error"):
        return {f["name"]: adapt(f["type"], v.get(f["name"])) for f in schema["fields"]}
    if kind == "array":
        return [adapt(schema["items"], x) for x in v]
    if kind == "map":
        return {k: adapt(schema["values"], x) for k, x in v.items()}
    if isinstance(kind, (list, dict)):
        return adapt(kind, v)
    return v


def decode_datum(schema: Any, data: bytes) -> dict:
    """One Avro datum -> a dict of payload column values. Raises on a bad datum."""
    require("fastavro", "sql", "classification avro")
    import fastavro

    buf = io.BytesIO(data)
    value = fastavro.schemaless_reader(buf, schema, None)
    if buf.tell() != len(data):
        raise ValueError(f"{len(data) - buf.tell()} bytes left after the Avro datum")
    return shape(schema, value)


def shape(schema: Any, value: Any) -> dict:
    """A decoded Avro value -> a dict of payload column values (:func:`payload_struct`)."""
    shaped = adapt(schema, value)
    if isinstance(schema, dict) and schema.get("type") in ("record", "error"):
        return shaped
    return {ROOT_VALUE_COLUMN: shaped}
