"""Glue Studio's Unpivot Columns Into Rows visual transform:
``frame.gs_unpivot(...)`` (see docs/glue.md)."""

from kinesis_dstream.glue.studio.registry import register
from kinesis_dstream.glue.studio.rows import unpivot

register("gs_unpivot", unpivot)
