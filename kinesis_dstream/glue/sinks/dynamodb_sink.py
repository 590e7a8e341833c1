"""``write_dynamic_frame.from_options(connection_type="dynamodb")``: a frame's rows into
a DynamoDB table, written by the executors (nothing is collected on the driver).

The driver checks the options and the frame's types, describes the table once (its key
attributes and write capacity) and shares the capacity among the write's tasks; each
task (a Python data source writer, ``format("kinesis-dstream-glue-dynamodb")``,
registered by the GlueContext) converts its rows with Glue's type mapping
(:mod:`.dynamodb_types`) and writes them with :class:`~.dynamodb_writes.TableWriter`.
The driver logs what was written and names the rows that could not be. A write that
fails part-way leaves the items already written (puts are idempotent: the batch, run
again, writes them again): at least once, as Glue.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from pyspark.sql.datasource import DataSource, DataSourceArrowWriter, WriterCommitMessage

from ...aws import ClientSpec
from .avro_types import columns_as_strings
from .dynamodb_target import DynamoDBTarget, TableShape
from .dynamodb_types import TEXT_TYPES, batch_items, converter
from .dynamodb_writes import TableWriter, WriteCounts

log = logging.getLogger(__name__)

SINK_NAME = "kinesis-dstream-glue-dynamodb"


def write_dynamodb(spark: Any, df: Any, connection_options: Mapping[str, Any]) -> None:
    """Write ``df`` to the table ``connection_options`` name."""
    target = DynamoDBTarget.parse(connection_options)
    df = columns_as_strings(df, TEXT_TYPES)
    check_types(df)
    shape = TableShape.describe(target)
    tasks = target.parallel_tasks or min(
        df.rdd.getNumPartitions(), spark.sparkContext.defaultParallelism
    )
    units = shape.units_per_task(target, tasks)
    spec = target.client_spec()
    credentials = spec.credentials
    options = {
        "table": target.table,
        "keys": json.dumps(shape.keys),
        "units_per_s": repr(units),
        "retry": str(target.retry),
        "region": spec.region_name or "",
        "endpoint": spec.endpoint_url or "",
        "role_arn": (credentials.role_arn or "") if credentials else "",
        "role_session_name": (credentials.role_session_name or "") if credentials else "",
    }
    log.debug(
        "writing to DynamoDB table %s: %s WCU/s for each of %d tasks", target.table, units, tasks
    )
    df.write.format(SINK_NAME).mode("append").options(**options).save()


def check_types(df: Any) -> None:
    """A column of a type with no DynamoDB attribute is one line here, on the driver,
    before any task runs."""
    from pyspark.sql.pandas.types import to_arrow_schema

    for field in to_arrow_schema(df.schema):
        converter(field.type, field.name)


@dataclass
class TableWritten(WriterCommitMessage):
    """What one task wrote."""

    counts: WriteCounts


class DynamoDBTableWriter(DataSourceArrowWriter):
    """Each task: its rows into the table (see the module). ``commit`` and ``abort``
    run where Spark runs them (a Python worker the driver starts) and log there."""

    def __init__(self, options: Any) -> None:
        # Spark hands a data source its options case-insensitively: lower-case names
        self.table = options["table"]
        self.keys = json.loads(options["keys"])
        self.units_per_s = float(options["units_per_s"])
        self.retry = int(options["retry"])
        target = DynamoDBTarget(
            table=self.table,
            region=options.get("region") or None,
            endpoint=options.get("endpoint") or None,
            role_arn=options.get("role_arn") or None,
            role_session_name=options.get("role_session_name") or "",
        )
        self.client_spec: ClientSpec = target.client_spec()

    def write(self, iterator: Iterator[Any]) -> TableWritten:
        writer = TableWriter(
            self.client_spec.client(), self.table, self.keys, self.units_per_s, self.retry
        )
        converters = None
        for batch in iterator:
            if converters is None:
                converters = [converter(f.type, f.name) for f in batch.schema]
            writer.put_all(batch_items(batch, converters))
        writer.flush()
        return TableWritten(writer.counts)

    def commit(self, messages: list) -> None:
        counts = WriteCounts()
        for message in messages:
            if message is not None:
                counts.add(message.counts)
        log.info(
            "wrote %d items to DynamoDB table %s in %d requests (%d unprocessed items sent "
            "again; %d rows replaced by a later row of the same key in one request)",
            counts.written,
            self.table,
            counts.requests,
            counts.resent,
            counts.replaced,
        )
        if counts.skipped:
            log.error(
                "DynamoDB table %s: %d rows not written (%s); first: %s",
                self.table,
                sum(counts.skipped.values()),
                ", ".join(f"{reason}: {n}" for reason, n in sorted(counts.skipped.items())),
                "; ".join(counts.skipped_rows),
            )

    def abort(self, messages: list) -> None:
        written = sum(m.counts.written for m in messages if m is not None)
        log.warning(
            "the write to DynamoDB table %s failed after %d items of its finished tasks were "
            "written; they stay (a batch run again writes them again)",
            self.table,
            written,
        )


class DynamoDBSink(DataSource):
    """The data source behind the executors' DynamoDB writes (options: see
    :class:`DynamoDBTableWriter`)."""

    @classmethod
    def name(cls) -> str:
        return SINK_NAME

    def writer(self, schema: Any, overwrite: bool) -> DynamoDBTableWriter:
        return DynamoDBTableWriter(self.options)
