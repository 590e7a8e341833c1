from kinesis_dstream.glue.arguments import GlueArgumentParser, getResolvedOptions
from kinesis_dstream.glue.errors import GlueArgumentError

__all__ = ["GlueArgumentError", "GlueArgumentParser", "getResolvedOptions"]
