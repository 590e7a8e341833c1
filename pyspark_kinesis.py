"""``spark.read.format("kinesis")`` with no register line: PySpark's own lookup of Python
data sources imports this module and registers ``DefaultSource`` (see
``kinesis_dstream/sql_lookup.py``). It never raises: where PySpark has no Python data
source API, it holds nothing."""

try:
    from kinesis_dstream.sql_lookup import KinesisFoundBySpark as DefaultSource  # noqa: F401
except Exception:  # a raise here would break every Python data source of the session
    pass
