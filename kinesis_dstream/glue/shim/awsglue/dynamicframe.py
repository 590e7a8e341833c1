from kinesis_dstream.glue.dynamicframe import DynamicFrame, DynamicFrameCollection
from kinesis_dstream.glue.readers import DynamicFrameReader
from kinesis_dstream.glue.writers import DynamicFrameWriter

__all__ = ["DynamicFrame", "DynamicFrameCollection", "DynamicFrameReader", "DynamicFrameWriter"]
