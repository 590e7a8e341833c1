from kinesis_dstream.glue.context import GlueContext

__all__ = ["GlueContext"]
