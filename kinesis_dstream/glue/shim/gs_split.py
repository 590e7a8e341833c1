"""Glue Studio's Split String visual transform:
``frame.gs_split(...)`` (see docs/glue.md)."""

from kinesis_dstream.glue.studio.columns import split
from kinesis_dstream.glue.studio.registry import register

register("gs_split", split)
