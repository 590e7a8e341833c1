from kinesis_dstream.glue.job import Job

__all__ = ["Job"]
