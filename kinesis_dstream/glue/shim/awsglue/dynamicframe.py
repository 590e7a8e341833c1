from kinesis_dstream.glue.frames.dynamicframe import (
    DynamicFrame,
    DynamicFrameCollection,
    ResolveOption,
)
from kinesis_dstream.glue.frames.records import DynamicRecord
from kinesis_dstream.glue.sinks.writers import DynamicFrameWriter
from kinesis_dstream.glue.sources.readers import DynamicFrameReader

__all__ = [
    "DynamicFrame",
    "DynamicFrameCollection",
    "DynamicFrameReader",
    "DynamicFrameWriter",
    "DynamicRecord",
    "ResolveOption",
]
