"""``spark.read.format("kinesis")``: the batch reader of the data source.

Spark plans the read on the driver (:meth:`KinesisBatchReader.partitions`, in a Python
worker: metadata only, ListShards and DescribeStreamSummary) and runs one task per shard
slice on the executors (:meth:`KinesisBatchReader.read`), or per ``shardsPerTask`` slices
read concurrently (:mod:`.group`), so it works wherever the Python data source does, Spark
Connect included. The reader holds only picklable settings.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from typing import Any, Optional

from pyspark.sql.datasource import DataSourceReader, InputPartition

from ..config.options import SourceOptions
from ..executor.group import AUTO_BACKLOG_RANGES_PER_TASK, AUTO_MIN_TASKS
from ..parsing.payload import PayloadParser
from ..reading import read_settings, shaped
from ..schema import OutputColumns
from .bounds import BatchBounds
from .group import SliceGroup, group_slices, read_group
from .plan import plan_read, planning_moment
from .read import read_slice

log = logging.getLogger(__name__)


class KinesisBatchReader(DataSourceReader):
    """A range of records of one or more streams, read once (see :mod:`.bounds`)."""

    def __init__(
        self,
        options: SourceOptions,
        given: Mapping[str, Any],
        columns: OutputColumns,
        parser: Optional[PayloadParser] = None,
    ) -> None:
        self.options = options
        self.bounds = BatchBounds.parse(given, options.connection.stream_names)
        self.columns = columns
        self.parser = parser
        self.settings = read_settings(options)
        if options.fan_out is not None:
            log.warning(
                "batch reads poll with GetRecords: the enhanced fan-out options are ignored "
                "(they change how records arrive, not which)"
            )

    def partitions(self) -> list:
        slices = plan_read(self.options, self.bounds, planning_moment())
        per_task = self.options.shards_per_task
        if per_task is None:
            # A batch read is a backlog: grouped as the source groups ranges of shards
            # behind (two a task, at least two tasks; see sql/executor/group.py).
            many = len(slices) > AUTO_MIN_TASKS
            per_task = AUTO_BACKLOG_RANGES_PER_TASK if many else 1
        return group_slices(slices, per_task)

    def read(self, partition: InputPartition) -> Iterator[Any]:
        what = partition.describe()  # type: ignore[attr-defined]
        if isinstance(partition, SliceGroup):
            batches = read_group(partition, lambda part: read_slice(part, self.settings))
        else:
            batches = read_slice(partition, self.settings)  # type: ignore[arg-type]
        yield from shaped(batches, self.columns, self.parser, what)
