from kinesis_dstream.glue.sinks.writers import DataFrameWriter

__all__ = ["DataFrameWriter"]
