"""``df.writeStream.format("kinesis")`` and ``df.write.format("kinesis")``.

Each task writes its rows through a :class:`~kinesis_dstream.producer.KinesisProducer`
(batched PutRecords, per-record retries with backoff, KPL aggregation when
``aggregationEnabled``). Nothing is dropped: records still failing after the retry budget
fail the task with the count per error code, so Spark fails (or retries) the batch.
Like every Spark sink without transactions, a retried batch may write a record twice
(at-least-once); Kinesis has no idempotent put.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any, Optional

from pyspark.sql.datasource import DataSourceStreamWriter, DataSourceWriter, WriterCommitMessage
from pyspark.sql.types import BinaryType, StringType, StructType

from ..producer import DEFAULT_PUT_BACKOFF, KinesisProducer
from ..retrieval.streams import require_stream
from .config.options import OptionError, SinkOptions

log = logging.getLogger(__name__)

REQUIRED_COLUMNS = {"data": (BinaryType, StringType), "partitionKey": (StringType,)}
OPTIONAL_COLUMNS = {"explicitHashKey": (StringType,)}


@dataclass
class KinesisCommitMessage(WriterCommitMessage):
    records_written: int
    put_calls: int
    records_retried: int


def check_columns(schema: StructType, where: str, fixed_key: bool = False) -> None:
    """Fail before the query starts when the input lacks or mistypes a column.

    ``fixed_key``: option partitionKey names no column, so every record gets that key.
    """
    fields = {f.name: f.dataType for f in schema.fields}
    required = [n for n in REQUIRED_COLUMNS if not (fixed_key and n == "partitionKey")]
    missing = [name for name in required if name not in fields]
    if missing:
        raise OptionError(
            f"the Kinesis sink for {where} needs column(s) {missing}; the input has "
            f"{sorted(fields)} (required: data binary or string, partitionKey string; "
            "optional: explicitHashKey string)"
        )
    for name, types in {**REQUIRED_COLUMNS, **OPTIONAL_COLUMNS}.items():
        if name in fields and not isinstance(fields[name], types):
            allowed = " or ".join(t.typeName() for t in types)
            raise OptionError(
                f"the Kinesis sink for {where}: column {name!r} must be {allowed}, got "
                f"{fields[name].simpleString()}"
            )
    ignored = sorted(set(fields) - set(REQUIRED_COLUMNS) - set(OPTIONAL_COLUMNS))
    if ignored:
        log.warning("the Kinesis sink for %s does not write columns %s", where, ignored)


def partition_key_source(key: Optional[str], columns: Sequence[str]) -> tuple:
    """Glue's rule for option ``partitionKey``: ``(the column giving each record's key,
    the one key of every record)``. A key naming a column of the input is that column;
    any other key is every record's key; without one, the input's ``partitionKey``
    column. The sink and the Glue layer's Kinesis writer both follow it."""
    if key is None:
        return "partitionKey", None
    if key in columns:
        return key, None
    return None, key


class _KinesisWriterBase:
    def __init__(self, options: Any, schema: StructType) -> None:
        self.options = SinkOptions.parse(options)
        connection = self.options.connection
        names = schema.fieldNames()
        key = self.options.partition_key
        self._key_column, self._fixed_key = partition_key_source(key, names)
        if key is not None and key in names and not isinstance(schema[key].dataType, StringType):
            raise OptionError(
                f"option 'partitionKey'={key!r} names a column of type "
                f"{schema[key].dataType.simpleString()}; it must be a string"
            )
        check_columns(schema, connection.where, fixed_key=key is not None)
        require_stream(connection.client_spec().client(), connection.stream_name)
        self._has_hash_key = "explicitHashKey" in names

    def _producer(self) -> KinesisProducer:
        opts = self.options
        connection = opts.connection
        kwargs: dict = {}
        if opts.aggregation_max_bytes is not None:
            kwargs["aggregation_max_bytes"] = opts.aggregation_max_bytes
        if opts.aggregation_max_count is not None:
            kwargs["aggregation_max_records"] = opts.aggregation_max_count
        if opts.collection_max_count is not None:
            kwargs["max_records_per_put"] = opts.collection_max_count
        if opts.collection_max_bytes is not None:
            kwargs["max_bytes_per_put"] = opts.collection_max_bytes
        if opts.record_ttl_ms is not None:
            # awslabs drops a record not written within recordTtl; here it fails the batch
            ttl_s = opts.record_ttl_ms / 1000.0
            kwargs["put_backoff"] = replace(
                DEFAULT_PUT_BACKOFF, max_attempts=1_000_000, max_elapsed_s=ttl_s
            )
        buffered = opts.record_max_buffered_time_ms
        return KinesisProducer(
            connection.stream_name,
            client=connection.client_spec().client(),
            aggregate=opts.aggregation_enabled,
            max_buffered_time_s=None if buffered is None else buffered / 1000.0,
            rate_limit_percent=opts.producer_rate_limit_percent,
            **kwargs,
        )

    def write(self, rows: Iterator[Any]) -> KinesisCommitMessage:
        connection = self.options.connection
        key_column, fixed_key = self._key_column, self._fixed_key
        with self._producer() as producer:
            for row in rows:
                data = row["data"]
                key = fixed_key if fixed_key is not None else row[key_column]
                if data is None or key is None:
                    raise ValueError(
                        f"the Kinesis sink for {connection.where} got a row with a null "
                        f"{'data' if data is None else key_column}"
                    )
                hash_key = row["explicitHashKey"] if self._has_hash_key else None
                producer.put(data, key, hash_key)
        return KinesisCommitMessage(
            producer.records_written, producer.put_calls, producer.records_retried
        )


class KinesisStreamWriter(_KinesisWriterBase, DataSourceStreamWriter):
    def commit(self, messages: list, batchId: int) -> None:
        written = sum(m.records_written for m in messages if m is not None)
        where = self.options.connection.where
        log.info("batch %d: %d records written to %s", batchId, written, where)

    def abort(self, messages: list, batchId: int) -> None:
        written = sum(m.records_written for m in messages if m is not None)
        log.error(
            "batch %d failed after %d records were written to %s; Spark re-runs it (at-least-once)",
            batchId,
            written,
            self.options.connection.where,
        )


class KinesisBatchWriter(_KinesisWriterBase, DataSourceWriter):
    def commit(self, messages: list) -> None:
        pass

    def abort(self, messages: list) -> None:
        pass
