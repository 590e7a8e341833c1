"""Glue Studio's Explode Array Or Map Into Rows visual transform:
``frame.gs_explode(...)`` (see docs/glue.md)."""

from kinesis_dstream.glue.studio.registry import register
from kinesis_dstream.glue.studio.rows import explode

register("gs_explode", explode)
