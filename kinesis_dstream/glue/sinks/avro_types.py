"""Glue's Avro types: what its Avro writer 1.7 writes, and the record schema Glue builds
from a catalog table's columns.

Glue's Avro writer ``version`` 1.7 (its default) has no logical types: decimal, date and
timestamp values are written as strings (AWS's "Avro format" page; 1.8 writes the
logical types ``decimal``, ``date`` and ``timestamp-micros``). Here the strings are
Spark's casts to string: a decimal with its scale (``12.30``), a date ``2026-04-09``, a
timestamp ``2026-04-09 07:05:00`` (fractions of a second when there are some) in the
session's time zone (UTC on Glue).

A Kinesis Avro table defined by its columns only (the console's "define a schema", no
``avroSchema``) reads with the record schema built from those columns as Spark's Avro
schema converter builds it: a record ``topLevelRecord``, each column nullable (the
union ``[type, "null"]``), nested records named after their path.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..errors import GlueError

#: Spark types with no Avro 1.7 type: written as strings.
_LOGICAL = ("DecimalType", "DateType", "TimestampType", "TimestampNTZType")


def _as_strings(data_type: Any, type_names: tuple) -> Any:
    from pyspark.sql import types as T

    if type(data_type).__name__ in type_names:
        return T.StringType()
    if isinstance(data_type, T.StructType):
        return T.StructType(
            [
                T.StructField(f.name, _as_strings(f.dataType, type_names), f.nullable)
                for f in data_type
            ]
        )
    if isinstance(data_type, T.ArrayType):
        return T.ArrayType(_as_strings(data_type.elementType, type_names), data_type.containsNull)
    if isinstance(data_type, T.MapType):
        return T.MapType(
            _as_strings(data_type.keyType, type_names),
            _as_strings(data_type.valueType, type_names),
            data_type.valueContainsNull,
        )
    return data_type


def columns_as_strings(df: Any, type_names: tuple) -> Any:
    """``df`` with every value of the Spark types named (``"DateType"``...), nested ones
    too, cast to string (Spark's text: ``12.30``, ``2026-04-09``, ``2026-04-09
    07:05:00``); ``df`` itself when it has none."""
    from ..transforms.fields import top_column

    columns, changed = [], False
    for field in df.schema:
        target = _as_strings(field.dataType, type_names)
        if target == field.dataType:
            columns.append(top_column(field.name))
        else:
            changed = True
            columns.append(top_column(field.name).cast(target).alias(field.name))
    return df.select(*columns) if changed else df


def avro_17_columns(df: Any) -> Any:
    """``df`` with every decimal, date and timestamp (nested ones too) cast to string,
    as Glue's Avro writer 1.7 writes them; ``df`` itself when it has none."""
    return columns_as_strings(df, _LOGICAL)


# --- a catalog table's columns as an Avro record schema ---------------------------------

_PRIMITIVES = {
    "boolean": "boolean",
    "tinyint": "int",
    "smallint": "int",
    "int": "int",
    "integer": "int",
    "bigint": "long",
    "float": "float",
    "double": "double",
    "string": "string",
    "binary": "bytes",
    "date": {"type": "int", "logicalType": "date"},
    "timestamp": {"type": "long", "logicalType": "timestamp-micros"},
}
_TOKEN = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*|\d+|[<>(),:]|`(?:[^`]|``)*`)")


class _HiveType:
    """A recursive-descent reader of one Hive type string (``struct<a:int,b:array<string>>``)."""

    def __init__(self, text: str, column: str) -> None:
        self.tokens = []
        self.column = column
        self.text = text
        pos = 0
        while pos < len(text):
            if text[pos:].strip() == "":
                break
            match = _TOKEN.match(text, pos)
            if not match:
                raise self.error(f"cannot read {text[pos:]!r}")
            self.tokens.append(match.group(1))
            pos = match.end()
        self.at = 0

    def error(self, why: str) -> GlueError:
        return GlueError(
            f"column {self.column!r}: type {self.text!r} has no Avro type here ({why})"
        )

    def take(self, expected: str = "") -> str:
        if self.at >= len(self.tokens):
            raise self.error("it ends too early")
        token = self.tokens[self.at]
        if expected and token != expected:
            raise self.error(f"expected {expected!r}, found {token!r}")
        self.at += 1
        return token

    def peek(self) -> str:
        return self.tokens[self.at] if self.at < len(self.tokens) else ""

    def avro(self, name: str) -> Any:
        word = self.take().lower()
        if word in _PRIMITIVES:
            return _PRIMITIVES[word]
        if word in ("decimal", "numeric"):
            precision, scale = 10, 0
            if self.peek() == "(":
                self.take("(")
                precision = int(self.take())
                if self.peek() == ",":
                    self.take(",")
                    scale = int(self.take())
                self.take(")")
            return {
                "type": "bytes",
                "logicalType": "decimal",
                "precision": precision,
                "scale": scale,
            }
        if word in ("char", "varchar"):
            if self.peek() == "(":
                self.take("(")
                self.take()
                self.take(")")
            return "string"
        if word == "array":
            self.take("<")
            items = self.avro(f"{name}_item")
            self.take(">")
            return {"type": "array", "items": [items, "null"]}
        if word == "map":
            self.take("<")
            if self.take().lower() not in ("string", "varchar", "char"):
                raise self.error("Avro maps have string keys")
            self.take(",")
            values = self.avro(f"{name}_value")
            self.take(">")
            return {"type": "map", "values": [values, "null"]}
        if word == "struct":
            self.take("<")
            fields = []
            while True:
                field = self.take().strip("`").replace("``", "`")
                self.take(":")
                fields.append({"name": field, "type": [self.avro(f"{name}_{field}"), "null"]})
                if self.peek() != ",":
                    break
                self.take(",")
            self.take(">")
            return {"type": "record", "name": name, "fields": fields}
        raise self.error(f"unknown type {word!r}")


def columns_avro_schema(columns: list) -> str:
    """The Avro record schema (JSON text) Glue reads a Kinesis Avro table of only
    ``columns`` (``[{"Name": ..., "Type": ...}]``, Hive types) with."""
    fields = []
    for column in columns:
        name = str(column["Name"])
        reader = _HiveType(str(column["Type"]), name)
        avro = reader.avro(f"topLevelRecord_{name}")
        if reader.peek():
            raise reader.error(f"unexpected {reader.peek()!r}")
        fields.append({"name": name, "type": [avro, "null"]})
    return json.dumps({"type": "record", "name": "topLevelRecord", "fields": fields})
