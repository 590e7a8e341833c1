"""Glue Studio's Array To Columns visual transform:
``frame.gs_array_to_cols(...)`` (see docs/glue.md)."""

from kinesis_dstream.glue.studio.columns import array_to_cols
from kinesis_dstream.glue.studio.registry import register

register("gs_array_to_cols", array_to_cols)
