"""The Python data source behind the Glue layer's batch reads:
``format("kinesis-dstream-glue-batch")``, registered by the GlueContext.

Its options carry a planned read (:class:`~.s3_options.S3Read` with its file groups, or
:class:`~.dynamodb_options.DynamoDBRead`), as JSON: no credentials, no code. Each Spark
partition is one task's share: a group of files, or one segment of a DynamoDB parallel
Scan. Tasks yield Arrow batches of the schema the driver gave (``.schema(...)``), read a
block or a page at a time, so no process holds the whole read.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

SOURCE_NAME = "kinesis-dstream-glue-batch"
S3_KIND = "s3"
DYNAMODB_KIND = "dynamodb"


class BatchReader(DataSourceReader):
    """One planned read (see the module); options as Spark hands them, lower-cased."""

    def __init__(self, options: Any, schema: Any) -> None:
        self.kind = options["kind"]
        self.plan = options["plan"]
        self.tasks = json.loads(options.get("tasks", "[]"))
        self.schema = schema

    def partitions(self) -> list:
        if self.kind == DYNAMODB_KIND:
            from .dynamodb_options import DynamoDBRead

            return [InputPartition(i) for i in range(DynamoDBRead.from_json(self.plan).segments)]
        return [InputPartition(i) for i in range(len(self.tasks))]

    def read(self, partition: InputPartition) -> Iterator[Any]:
        if self.kind == DYNAMODB_KIND:
            from .dynamodb_options import DynamoDBRead
            from .dynamodb_scan import read_segment

            yield from read_segment(DynamoDBRead.from_json(self.plan), self.schema, partition.value)
            return
        from .file_readers import read_files
        from .s3_options import S3Read

        group = self.tasks[partition.value]
        paths = [path for path, _ in group]
        modified = [modified_ms for _, modified_ms in group]
        yield from read_files(S3Read.from_json(self.plan), self.schema, paths, modified)


class GlueBatchSource(DataSource):
    """The data source of :class:`BatchReader`."""

    @classmethod
    def name(cls) -> str:
        return SOURCE_NAME

    def reader(self, schema: Any) -> BatchReader:
        return BatchReader(self.options, schema)
