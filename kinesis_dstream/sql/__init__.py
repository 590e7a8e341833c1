"""Structured Streaming for Kinesis through PySpark's Python Data Source API.

    from kinesis_dstream.sql import KinesisDataSource
    spark.dataSource.register(KinesisDataSource)
    df = spark.readStream.format("kinesis").option("streamName", "my-stream").load()

Needs PySpark >= 4.2 (its Python Data Source API with streaming admission control,
``pyspark.sql.streaming.datasource``) and pyarrow: ``pip install 'kinesis_dstream[sql]'``.
The data source classes load on first use, so the pure parts below them (payload parsing,
options, starting positions) import on any PySpark the package supports, and an older
PySpark gets one line naming the release the source needs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..extras import require

require("pyspark", "sql", "kinesis_dstream.sql")
require("pyarrow", "sql", "kinesis_dstream.sql")

from .config.options import OptionError, SinkOptions, SourceOptions  # noqa: E402

if TYPE_CHECKING:  # for type checkers and the API reference; at run time: __getattr__
    from .source import AwsKinesisDataSource, KinesisDataSource, KinesisStreamReader

_SOURCE_NAMES = ("AwsKinesisDataSource", "KinesisDataSource", "KinesisStreamReader")

__all__ = [
    "AwsKinesisDataSource",
    "KinesisDataSource",
    "KinesisStreamReader",
    "OptionError",
    "SinkOptions",
    "SourceOptions",
]


def __getattr__(name: str) -> Any:
    if name in _SOURCE_NAMES:
        from . import source

        return getattr(source, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
