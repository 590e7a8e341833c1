"""``format("kinesis")`` and ``format("aws-kinesis")`` found by Spark itself, with no
``spark.dataSource.register`` line.

PySpark (since 4.0, ``pyspark/sql/worker/lookup_data_sources.py``) looks Python data
sources up at a session's first Python data source call: it imports every top-level module
whose name starts with ``pyspark_`` and registers its ``DefaultSource`` under
``DefaultSource.name()``. The package installs two such modules, ``pyspark_kinesis`` and
``pyspark_aws_kinesis``; each takes its ``DefaultSource`` from here.

Spark's lookup imports every ``pyspark_*`` module of the environment in one process, and one
that raises breaks every Python data source of the session; the names are looked up in every
session, whether it reads Kinesis or not. So the classes here are cheap to import (no
boto3, no source machinery: ``kinesis_dstream.sql.source`` costs 1-2 s of imports) and
load the real source (:class:`~kinesis_dstream.sql.source.KinesisDataSource`) when Spark
first uses the name. On a PySpark whose data source API the source cannot use (before
4.2), or without pyarrow, that first use fails with the one line saying why.
"""

from __future__ import annotations

from typing import Any

from pyspark.sql.datasource import DataSource

#: The connectors' format names (the Databricks connector's and the awslabs one's).
KINESIS = "kinesis"
AWS_KINESIS = "aws-kinesis"


class _FoundBySpark(DataSource):
    """A format name Spark's lookup registers; every call goes to the real source, loaded
    on first use. Spark makes the instance in each process that needs it (from the class
    and the options), so the real source is built per instance, once."""

    #: The class of ``kinesis_dstream.sql.source`` this name stands for.
    source_class = "KinesisDataSource"

    def _source(self) -> Any:
        real = getattr(self, "_real", None)
        if real is None:
            from .sql import source  # where it cannot load: a DependencyError's one line

            real = self._real = getattr(source, self.source_class)(self.options)
        return real

    def schema(self) -> Any:
        return self._source().schema()

    def reader(self, schema: Any) -> Any:
        return self._source().reader(schema)

    def writer(self, schema: Any, overwrite: bool) -> Any:
        return self._source().writer(schema, overwrite)

    def streamReader(self, schema: Any) -> Any:
        return self._source().streamReader(schema)

    def simpleStreamReader(self, schema: Any) -> Any:
        return self._source().simpleStreamReader(schema)

    def streamWriter(self, schema: Any, overwrite: bool) -> Any:
        return self._source().streamWriter(schema, overwrite)


class KinesisFoundBySpark(_FoundBySpark):
    """``format("kinesis")`` (the Databricks connector's name and options)."""

    source_class = "KinesisDataSource"

    @classmethod
    def name(cls) -> str:
        return KINESIS


class AwsKinesisFoundBySpark(_FoundBySpark):
    """``format("aws-kinesis")`` (the awslabs connector's name and ``kinesis.`` options)."""

    source_class = "AwsKinesisDataSource"

    @classmethod
    def name(cls) -> str:
        return AWS_KINESIS
