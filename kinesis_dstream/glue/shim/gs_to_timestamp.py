"""Glue Studio's To Timestamp visual transform:
``frame.gs_to_timestamp(...)`` (see docs/glue.md)."""

from kinesis_dstream.glue.studio.registry import register
from kinesis_dstream.glue.studio.timestamps import to_timestamp

register("gs_to_timestamp", to_timestamp)
