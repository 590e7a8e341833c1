"""Glue's record functions on a batch: ``Filter``/``DynamicFrame.filter`` and
``Map``/``DynamicFrame.map``, the function receiving each record as a DynamicRecord.

A DynamicRecord is Glue's: a dict (``rec["a"]``, ``rec["a"]["b"]``, ``rec.get``,
assignment and ``del``) whose keys are attributes too (``rec.a``); a struct is a nested
DynamicRecord, an array a list, a map a dict. The functions run in Spark's Python workers
over the batch's RDD, once per record: the result is materialized (``localCheckpoint``,
freed when the frame is no longer referenced) so the records that failed are counted,
logged and kept as the frame's error records without calling the function again.

What fails, as Glue's ``filter`` and ``map`` do in aws-glue-libs:

- Filter: a KeyError, ValueError or TypeError in the predicate (a missing field, a null
  compared to a number) drops the record; any other exception makes it an error record.
- Map: any exception, or a result that is not a record (None), makes it an error record.

The output of Map has the schema of what the function returned, inferred from every
result: a field the input had keeps its type while its values still fit it; a new one
is inferred from its Python values (int: bigint, float: double, str, bool, Decimal,
datetime, date, dict: struct, list: array); a field whose values are of conflicting
types across the batch (Glue's choice type) becomes a string, with one warning naming it.
"""

from __future__ import annotations

import datetime
import decimal
import json
import logging
from typing import Any, Callable, Optional

from ..errors import batch_only

log = logging.getLogger(__name__)

#: The schema of a frame's error records (``errorsAsDynamicFrame``).
ERROR_SCHEMA = "transformation string, errorMessage string, record string"
_OK, _DROPPED, _ERROR = 0, 1, 2
_INT_RANGES = {"tinyint": 2**7, "smallint": 2**15, "int": 2**31, "bigint": 2**63}


class DynamicRecord(dict):
    """Glue's DynamicRecord: a dict whose keys are also attributes."""

    def __getattr__(self, attr: str) -> Any:
        try:
            return self[attr]
        except KeyError:
            raise AttributeError(attr) from None

    def __setattr__(self, attr: str, value: Any) -> None:
        self[attr] = value

    def __delattr__(self, attr: str) -> None:
        del self[attr]


def to_record(value: Any) -> Any:
    """A Spark Row (and what it holds) as Glue's DynamicRecord values."""
    from pyspark.sql import Row

    if isinstance(value, Row):
        return DynamicRecord((k, to_record(v)) for k, v in zip(value.__fields__, value))
    if isinstance(value, dict):
        return {k: to_record(v) for k, v in value.items()}
    if isinstance(value, list):
        return [to_record(v) for v in value]
    return value


