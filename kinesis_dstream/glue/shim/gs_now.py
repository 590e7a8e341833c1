"""Glue Studio's Add Current Timestamp visual transform:
``frame.gs_now(...)`` (see docs/glue.md)."""

from kinesis_dstream.glue.studio.registry import register
from kinesis_dstream.glue.studio.timestamps import now

register("gs_now", now)
