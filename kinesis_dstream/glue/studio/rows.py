"""Glue Studio's visual transforms that reshape rows: Explode Array Or Map Into Rows
(``gs_explode``), Flatten (``gs_flatten``), Remove Null Rows (``gs_null_rows``), Pivot
Rows Into Columns (``gs_pivot``) and Unpivot Columns Into Rows (``gs_unpivot``).

On a streaming job each runs on one micro-batch: a pivot's columns are the values the
batch has (two batches can give different columns), an aggregate covers the batch.
"""

from __future__ import annotations

from typing import Any

from ..errors import GlueError
from .registry import column, column_names, unquoted


def explode(df: Any, colName: str, newCol: str, outer: bool = False) -> Any:
    """Explode: a row for each element of the array column (``newCol`` holds it), or
    for each entry of a map (``newCol`` the key, ``<newCol>_value`` the value); the
    other columns repeated. A null or empty array drops the row unless ``outer``."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import ArrayType, MapType

    source = column(colName)
    kind = df.select(source).schema.fields[0].dataType
    function = F.explode_outer if outer else F.explode
    target = unquoted(newCol)
    others = [F.col(f"`{c}`") for c in df.columns if c not in (unquoted(colName), target)]
    if isinstance(kind, ArrayType):
        rest = [F.col(f"`{c}`") for c in df.columns if c != target]
        return df.select(*rest, function(source).alias(target))
    if isinstance(kind, MapType):
        return df.select(*others, function(source).alias(target, f"{target}_value"))
    raise GlueError(f"gs_explode: column {colName} is {kind.simpleString()}, not an array or map")


def flatten(df: Any, maxLevels: int = 0, separator: str = ".") -> Any:
    """Flatten: each struct's fields as top-level columns named by their path joined
    with ``separator`` (``a.b``), down ``maxLevels`` levels (0: all)."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StructType

    limit = int(maxLevels or 0)
    out: list = []

    def visit(path: list[str], dataType: Any, level: int) -> None:
        if isinstance(dataType, StructType) and (limit == 0 or level < limit):
            for field in dataType.fields:
                visit([*path, field.name], field.dataType, level + 1)
            return
        expr = F.col(".".join(f"`{p}`" for p in path))
        out.append(expr.alias(separator.join(path)))

    for field in df.schema.fields:
        visit([field.name], field.dataType, 0)
    return df.select(*out)


def null_rows(df: Any, extended: bool = False) -> Any:
    """Remove Null Rows: drops the rows whose columns are all null; ``extended``
    counts an empty string, array or map as null too."""
    from functools import reduce

    from pyspark.sql import functions as F
    from pyspark.sql.types import ArrayType, MapType, StringType

    def present(field: Any) -> Any:
        value = F.col(f"`{field.name}`")
        if extended and isinstance(field.dataType, StringType):
            return value.isNotNull() & (value != F.lit(""))
        if extended and isinstance(field.dataType, (ArrayType, MapType)):
            return value.isNotNull() & (F.size(value) > 0)
        return value.isNotNull()

    return df.where(reduce(lambda a, b: a | b, (present(f) for f in df.schema.fields)))


def pivot(df: Any, aggCol: str, aggFunction: str, colList: Any) -> Any:
    """Pivot Rows Into Columns: grouped by the other columns, a column for each value
    of ``colList``'s columns holding ``aggFunction`` (a Spark aggregate: ``sum``,
    ``avg``, ``mean``, ``count``…) of ``aggCol``."""
    from pyspark.sql import functions as F

    pivoted = column_names(colList)
    aggregate = getattr(F, aggFunction, None)
    if aggregate is None or not callable(aggregate):
        raise GlueError(f"gs_pivot: {aggFunction!r} is not a Spark aggregate function")
    keys = [c for c in df.columns if c not in {*pivoted, unquoted(aggCol)}]
    if len(pivoted) == 1:
        return df.groupBy(*keys).pivot(pivoted[0]).agg(aggregate(column(aggCol)))
    label = F.concat_ws("_", *[column(c).cast("string") for c in pivoted])
    combined = "__kinesis_dstream_pivot"
    return (
        df.withColumn(combined, label).groupBy(*keys).pivot(combined).agg(aggregate(column(aggCol)))
    )


def unpivot(df: Any, unpivotName: str, unpivotValue: str, cols: Any) -> Any:
    """Unpivot Columns Into Rows: for each row a row per column of ``cols``, with the
    column's name in ``unpivotName`` and its value in ``unpivotValue``; the other
    columns repeated."""
    names = column_names(cols)
    ids = [c for c in df.columns if c not in names]
    return df.unpivot(ids, names, unquoted(unpivotName), unquoted(unpivotValue))


def repartition(df: Any, numPartitionsStr: Any = "") -> Any:
    """Autobalance Processing: the frame spread evenly over ``numPartitionsStr``
    partitions (a number as a string; empty: Spark's default parallelism)."""
    text = str(numPartitionsStr or "").strip()
    if not text:
        return df.repartition(df.sparkSession.sparkContext.defaultParallelism)
    try:
        count = int(text)
    except ValueError:
        raise GlueError(
            f"gs_repartition: numPartitionsStr {numPartitionsStr!r} is not a number"
        ) from None
    return df.repartition(count)
