"""``awsglue`` as kinesis_dstream provides it (see docs/glue.md): a Glue streaming
script's imports, mapped onto this library's Kinesis source and sink."""

from kinesis_dstream.glue.frames.dynamicframe import DynamicFrame

__kinesis_dstream_shim__ = True
__all__ = ["DynamicFrame"]
