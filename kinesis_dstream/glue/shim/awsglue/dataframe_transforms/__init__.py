from kinesis_dstream.glue.transforms import DataFrameApplyMapping as ApplyMapping

__all__ = ["ApplyMapping"]
