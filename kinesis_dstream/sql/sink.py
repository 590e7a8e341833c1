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
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pyspark.sql.datasource import DataSourceStreamWriter, DataSourceWriter, WriterCommitMessage
from pyspark.sql.types import BinaryType, StringType, StructType

from ..producer import KinesisProducer
from ..retrieval.streams import require_stream
from .options import OptionError, SinkOptions

log = logging.getLogger(__name__)

REQUIRED_COLUMNS = {"data": (BinaryType, StringType), "partitionKey": (StringType,)}
OPTIONAL_COLUMNS = {"explicitHashKey": (StringType,)}


@dataclass
class KinesisCommitMessage(WriterCommitMessage):
    records_written: int
    put_calls: int
    records_retried: int


def check_columns(schema: StructType, where: str) -> None:
    """Fail before the query starts when the input lacks or mistypes a column."""
    fields = {f.name: f.dataType for f in schema.fields}
    missing = [name for name in REQUIRED_COLUMNS if name not in fields]
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


class _KinesisWriterBase:
    def __init__(self, options: Any, schema: StructType) -> None:
        self.options = SinkOptions.parse(options)
        connection = self.options.connection
        check_columns(schema, connection.where)
        require_stream(connection.client_spec().client(), connection.stream_name)
        self._has_hash_key = "explicitHashKey" in schema.fieldNames()

    def write(self, rows: Iterator[Any]) -> KinesisCommitMessage:
        connection = self.options.connection
        producer = KinesisProducer(
            connection.stream_name,
            client=connection.client_spec().client(),
            aggregate=self.options.aggregation_enabled,
        )
        with producer:
            for row in rows:
                data = row["data"]
                if data is None or row["partitionKey"] is None:
                    raise ValueError(
                        f"the Kinesis sink for {connection.where} got a row with a null "
                        f"{'data' if data is None else 'partitionKey'}"
                    )
                hash_key = row["explicitHashKey"] if self._has_hash_key else None
                producer.put(data, row["partitionKey"], hash_key)
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
