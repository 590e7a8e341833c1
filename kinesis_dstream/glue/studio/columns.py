"""Glue Studio's visual transforms that add or replace a column: Derived Column
(``gs_derived``), Concatenate Columns (``gs_concat``), Split String (``gs_split``),
Array To Columns (``gs_array_to_cols``), UUID (``gs_uuid``), Identifier
(``gs_sequence_id``) and Regex Extractor (``gs_regex_extract``).

Parameters are named and defaulted as Glue Studio's generated code passes them.
"""

from __future__ import annotations

import re
import time
from typing import Any, Optional

from ..errors import GlueError
from .registry import column, column_names, unquoted

#: Identifier with ``unique=True``: the batch's start in epoch milliseconds times this,
#: plus the row's index in the batch (so up to 10**12 rows a batch stay unique).
UNIQUE_ID_SCALE = 10**12


def derived(df: Any, colName: str, expr: str) -> Any:
    """Derived Column: ``colName`` set to the Spark SQL expression ``expr``."""
    from pyspark.sql import functions as F

    return df.withColumn(unquoted(colName), F.expr(expr))


def concat(
    df: Any, colName: str, colList: Any, spacer: str = "", nullString: Optional[str] = None
) -> Any:
    """Concatenate Columns: the columns of ``colList`` as strings, in order, joined by
    ``spacer``; a null value is ``nullString`` (by default an empty string)."""
    from pyspark.sql import functions as F

    parts = [
        F.coalesce(column(name).cast("string"), F.lit(nullString or ""))
        for name in column_names(colList)
    ]
    return df.withColumn(unquoted(colName), F.concat_ws(spacer or "", *parts))


def split(df: Any, colName: str, pattern: str, newColName: Optional[str] = None) -> Any:
    """Split String: the string column split on the regular expression ``pattern``
    into an array, in ``newColName`` (by default replacing the column)."""
    from pyspark.sql import functions as F

    return df.withColumn(
        unquoted(newColName or colName), F.split(column(colName).cast("string"), pattern)
    )


def array_to_cols(df: Any, colName: str, colList: Any, indexes: Any = None) -> Any:
    """Array To Columns: the array's elements into the columns named in ``colList``, in
    order or at the 1-based positions ``indexes`` (``"1,4"``); an array too short
    leaves the rest null."""
    from pyspark.sql import functions as F

    names = column_names(colList)
    if indexes is None or indexes == "":
        positions = list(range(1, len(names) + 1))
    else:
        try:
            positions = [int(i) for i in column_names(indexes)]
        except ValueError:
            raise GlueError(f"gs_array_to_cols: indexes must be numbers, got {indexes!r}") from None
        if len(positions) != len(names):
            raise GlueError(
                f"gs_array_to_cols: {len(names)} columns ({', '.join(names)}) but "
                f"{len(positions)} indexes ({indexes})"
            )
    array = column(colName)
    for name, position in zip(names, positions):
        # element_at is 1-based and, unlike [], null past the end under ANSI mode
        df = df.withColumn(name, F.when(F.size(array) >= position, F.element_at(array, position)))
    return df


def uuid(df: Any, colName: str = "uuid") -> Any:
    """UUID: a random 36-character UUID string per row."""
    from pyspark.sql import functions as F

    return df.withColumn(unquoted(colName), F.expr("uuid()"))


def sequence_id(df: Any, colName: str = "id", unique: bool = False) -> Any:
    """Identifier: a number per row, consecutive from 0 within the frame (a long).

    With ``unique``, as Glue Studio's option, the time is part of it so that runs do
    not repeat ids: a decimal(38,0), the batch's start in epoch milliseconds times
    10**12 plus the row's index. On a streaming job each micro-batch is a frame: the
    plain sequence restarts at 0 every batch, the unique one does not repeat.
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    order = "__kinesis_dstream_row_order"
    # one ordering window over the batch: a global consecutive index needs it
    index = F.row_number().over(Window.orderBy(order)) - 1
    numbered = df.withColumn(order, F.monotonically_increasing_id())
    if unique:
        started = int(time.time() * 1000)
        value = (F.lit(started).cast("decimal(38,0)") * F.lit(UNIQUE_ID_SCALE)) + index
        numbered = numbered.withColumn(unquoted(colName), value.cast("decimal(38,0)"))
    else:
        numbered = numbered.withColumn(unquoted(colName), index.cast("long"))
    return numbered.drop(order)


def regex_extract(df: Any, colName: str, regex: str, newCols: Any) -> Any:
    """Regex Extractor: the regular expression's groups into the columns ``newCols``
    (group 1 into the first…; without groups the whole match into the only one); a
    value that does not match gives empty strings, as Spark's ``regexp_extract``."""
    from pyspark.sql import functions as F

    names = column_names(newCols)
    source = column(colName).cast("string")
    if len(names) == 1:
        # the pattern is Java's: an unescaped "(" opens a group (not "(?:" or "(?<")
        group = 1 if re.search(r"(?<!\\)\((?!\?)", regex) else 0
        return df.withColumn(names[0], F.regexp_extract(source, regex, group))
    for group, name in enumerate(names, start=1):
        df = df.withColumn(name, F.regexp_extract(source, regex, group))
    return df


def extract_json(df: Any, colName: str, jsonPaths: Any, colList: Any, dropCol: bool = False) -> Any:
    """Extract JSON Path: from the JSON string column, the value at each of
    ``jsonPaths`` (``a.b``, or ``$.a.b``) into the column of ``colList`` at the same
    place, as a string (null where the path is absent); ``dropCol`` drops the JSON."""
    from pyspark.sql import functions as F

    paths, names = column_names(jsonPaths), column_names(colList)
    if len(paths) != len(names):
        raise GlueError(
            f"gs_extract_json: {len(paths)} jsonPaths ({', '.join(paths)}) but "
            f"{len(names)} columns ({', '.join(names)})"
        )
    source = column(colName).cast("string")
    for path, name in zip(paths, names):
        df = df.withColumn(
            name, F.get_json_object(source, path if path.startswith("$") else f"$.{path}")
        )
    return df.drop(unquoted(colName)) if dropCol else df
