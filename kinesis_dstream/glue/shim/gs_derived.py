"""Glue Studio's Derived Column visual transform:
``frame.gs_derived(...)`` (see docs/glue.md)."""

from kinesis_dstream.glue.studio.columns import derived
from kinesis_dstream.glue.studio.registry import register

register("gs_derived", derived)
