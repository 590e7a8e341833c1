from kinesis_dstream.glue.errors import GlueArgumentError
from kinesis_dstream.glue.job.arguments import GlueArgumentParser, getResolvedOptions

__all__ = ["GlueArgumentError", "GlueArgumentParser", "getResolvedOptions"]
