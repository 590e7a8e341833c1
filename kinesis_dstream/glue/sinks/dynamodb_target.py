"""What a ``write_dynamic_frame.from_options(connection_type="dynamodb")`` writes to: its
connection options as AWS documents them (the "DynamoDB connections" page) and the
table as DynamoDB describes it.

- ``dynamodb.output.tableName``: required, the table written.
- ``dynamodb.throughput.write.percent``: the share of the table's write capacity used
  (0.5 by default; AWS documents 0.1 to 1.5, another number is used and named in a
  warning); an on-demand table counts as 40,000 WCU, as Glue counts it.
- ``dynamodb.output.numParallelTasks``: how many tasks share that capacity; by default
  the frame's partitions, at most the cores Spark has (Glue's ``min(numPartitions,
  numSlots)``).
- ``dynamodb.output.retry``: retries of a throttled ``BatchWriteItem`` (10 by default).
- Those a write shares with a read (``dynamodb.sts.roleArn``,
  ``dynamodb.sts.roleSessionName``: session ``glue-dynamodb-write-sts-session`` by
  default; ``dynamodb.region``, ``dynamodb.endpoint``), the percent's rule, the capacity
  and DescribeTable are :mod:`~kinesis_dstream.glue.dynamodb_connection`'s.

Any other option (``dynamodb.sts.region``, ``dynamodb.output.batchSize``...) is named once
in a warning and has no effect: Glue takes any option.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Optional

from ..dynamodb_connection import (
    DEFAULT_PERCENT,
    TableAccess,
    describe_table,
    key_types,
    table_capacity,
    text_option,
    throughput_percent,
    units_per_task,
    warn_not_honoured,
)
from ..errors import GlueError

log = logging.getLogger(__name__)

TABLE = "dynamodb.output.tableName"
PERCENT = "dynamodb.throughput.write.percent"
TASKS = "dynamodb.output.numParallelTasks"
RETRY = "dynamodb.output.retry"
HONOURED = (TABLE, PERCENT, TASKS, RETRY)

DEFAULT_RETRY = 10
DEFAULT_ROLE_SESSION = "glue-dynamodb-write-sts-session"
WHERE = "dynamodb connection_options"


@dataclass(frozen=True)
class DynamoDBTarget:
    """The checked connection options of a DynamoDB write."""

    access: TableAccess
    percent: float = DEFAULT_PERCENT
    parallel_tasks: Optional[int] = None
    retry: int = DEFAULT_RETRY

    @classmethod
    def parse(cls, options: Mapping[str, Any]) -> DynamoDBTarget:
        warn_not_honoured(options, WHERE, HONOURED, "Glue's writer ignores them")
        table = text_option(options, TABLE)
        if not table:
            raise GlueError(
                f"write_dynamic_frame to dynamodb: connection_options {TABLE!r} is required "
                f"(the table to write); options given: {sorted(options)}"
            )
        tasks = _number(options, TASKS, None, int)
        if tasks is not None and tasks < 1:
            raise GlueError(f"{WHERE} {TASKS}={tasks}: give an integer >= 1")
        retry = _number(options, RETRY, DEFAULT_RETRY, int)
        if retry < 0:
            raise GlueError(f"{WHERE} {RETRY}={retry}: give an integer >= 0")
        return cls(
            access=TableAccess.parse(options, table, DEFAULT_ROLE_SESSION),
            percent=throughput_percent(options, PERCENT, WHERE),
            parallel_tasks=tasks,
            retry=retry,
        )

    @property
    def table(self) -> str:
        return self.access.table


def _number(options: Mapping[str, Any], name: str, default: Any, kind: type) -> Any:
    text = text_option(options, name)
    if text is None:
        return default
    try:
        number = float(text)
        if kind is int and not number.is_integer():
            raise ValueError(text)
        return kind(number)
    except (ValueError, OverflowError):
        what = "an integer" if kind is int else "a number"
        raise GlueError(f"{WHERE} {name}={text!r}: give {what}") from None


@dataclass(frozen=True)
class TableShape:
    """What the writes need of the table: its key attributes (name -> ``S``, ``N`` or
    ``B``, the partition key first) and its write capacity (Glue's 40,000 for an
    on-demand table)."""

    keys: dict
    write_capacity: float

    @classmethod
    def describe(cls, target: DynamoDBTarget) -> TableShape:
        """``DescribeTable``, once, on the driver, with the writes' credentials."""
        table = describe_table(target.access, "write_dynamic_frame to dynamodb")
        return cls(key_types(table), table_capacity(table, "Write"))

    def units_per_task(self, target: DynamoDBTarget, tasks: int) -> float:
        """Glue's ``permittedWcuPerTask``: the table's capacity times the percent, shared
        by ``tasks``, at least 1."""
        return units_per_task(self.write_capacity, target.percent, tasks)
