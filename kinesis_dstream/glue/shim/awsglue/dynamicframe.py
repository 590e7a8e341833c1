from kinesis_dstream.glue.dynamicframe import DynamicFrame, DynamicFrameCollection, ResolveOption
from kinesis_dstream.glue.dynamicframe_records import DynamicRecord
from kinesis_dstream.glue.readers import DynamicFrameReader
from kinesis_dstream.glue.writers import DynamicFrameWriter

__all__ = [
    "DynamicFrame",
    "DynamicFrameCollection",
    "DynamicFrameReader",
    "DynamicFrameWriter",
    "DynamicRecord",
    "ResolveOption",
]
