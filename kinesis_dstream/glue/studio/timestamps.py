"""Glue Studio's timestamp transforms: Add Current Timestamp (``gs_now``), Format
Timestamp (``gs_format_timestamp``) and To Timestamp (``gs_to_timestamp``).

Glue Studio takes a date format either in Python's ``strftime`` codes (``%Y-%m-%d``) or
as Spark's (Java's) pattern (``yyyy-MM-dd``); a format with ``%`` codes is translated.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from ..errors import GlueError
from .registry import column, unquoted

#: Python's strftime codes and the Java pattern of each (as Glue Studio maps them).
PYTHON_TO_JAVA = {
    "Y": "yyyy",
    "y": "yy",
    "m": "MM",
    "d": "dd",
    "H": "HH",
    "I": "hh",
    "M": "mm",
    "S": "ss",
    "f": "SSSSSS",
    "p": "a",
    "a": "E",
    "A": "EEEE",
    "b": "MMM",
    "B": "MMMM",
    "j": "DDD",
    "z": "Z",
    "Z": "z",
    "%": "%",
}

#: To Timestamp's ``colType`` values for numbers: the unit's seconds.
EPOCH_UNITS = {"seconds": 1, "milliseconds": 1_000, "microseconds": 1_000_000}


def java_date_format(date_format: str) -> str:
    """``date_format`` as Spark's pattern: ``%`` codes translated, the text between
    them quoted where it holds letters; a format without ``%`` is Spark's already."""
    if "%" not in date_format:
        return date_format
    out = []
    for literal, code in re.findall(r"([^%]*)(?:%(.))?", date_format):
        if literal:
            out.append(
                re.sub(r"[A-Za-z']+", lambda m: "'" + m.group().replace("'", "''") + "'", literal)
            )
        if code:
            if code not in PYTHON_TO_JAVA:
                raise GlueError(f"date format {date_format!r}: %{code} has no Spark equivalent")
            out.append(PYTHON_TO_JAVA[code])
    return "".join(out)


def now(df: Any, colName: str = "timestamp", dateFormat: Optional[str] = None) -> Any:
    """Add Current Timestamp: the time of the batch's query as a timestamp, or as a
    string in ``dateFormat``. On a streaming job each micro-batch gets its own time."""
    from pyspark.sql import functions as F

    value = F.current_timestamp()
    if dateFormat:
        value = F.date_format(value, java_date_format(dateFormat))
    return df.withColumn(unquoted(colName), value)


def format_timestamp(
    df: Any, colName: str, dateFormat: str, newColName: Optional[str] = None
) -> Any:
    """Format Timestamp: the timestamp column (a string is read as a timestamp first)
    as a string in ``dateFormat``, in ``newColName`` or replacing the column."""
    from pyspark.sql import functions as F

    value = F.date_format(column(colName).cast("timestamp"), java_date_format(dateFormat))
    return df.withColumn(unquoted(newColName or colName), value)


def to_timestamp(
    df: Any, colName: str, colType: str = "autodetect", newColName: Optional[str] = None
) -> Any:
    """To Timestamp: a number of ``seconds``/``milliseconds``/``microseconds`` since the
    epoch, or an ``iso`` string, as a timestamp; ``autodetect`` takes numbers by their
    size (below 10**11 seconds, below 10**14 milliseconds, else microseconds) and
    strings as ISO. A value that cannot be read is null."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import NumericType, StringType

    source = column(colName)
    kind = df.select(source).schema.fields[0].dataType
    if colType in EPOCH_UNITS:
        seconds = source.cast("double") / EPOCH_UNITS[colType]
        value = _from_seconds(seconds)
    elif colType == "iso":
        value = _from_iso(source)
    elif colType == "autodetect":
        if isinstance(kind, NumericType) or not isinstance(kind, StringType):
            value = _autodetect_number(source.cast("double"))
        else:
            number = F.expr(f"try_cast({_sql_name(colName)} as double)")
            value = F.when(number.isNotNull(), _autodetect_number(number)).otherwise(
                _from_iso(source)
            )
    else:
        raise GlueError(
            f"gs_to_timestamp: colType {colType!r} is not one of "
            f"{', '.join([*EPOCH_UNITS, 'iso', 'autodetect'])}"
        )
    return df.withColumn(unquoted(newColName or colName), value)


def _sql_name(name: str) -> str:
    return name if name.startswith("`") else ".".join(f"`{p}`" for p in name.split("."))


def _from_seconds(seconds: Any) -> Any:
    from pyspark.sql import functions as F

    return F.timestamp_micros((seconds * 1_000_000).cast("long"))


def _autodetect_number(number: Any) -> Any:
    from pyspark.sql import functions as F

    magnitude = F.abs(number)
    return (
        F.when(magnitude < 1e11, _from_seconds(number))
        .when(magnitude < 1e14, _from_seconds(number / 1_000))
        .otherwise(_from_seconds(number / 1_000_000))
    )


def _from_iso(source: Any) -> Any:
    from pyspark.sql import functions as F

    # try_to_timestamp: null, not an error, for a string that is not a timestamp
    return F.try_to_timestamp(source.cast("string"))
