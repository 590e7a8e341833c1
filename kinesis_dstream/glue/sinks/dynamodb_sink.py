"""``write_dynamic_frame.from_options(connection_type="dynamodb")``: a frame's rows into
a DynamoDB table, written by the executors.

The driver checks the options and the frame's types, describes the table once (its key
attributes and write capacity) and shares the capacity among the write's tasks. Each
task (one a partition of the frame) converts its rows with Glue's type mapping
(:mod:`.dynamodb_types`) and writes them with :class:`~.dynamodb_writes.TableWriter`;
what comes back to the driver is the counts of each task, never the rows: the driver
logs what was written and names the rows that could not be (there, in the job's output;
a task's log stays in Spark's worker). A
write that fails part-way leaves the items already written (a put is idempotent: the
batch, run again, writes them again): at least once, as Glue.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ...aws import ClientSpec
from .avro_types import columns_as_strings
from .dynamodb_target import DynamoDBTarget, TableShape
from .dynamodb_types import TEXT_TYPES, row_converter
from .dynamodb_writes import TableWriter, WriteCounts

log = logging.getLogger(__name__)


def write_dynamodb(spark: Any, df: Any, connection_options: Mapping[str, Any]) -> WriteCounts:
    """Write ``df`` to the table ``connection_options`` name; what was written."""
    target = DynamoDBTarget.parse(connection_options)
    df = columns_as_strings(df, TEXT_TYPES)
    check_types(df)
    shape = TableShape.describe(target)
    tasks = target.parallel_tasks or min(
        df.rdd.getNumPartitions(), spark.sparkContext.defaultParallelism
    )
    task = TaskWrite(
        target.table,
        shape.keys,
        shape.units_per_task(target, tasks),
        target.retry,
        target.access.client_spec(),
        df.schema,
    )
    counts = WriteCounts()
    for task_counts in df.rdd.mapPartitions(task).collect():
        counts.add(task_counts)
    report(target.table, counts)
    return counts


def check_types(df: Any) -> None:
    """A column of a type with no DynamoDB attribute is one line here, on the driver,
    before any task runs."""
    row_converter(df.schema)


@dataclass(frozen=True)
class TaskWrite:
    """One task's write (pickled into the task): its rows into the table; it answers
    its :class:`~.dynamodb_writes.WriteCounts`."""

    table: str
    keys: dict
    units_per_s: float
    retry: int
    client_spec: ClientSpec
    schema: Any

    def __call__(self, rows: Iterator[Any]) -> Iterator[WriteCounts]:
        writer = TableWriter(
            self.client_spec.client(), self.table, self.keys, self.units_per_s, self.retry
        )
        writer.put_all(map(row_converter(self.schema), rows))
        writer.flush()
        yield writer.counts


def report(table: str, counts: WriteCounts) -> None:
    """The write's log lines: what was written, and the rows that could not be."""
    log.info(
        "wrote %d items to DynamoDB table %s in %d requests (%d unprocessed items sent "
        "again; %d rows replaced by a later row of the same key in one request; %d "
        "requests refused whole, sent again an item a request)",
        counts.written,
        table,
        counts.requests,
        counts.resent,
        counts.replaced,
        counts.refused_requests,
    )
    if counts.skipped:
        log.error(
            "DynamoDB table %s: %d rows not written (%s); first: %s",
            table,
            sum(counts.skipped.values()),
            ", ".join(f"{reason}: {n}" for reason, n in sorted(counts.skipped.items())),
            "; ".join(counts.skipped_rows),
        )
