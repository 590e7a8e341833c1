"""The job process: ``kinesis-dstream glue run``, the script's process and session, and the
job parameters, files and Python modules Glue gives a job before its script starts."""
