"""Glue Studio's Extract JSON Path visual transform:
``frame.gs_extract_json(...)`` (see docs/glue.md)."""

from kinesis_dstream.glue.studio.columns import extract_json
from kinesis_dstream.glue.studio.registry import register

register("gs_extract_json", extract_json)
