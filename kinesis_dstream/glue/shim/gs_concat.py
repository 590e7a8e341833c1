"""Glue Studio's Concatenate Columns visual transform:
``frame.gs_concat(...)`` (see docs/glue.md)."""

from kinesis_dstream.glue.studio.columns import concat
from kinesis_dstream.glue.studio.registry import register

register("gs_concat", concat)
