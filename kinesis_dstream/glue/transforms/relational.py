"""Glue's reshaping transforms on a DataFrame: UnnestFrame, Relationalize, Unbox.

- ``unnest``: every struct field becomes top-level columns named by their path
  (``name.first``), as Glue's; arrays and maps stay.
- ``relationalize``: the frame unnested, then each array pivoted out into its own frame
  named ``<parent frame>_<column>``, with ``id`` (the value left in the parent's column,
  to join on), ``index`` (the element's place, from 0) and the element under
  ``<column>.val`` (unnested in turn; arrays in it pivot out again). The frames are one
  computation of the batch (materialized once), so ids agree between them.
- ``unbox``: a string field holding JSON (or CSV) replaced by its parsed value, the
  schema inferred from the batch's values of the field; a text that does not parse is
  null, counted and logged.
"""

from __future__ import annotations

import logging
from typing import Any

from ..errors import GlueError, batch_only, not_provided
from .fields import find_field, parse_path, top_column

log = logging.getLogger(__name__)

#: The column of a frame's row ids while it is pivoted.
_ROW_ID = "__glue_row_id"


def unnest(df: Any) -> Any:
    """Every nested struct field as a top-level column named by its dotted path."""
    from pyspark.sql.types import StructType

    columns: list = []

    def walk(data_type: Any, column: Any, name: str) -> None:
        if isinstance(data_type, StructType) and data_type.fields:
            for field in data_type.fields:
                walk(field.dataType, column.getField(field.name), f"{name}.{field.name}")
        else:
            columns.append(column.alias(name))

    for field in df.schema.fields:
        walk(field.dataType, top_column(field.name), field.name)
    return df.select(*columns)


def relationalize(df: Any, root_name: str) -> dict:
    """``{frame name: DataFrame}``: the root frame first, then one per pivoted array."""
    batch_only(df, "Relationalize")
    frames: dict = {}
    _pivot(df, root_name, frames)
    return frames


def _pivot(df: Any, name: str, frames: dict) -> None:
    from pyspark.sql import functions as F
    from pyspark.sql.types import ArrayType

    flat = unnest(df)
    arrays = [f.name for f in flat.schema.fields if isinstance(f.dataType, ArrayType)]
    if not arrays:
        frames[name] = flat
        return
    # ids fixed once: the parent and its pivoted frames must agree on them
    numbered = flat.withColumn(_ROW_ID, F.monotonically_increasing_id()).localCheckpoint()
    row_id = F.col(_ROW_ID)
    frames[name] = numbered.select(
        *[
            F.when(top_column(c).isNotNull(), row_id).alias(c) if c in arrays else top_column(c)
            for c in flat.columns
        ]
    )
    for column in arrays:
        exploded = numbered.select(
            row_id.alias("id"), F.posexplode(top_column(column)).alias("index", f"{column}.val")
        )
        _pivot(exploded, f"{name}_{column}", frames)


def unbox(df: Any, path: str, format: str, options: dict) -> Any:
    """The string field at ``path`` parsed as ``format`` (json, or csv with ``separator``)."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType

    from ..sources.infer_schema import UNPARSED_COLUMN, parse_texts
    from .choices import change_at

    batch_only(df, "Unbox")
    kind = str(format).lower()
    if kind not in ("json", "csv"):
        raise not_provided(f"Unbox of format {format!r}", "json and csv are")
    hit = find_field(df.schema, parse_path(path), True)
    if hit is None:
        raise GlueError(f"Unbox: the frame has no field {path!r}")
    parts, data_type = hit
    if not isinstance(data_type, StringType):
        raise GlueError(f"Unbox: field {path!r} is {data_type.simpleString()}, not a string")
    source = top_column(parts[0])
    for name in parts[1:]:
        source = source.getField(name)
    parsed, fields = parse_texts(df, source, kind, options.get("separator") or ",")
    value = F.struct(*[parsed.getField(f.name).alias(f.name) for f in fields])
    failed = source.isNotNull() & parsed.isNull()
    if kind == "json":
        failed = failed | (source.isNotNull() & parsed.getField(UNPARSED_COLUMN).isNotNull())
    value = F.when(source.isNull() | failed, F.lit(None)).otherwise(value)
    count = df.where(failed).count()
    if count:
        log.warning("Unbox: %d values of %r are not %s; they are null", count, path, kind)
    changed = change_at(top_column(parts[0]), list(parts[1:]), lambda _: value)
    return df.withColumn(parts[0], changed)
