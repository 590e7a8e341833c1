"""Structured Streaming for Kinesis through PySpark's Python Data Source API.

    from kinesis_dstream.sql import KinesisDataSource
    spark.dataSource.register(KinesisDataSource)
    df = spark.readStream.format("kinesis").option("streamName", "my-stream").load()

Needs PySpark >= 4.0 and pyarrow (``pip install 'kinesis_dstream[sql]'``).
"""

from __future__ import annotations

from ..extras import require


def _check_pyspark() -> None:
    require("pyspark", "sql", "kinesis_dstream.sql")
    require("pyarrow", "sql", "kinesis_dstream.sql")
    import pyspark

    major = int(pyspark.__version__.split(".")[0])
    if major < 4:
        raise ImportError(
            f"kinesis_dstream.sql needs PySpark >= 4.0 (its Python Data Source API); this is "
            f"PySpark {pyspark.__version__}. On PySpark 3.5 use the DStream API: "
            "kinesis_dstream.KinesisUtils.createStream works there"
        )


_check_pyspark()

from .config.options import OptionError, SinkOptions, SourceOptions  # noqa: E402
from .source import AwsKinesisDataSource, KinesisDataSource, KinesisStreamReader  # noqa: E402

__all__ = [
    "AwsKinesisDataSource",
    "KinesisDataSource",
    "KinesisStreamReader",
    "OptionError",
    "SinkOptions",
    "SourceOptions",
]
