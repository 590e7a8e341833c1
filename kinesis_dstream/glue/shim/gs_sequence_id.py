"""Glue Studio's Identifier visual transform:
``frame.gs_sequence_id(...)`` (see docs/glue.md)."""

from kinesis_dstream.glue.studio.columns import sequence_id
from kinesis_dstream.glue.studio.registry import register

register("gs_sequence_id", sequence_id)
