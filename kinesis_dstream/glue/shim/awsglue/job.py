from kinesis_dstream.glue.job.glue_job import Job

__all__ = ["Job"]
