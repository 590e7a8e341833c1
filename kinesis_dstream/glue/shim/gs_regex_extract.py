"""Glue Studio's Regex Extractor visual transform:
``frame.gs_regex_extract(...)`` (see docs/glue.md)."""

from kinesis_dstream.glue.studio.columns import regex_extract
from kinesis_dstream.glue.studio.registry import register

register("gs_regex_extract", regex_extract)
