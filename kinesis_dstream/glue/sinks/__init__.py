"""Writing: ``write_dynamic_frame`` / ``write_data_frame`` to Kinesis, S3 and DynamoDB,
``getSink``, and the files and items written from the executors."""
