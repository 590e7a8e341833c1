"""``spark.readStream.format("kinesis")``: the data source and its stream reader.

Spark runs the reader in three places: the source runner on the driver (offsets and
partitions: :class:`~.runner.SourceRunner`, built lazily there), and executor tasks,
which unpickle the reader and call :meth:`KinesisStreamReader.read` with one
:class:`~.partition.RangePartition`. The reader therefore holds only picklable settings;
the credentials it may carry travel inside Spark tasks like any closure, never into
offsets, logs or the checkpoint.
"""

from __future__ import annotations

import logging
import signal
from collections.abc import Iterator
from dataclasses import replace
from typing import Any, Optional

from pyspark.sql.types import StructType

from ..extras import missing_release

try:
    from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
    from pyspark.sql.streaming.datasource import (
        ReadAllAvailable,
        ReadLimit,
        ReadMaxRows,
        SupportsTriggerAvailableNow,
    )
except ImportError:
    # The Python Data Source API came in PySpark 4.0, its admission control (ReadLimit,
    # SupportsTriggerAvailableNow) in 4.2: 4.0 and 4.1 can neither bound a micro-batch
    # (maxFetchRecordsPerShard...) nor run Trigger.AvailableNow.
    raise missing_release(
        "pyspark",
        "4.2",
        "kinesis_dstream.sql (the Structured Streaming source and sink)",
        "On older PySpark use the DStream API: kinesis_dstream.KinesisUtils.createStream",
    ) from None

from .config.options import OptionError, SourceOptions
from .ends.opening import build_end_store
from .ends.store import DynamoDBEndStore, EndStore
from .executor.group import plan_tasks, read_task
from .parsing.payload import PayloadParser, infer_schema, output_ddl
from .positions import now_utc
from .reading import read_settings, shaped
from .schema import OutputColumns

log = logging.getLogger(__name__)


class KinesisStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Micro-batches of Kinesis records; see docs/design/range-ends.md."""

    def __init__(
        self,
        options: SourceOptions,
        columns: Optional[OutputColumns] = None,
        parser: Optional[PayloadParser] = None,
    ) -> None:
        self.options = options
        self.columns = columns or OutputColumns.for_source("kinesis", options.add_record_timestamp)
        #: Glue's payload parsing: the parsed columns instead of the record columns.
        self.parser = parser
        self.store: EndStore = build_end_store(options)
        self.settings = read_settings(options)
        if options.fan_out is not None:
            self.settings = replace(self.settings, fanout=options.fan_out.subscribe)
        self._runner: Any = None
        self._many = len(options.connection.stream_names) > 1

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_runner": None}  # the runner's clients stay on the driver

    @property
    def runner(self) -> Any:
        if self._runner is None:
            from .driver.multi import build_runner

            if isinstance(self.store, DynamoDBEndStore):
                self.store.ensure_table()
            self._runner = build_runner(self.options, self.store)
            _stop_on_sigterm()
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
        self.runner.set_cutoff(now_utc())

    def partitions(self, start: dict, end: dict) -> list:
        options = self.options
        runner = self.runner
        ranges = runner.partitions(end, start) if self._many else runner.partitions(end)
        return plan_tasks(
            ranges, options.shards_per_task, options.fetch_buffer_bytes, runner.shard_lags()
        )

    def read(self, partition: InputPartition) -> Iterator[Any]:
        batches = read_task(partition, self.store, self.settings)
        yield from shaped(batches, self.columns, self.parser, _describe(partition))

    def commit(self, end: dict) -> None:
        self.runner.commit(end)

    def stop(self) -> None:
        """Spark's graceful stop of the query (not called when the driver dies)."""
        _ignore_sigterm()  # a SIGTERM arriving now must not cut the stop short
        runner, self._runner = self._runner, None
        if runner is not None:
            runner.stop()


