"""Glue Studio's Autobalance Processing visual transform:
``frame.gs_repartition(...)`` (see docs/glue.md)."""

from kinesis_dstream.glue.studio.registry import register
from kinesis_dstream.glue.studio.rows import repartition

register("gs_repartition", repartition)
