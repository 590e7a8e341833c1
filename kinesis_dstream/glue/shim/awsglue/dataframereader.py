from kinesis_dstream.glue.sources.readers import DataFrameReader

__all__ = ["DataFrameReader"]