def _same_reader_schema(fmt: Any, schema: StructType) -> None:
    """The registry's latest version may change between ``load()`` (which gave the
    DataFrame its columns) and the query's start: refuse to read into other columns."""
    columns = fmt.avro_struct().fields
    if list(schema.fields[: len(columns)]) != list(columns):
        raise ValueError(
            f"{fmt.registry.describe()} ({fmt.registry.reader.version_id}) has columns "
            f"{StructType(columns).simpleString()}, not the DataFrame's "
            f"{schema.simpleString()}: the schema changed since load(); load() again or "
            "name the version (schemaVersionNumber)"
        )


def _describe(partition: Any) -> str:
    parts = getattr(partition, "parts", (partition,))
    return ", ".join(f"{p.stream_name}/{p.shard_id}" for p in parts)


def _ignore_sigterm() -> None:
    import threading

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, signal.SIG_IGN)


def _stop_on_sigterm() -> None:
    """Let the source runner's process run ``stop()`` when Spark terminates it.

    Spark ends a query's source runner process with SIGTERM; by default Python dies at
    once, so PySpark's ``finally: reader.stop()`` never runs (a fan-out consumer asked to
    be deregistered would stay). Raising SystemExit instead unwinds through it.
    """
    import threading

    if threading.current_thread() is not threading.main_thread():
        return

    def leave(signum: int, frame: Any) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # once: let stop() finish
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, leave)


class KinesisDataSource(DataSource):
    """``format("kinesis")``: a Kinesis source (``readStream``) and sink (``write``).

    Register once per session: ``spark.dataSource.register(KinesisDataSource)``.
    """

    @classmethod
    def name(cls) -> str:
        return "kinesis"

    def _columns(self, options: SourceOptions) -> OutputColumns:
        return OutputColumns.for_source(self.name(), options.add_record_timestamp)

    def _payload(self, options: SourceOptions) -> Any:
        """The payload format, a registry schema's reader version looked up (driver)."""
        fmt = options.payload
        if fmt is None:
            return None
        try:
            return fmt.resolved(options.connection.region_name, options.connection.credentials)
        except ValueError as exc:
            raise OptionError(str(exc)) from None

    def schema(self) -> Any:
        options = SourceOptions.parse(self.options)  # every option checked before the start
        fmt = self._payload(options)
        if fmt is None:
            return self._columns(options).spark_schema
        ddl = fmt.payload_ddl()
        if ddl is None:  # inferSchema=true: from a bounded sample, once (see .sample)
            from .parsing.sample import sample_payloads

            ddl = infer_schema(sample_payloads(options), fmt)
            if not ddl.strip():
                raise OptionError(
                    f"option inferSchema=true found no record to infer the {fmt.classification} "
                    f"schema from in {options.connection.where}; give option 'schema'"
                )
        return output_ddl(ddl, (), options.add_record_timestamp)

    def _shape(self, options: SourceOptions, schema: StructType, how: str) -> tuple:
        """(columns, parser) of a read into ``schema``: the record columns, or the
        payload's parsed columns (``parser``, None without a classification)."""
        columns = self._columns(options)
        fmt = self._payload(options)
        if fmt is not None:
            parser = PayloadParser(fmt, schema, (), options.add_record_timestamp)
            try:
                parser.check()
                if fmt.registry is not None:
                    _same_reader_schema(fmt, schema)
            except ValueError as exc:
                raise OptionError(str(exc)) from None
            return columns, parser
        if schema != columns.spark_schema:
            raise OptionError(
                f"the Kinesis source has a fixed schema; do not pass one to {how} "
                f"(got {schema.simpleString()}, the source gives "
                f"{columns.spark_schema.simpleString()})"
            )
        return columns, None

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        from .batch.bounds import refuse_batch_options

        refuse_batch_options(self.options)
        options = SourceOptions.parse(self.options)
        columns, parser = self._shape(options, schema, "readStream")
        return KinesisStreamReader(options, columns, parser)

    def reader(self, schema: StructType) -> Any:
        """``spark.read.format("kinesis")``: a batch read between two positions (see
        :mod:`.batch`)."""
        from .batch.reader import KinesisBatchReader

        options = SourceOptions.parse(self.options)
        columns, parser = self._shape(options, schema, "read")
        return KinesisBatchReader(options, self.options, columns, parser)

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
