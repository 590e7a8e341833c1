from kinesis_dstream.glue.readers import DataFrameReader

__all__ = ["DataFrameReader"]
