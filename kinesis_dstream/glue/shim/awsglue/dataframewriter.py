from kinesis_dstream.glue.writers import DataFrameWriter

__all__ = ["DataFrameWriter"]
