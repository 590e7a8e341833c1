"""Spark's own cost of a Python streaming source: the floor of ``bench_structured``.

``spark.readStream.format("bench-floor")`` is a trivial Python streaming data source with
the Kinesis source's columns: its first offset is ``{"n": 0}``, its latest ``{"n": N}``
(the ``records`` option), and one micro-batch of ``tasks`` tasks yields the N records from
memory (one Arrow batch of 10,000 rows built once per task, yielded again and again: no
Kinesis, no decoding, no end store). A query of it pays what any Python streaming source
pays: the source runner process (a new Python process per query, PySpark's imports), the
read function's planner, the offset and commit logs, task launch, Arrow batches to the
JVM and the sink. So what it takes is Spark's own share of a query; the source's time
above it is ours.

This module imports only PySpark and pyarrow, never ``kinesis_dstream``: the floor's
source runner must not pay the library's imports (``bench_structured`` checks that its
columns are the source's).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadLimit

PAGE = 10_000
#: The Kinesis source's columns (``kinesis_dstream.sql.schema.COLUMNS``), as DDL and Arrow.
COLUMNS = (
    ("data", "binary", pa.binary()),
    ("partitionKey", "string", pa.string()),
    ("stream", "string", pa.string()),
    ("shardId", "string", pa.string()),
    ("sequenceNumber", "string", pa.string()),
    ("subSequenceNumber", "bigint", pa.int64()),
    ("explicitHashKey", "string", pa.string()),
    ("approximateArrivalTimestamp", "timestamp", pa.timestamp("us", tz="UTC")),
)
ARROW_SCHEMA = pa.schema([pa.field(name, arrow, True) for name, _, arrow in COLUMNS])


class FloorSource(DataSource):
    """Options: ``records`` (N), ``tasks`` (the micro-batch's tasks, N shared evenly)."""

    @classmethod
    def name(cls) -> str:
        return "bench-floor"

    def schema(self) -> str:
        return ", ".join(f"{name} {ddl}" for name, ddl, _ in COLUMNS)

    def streamReader(self, schema: Any) -> DataSourceStreamReader:
        return FloorReader(int(self.options["records"]), int(self.options["tasks"]))


class FloorReader(DataSourceStreamReader):
    def __init__(self, records: int, tasks: int) -> None:
        self.records = records
        self.tasks = tasks

    def initialOffset(self) -> dict:
        return {"n": 0}

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        return {"n": self.records}  # every record at once, as the source's one batch

    def getDefaultReadLimit(self) -> ReadLimit:
        return ReadAllAvailable()

    def partitions(self, start: dict, end: dict) -> list:
        n = end["n"] - start["n"]
        bounds = [n * i // self.tasks for i in range(self.tasks + 1)]
        return [InputPartition(b - a) for a, b in zip(bounds, bounds[1:])]

    def read(self, partition: InputPartition) -> Iterator[Any]:
        left = partition.value
        batch = _page()
        while left > 0:
            yield batch if left >= PAGE else batch.slice(0, left)
            left -= PAGE

    def commit(self, end: dict) -> None:
        pass


def _page() -> Any:
    """10,000 records of ~100 B in the source's columns."""
    rows = range(PAGE)
    return pa.RecordBatch.from_arrays(
        [
            pa.array([b"x" * 99] * PAGE, pa.binary()),
            pa.array([f"k{i}" for i in rows], pa.string()),
            pa.array(["in-memory"] * PAGE, pa.string()),
            pa.array(["shardId-000000000000"] * PAGE, pa.string()),
            pa.array([str(10**20 + i) for i in rows], pa.string()),
            pa.array([0] * PAGE, pa.int64()),
            pa.array([None] * PAGE, pa.string()),
            pa.array([1_700_000_000_000_000] * PAGE, pa.int64()).view(ARROW_SCHEMA[-1].type),
        ],
        schema=ARROW_SCHEMA,
    )
