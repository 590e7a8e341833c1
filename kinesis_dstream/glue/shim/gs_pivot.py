"""Glue Studio's Pivot Rows Into Columns visual transform:
``frame.gs_pivot(...)`` (see docs/glue.md)."""

from kinesis_dstream.glue.studio.registry import register
from kinesis_dstream.glue.studio.rows import pivot

register("gs_pivot", pivot)
