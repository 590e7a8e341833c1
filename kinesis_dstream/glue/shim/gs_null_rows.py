"""Glue Studio's Remove Null Rows visual transform:
``frame.gs_null_rows(...)`` (see docs/glue.md)."""

from kinesis_dstream.glue.studio.registry import register
from kinesis_dstream.glue.studio.rows import null_rows

register("gs_null_rows", null_rows)
