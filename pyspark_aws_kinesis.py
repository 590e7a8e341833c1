"""``spark.read.format("aws-kinesis")`` with no register line: PySpark's own lookup of
Python data sources imports this module and registers ``DefaultSource`` (see
``kinesis_dstream/sql_lookup.py``). It never raises, as ``pyspark_kinesis``."""

from pyspark_kinesis import found_by_spark

_found = found_by_spark("AwsKinesisFoundBySpark")
if _found is not None:
    DefaultSource = _found
