"""Glue Studio's UUID visual transform:
``frame.gs_uuid(...)`` (see docs/glue.md)."""

from kinesis_dstream.glue.studio.columns import uuid
from kinesis_dstream.glue.studio.registry import register

register("gs_uuid", uuid)
