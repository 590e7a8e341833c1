"""Glue Studio's Flatten visual transform:
``frame.gs_flatten(...)`` (see docs/glue.md)."""

from kinesis_dstream.glue.studio.registry import register
from kinesis_dstream.glue.studio.rows import flatten

register("gs_flatten", flatten)
