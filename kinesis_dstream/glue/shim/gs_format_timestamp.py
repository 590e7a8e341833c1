"""Glue Studio's Format Timestamp visual transform:
``frame.gs_format_timestamp(...)`` (see docs/glue.md)."""

from kinesis_dstream.glue.studio.registry import register
from kinesis_dstream.glue.studio.timestamps import format_timestamp

register("gs_format_timestamp", format_timestamp)
