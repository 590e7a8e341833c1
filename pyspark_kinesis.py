"""``spark.read.format("kinesis")`` with no register line: PySpark's own lookup of Python
data sources imports this module and registers ``DefaultSource`` (see
``kinesis_dstream/sql_lookup.py``). It never raises: where PySpark has no Python data
source API, it holds nothing; where the names cannot load, it holds nothing and says why in
one line on stderr."""

from typing import Optional


def found_by_spark(name: str) -> Optional[type]:
    """``kinesis_dstream.sql_lookup``'s class ``name``, or None (said on stderr unless this
    PySpark has no data source API)."""
    try:
        from kinesis_dstream import sql_lookup

        return getattr(sql_lookup, name)
    except ImportError as missing:  # no data source API in this PySpark (< 4.0)
        if missing.name in ("pyspark", "pyspark.sql", "pyspark.sql.datasource"):
            return None
        problem: Exception = missing
    except Exception as error:  # a raise here would break every Python data source
        problem = error
    import sys

    print(f"kinesis_dstream: format names not registered: {problem!r}", file=sys.stderr)
    return None


_found = found_by_spark("KinesisFoundBySpark")
if _found is not None:
    DefaultSource = _found
