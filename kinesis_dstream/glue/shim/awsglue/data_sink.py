"""``awsglue.data_sink``: the DataSink ``GlueContext.getSink`` returns."""

from kinesis_dstream.glue.sinks.data_sink import DataSink

__all__ = ["DataSink"]