def to_plain(value: Any) -> Any:
    """A DynamicRecord (or anything a function returned) as plain dicts and lists."""
    if isinstance(value, dict):
        return {str(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_plain(v) for v in value]
    return value


def _record_text(record: Any) -> str:
    return json.dumps(to_plain(record), default=str, sort_keys=True)


def filter_rows(df: Any, f: Callable, where: str = "Filter") -> tuple:
    """(the rows for which ``f(record)`` is true, the error records' DataFrame or None)."""
    batch_only(df, where)

    def judge(row: Any) -> tuple:
        record = to_record(row)
        try:
            return (_OK if f(record) else _DROPPED, row)
        except (KeyError, ValueError, TypeError):
            return (_DROPPED, row)
        except Exception as e:  # Glue keeps any other failure as an error record
            return (_ERROR, (where, f"{type(e).__name__}: {e}", _record_text(record)))

    judged = _materialized(df.rdd.map(judge))
    kept = judged.filter(lambda r: r[0] == _OK).map(lambda r: r[1])
    return df.sparkSession.createDataFrame(kept, df.schema), _errors(df, judged, where)


def map_rows(df: Any, f: Callable, where: str = "Map") -> tuple:
    """(``f``'s results as a DataFrame of their inferred schema, the error records or None)."""
    batch_only(df, where)
    from pyspark.sql import types as T

    hint = df.schema

    def apply(row: Any) -> tuple:
        record = to_record(row)
        try:
            result = f(record)
        except Exception as e:
            return (_ERROR, (where, f"{type(e).__name__}: {e}", _record_text(record)))
        if not isinstance(result, dict):
            message = (
                f"User-specified function returned {type(result).__name__} instead of DynamicRecord"
            )
            return (_ERROR, (where, message, _record_text(record)))
        plain = to_plain(result)
        return (_OK, (plain, infer_type(plain, hint).json()))

    mapped = _materialized(df.rdd.map(apply))
    results = mapped.filter(lambda r: r[0] == _OK).map(lambda r: r[1])
    kinds = results.map(lambda r: r[1]).distinct().collect()
    schema: Any = T.StructType([])
    conflicts: list = []
    for text in kinds:
        schema = merge_types(schema, T._parse_datatype_json_string(text), conflicts, ())
    if conflicts:
        log.warning(
            "%s: fields with values of different types across the batch are strings here "
            "(Glue would make them choice types): %s",
            where,
            ", ".join(sorted({".".join(p) for p in conflicts})),
        )
    rows = results.map(lambda r: conform(r[0], schema))
    return df.sparkSession.createDataFrame(rows, schema, verifySchema=False), _errors(
        df, mapped, where
    )


def _materialized(rdd: Any) -> Any:
    """``rdd`` computed once: its blocks kept until it is no longer referenced."""
    rdd.localCheckpoint()  # marks it, in place
    rdd.count()
    return rdd


def _errors(df: Any, judged: Any, where: str) -> Optional[tuple]:
    """(count, DataFrame) of the error records, logged; None when there are none."""
    failed = judged.filter(lambda r: r[0] == _ERROR).map(lambda r: r[1])
    count = failed.count()
    if not count:
        return None
    first = failed.first()
    log.warning(
        "%s: %d records failed and are left out as error records "
        "(errorsCount, errorsAsDynamicFrame); the first: %s",
        where,
        count,
        first[1],
    )
    return count, df.sparkSession.createDataFrame(failed, ERROR_SCHEMA)


def _fits(value: Any, spark_type: Any) -> bool:
    name = spark_type.simpleString()
    if isinstance(value, bool):
        return name == "boolean"
    if isinstance(value, int):
        bound = _INT_RANGES.get(name)
        return bound is not None and -bound <= value < bound
    if isinstance(value, float):
        return name in ("double", "float")
    if isinstance(value, str):
        return name == "string"
    if isinstance(value, decimal.Decimal):
        return name.startswith("decimal")
    if isinstance(value, datetime.datetime):
        return name in ("timestamp", "timestamp_ntz")
    if isinstance(value, datetime.date):
        return name == "date"
    if isinstance(value, (bytes, bytearray)):
        return name == "binary"
    return False


def infer_type(value: Any, hint: Any = None) -> Any:
    """The Spark type of a returned value; ``hint`` is the input's type at its place."""
    from pyspark.sql import types as T

    if value is None:
        return hint if hint is not None else T.NullType()
    if isinstance(value, dict):
        if isinstance(hint, T.MapType):
            values: Any = T.NullType()
            for v in value.values():
                values = merge_types(values, infer_type(v, hint.valueType), [], ())
            return T.MapType(T.StringType(), values)
        hints = {f.name: f.dataType for f in hint.fields} if isinstance(hint, T.StructType) else {}
        return T.StructType(
            [T.StructField(k, infer_type(v, hints.get(k))) for k, v in value.items()]
        )
    if isinstance(value, list):
        element_hint = hint.elementType if isinstance(hint, T.ArrayType) else None
        element: Any = element_hint or T.NullType()
        for v in value:
            element = merge_types(element, infer_type(v, element_hint), [], ())
        return T.ArrayType(element)
    if hint is not None and _fits(value, hint):
        return hint
    return T._infer_type(value)


_WIDENING = ("tinyint", "smallint", "int", "bigint", "float", "double")


def merge_types(a: Any, b: Any, conflicts: list, path: tuple) -> Any:
    """The type holding values of ``a`` and ``b``; a conflict is a string (path noted)."""
    from pyspark.sql import types as T

    if a is None or isinstance(a, T.NullType):
        return b
    if isinstance(b, T.NullType) or a == b:
        return a
    if isinstance(a, T.StructType) and isinstance(b, T.StructType):
        theirs = {f.name: f.dataType for f in b.fields}
        fields = [
            T.StructField(
                f.name, merge_types(f.dataType, theirs.get(f.name), conflicts, (*path, f.name))
            )
            if f.name in theirs
            else f
            for f in a.fields
        ]
        fields += [f for f in b.fields if f.name not in {g.name for g in a.fields}]
        return T.StructType(fields)
    if isinstance(a, T.ArrayType) and isinstance(b, T.ArrayType):
        return T.ArrayType(merge_types(a.elementType, b.elementType, conflicts, path))
    if isinstance(a, T.MapType) and isinstance(b, T.MapType):
        return T.MapType(T.StringType(), merge_types(a.valueType, b.valueType, conflicts, path))
    names = (a.simpleString(), b.simpleString())
    if all(n in _WIDENING for n in names):
        widest = max(names, key=_WIDENING.index)
        return a if a.simpleString() == widest else b  # no parser: runs in workers too
    conflicts.append(path)
    return T.StringType()


def conform(value: Any, spark_type: Any) -> Any:
    """``value`` as ``spark_type`` holds it (a conflicting value as its text)."""
    from pyspark.sql import types as T

    if value is None:
        return None
    if isinstance(spark_type, T.StructType):
        if not isinstance(value, dict):
            return None
        return tuple(conform(value.get(f.name), f.dataType) for f in spark_type.fields)
    if isinstance(spark_type, T.ArrayType):
        return [conform(v, spark_type.elementType) for v in value]
    if isinstance(spark_type, T.MapType):
        return {k: conform(v, spark_type.valueType) for k, v in value.items()}
    if isinstance(spark_type, T.StringType) and not isinstance(value, str):
        return json.dumps(value, default=str) if isinstance(value, (dict, list)) else str(value)
    if isinstance(spark_type, (T.DoubleType, T.FloatType)) and not isinstance(value, float):
        return float(value)
    return value
