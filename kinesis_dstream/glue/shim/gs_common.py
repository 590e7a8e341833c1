"""Glue Studio's ``gs_common`` helper module, which its visual transforms import: here
the registration they share (see docs/glue.md)."""

from kinesis_dstream.glue.studio.registry import column_names as split_string_list
from kinesis_dstream.glue.studio.registry import register as enrich_df

__all__ = ["enrich_df", "split_string_list"]
