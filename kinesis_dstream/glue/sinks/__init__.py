"""Writing: ``write_dynamic_frame`` / ``write_data_frame`` to Kinesis and S3, ``getSink``,
and the files written from the executors where Spark cannot write S3."""
