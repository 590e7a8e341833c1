"""``spark.readStream.format("kinesis")``: the data source and its stream reader.

Spark runs the reader in three places: the source runner on the driver (offsets and
partitions: :class:`~.runner.SourceRunner`, built lazily there), and executor tasks,
which unpickle the reader and call :meth:`KinesisStreamReader.read` with one
:class:`~.partition.RangePartition`. The reader therefore holds only picklable settings;
the credentials it may carry travel inside Spark tasks like any closure, never into
offsets, logs or the checkpoint.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Optional

from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)
from pyspark.sql.types import StructType

from ..retrieval.reader import ReaderConfig
from .endstore import DynamoDBEndStore, EndStore, build_end_store
from .options import OptionError, SourceOptions
from .partition import ReadSettings, read_partition
from .positions import now_utc
from .schema import SCHEMA


class KinesisStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Micro-batches of Kinesis records; see the README's design section."""

    def __init__(self, options: SourceOptions) -> None:
        self.options = options
        self.store: EndStore = build_end_store(options)
        self.settings = ReadSettings(
            client_spec=options.connection.client_spec(),
            config=ReaderConfig(
                min_call_interval_s=options.min_fetch_period_ms / 1000.0,
                max_records_per_call=options.max_records_per_fetch,
                drop_outside_shard=options.drop_aggregates_outside_shard,
            ),
            fail_on_data_loss=options.fail_on_data_loss,
        )
        self._runner: Any = None

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_runner": None}  # the runner's clients stay on the driver

    @property
    def runner(self) -> Any:
        if self._runner is None:
            from .runner import SourceRunner

            if isinstance(self.store, DynamoDBEndStore):
                self.store.ensure_table()
            client = self.settings.client_spec.client()
            self._runner = SourceRunner(self.options, self.store, client)
        return self._runner

    def initialOffset(self) -> dict:
        return self.runner.initial_offset()

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        max_rows = limit.max_rows if isinstance(limit, ReadMaxRows) else None
        return self.runner.latest_offset(start, max_rows)

    def getDefaultReadLimit(self) -> ReadLimit:
        if self.options.max_records_per_batch is not None:
            return ReadMaxRows(self.options.max_records_per_batch)
        return ReadAllAvailable()

    def reportLatestOffset(self) -> Optional[dict]:
        return self.runner.report()

    def prepareForTriggerAvailableNow(self) -> None:
        self.runner.cutoff = now_utc()

    def partitions(self, start: dict, end: dict) -> list:
        return self.runner.partitions(end)

    def read(self, partition: InputPartition) -> Iterator[Any]:
        return read_partition(partition, self.store, self.settings)  # type: ignore[arg-type]

    def commit(self, end: dict) -> None:
        self.runner.commit(end)

    def stop(self) -> None:
        self._runner = None


class KinesisDataSource(DataSource):
    """``format("kinesis")``: a Kinesis source (``readStream``) and sink (``write``).

    Register once per session: ``spark.dataSource.register(KinesisDataSource)``.
    """

    @classmethod
    def name(cls) -> str:
        return "kinesis"

    def schema(self) -> StructType:
        SourceOptions.parse(self.options)  # every option checked before the query starts
        return SCHEMA

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        if schema != SCHEMA:
            raise OptionError(
                f"the Kinesis source has a fixed schema; do not pass one to readStream "
                f"(got {schema.simpleString()}, the source gives {SCHEMA.simpleString()})"
            )
        return KinesisStreamReader(SourceOptions.parse(self.options))

    def streamWriter(self, schema: StructType, overwrite: bool) -> Any:
        from .sink import KinesisStreamWriter

        return KinesisStreamWriter(self.options, schema)

    def writer(self, schema: StructType, overwrite: bool) -> Any:
        from .sink import KinesisBatchWriter

        return KinesisBatchWriter(self.options, schema)


class AwsKinesisDataSource(KinesisDataSource):
    """The same source under the awslabs connector's name, ``format("aws-kinesis")``."""

    @classmethod
    def name(cls) -> str:
        return "aws-kinesis"
