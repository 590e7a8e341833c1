"""A batch read's DataFrame, planned on the driver: S3 (or local) files, or a DynamoDB
table.

Files: listed here (:mod:`.s3_listing`). Parquet and ORC, where Spark has a filesystem
for the path (local paths; ``s3a://`` with hadoop-aws; EMR, Glue), are read by Spark's
own reader, as Glue reads them. Otherwise the executors read them in Python
(:mod:`.file_readers`) through the Glue layer's data source (:mod:`.batch_source`): the
columns of Parquet, ORC and Avro from the first file's footer or header (Parquet's
``mergeSchema``: every file's), those of CSV and JSON from the records, in one Spark job
over the files (:func:`~.file_readers.infer_files`); the frame then reads them when an
action runs, and every action reads them again (as Glue's DynamicFrame does, unless the
script caches it).

DynamoDB: the table described (its read capacity paces the Scan), its columns taken from
a parallel Scan in one Spark job, the frame a second parallel Scan when an action runs.

Neither starts anything but Spark jobs: a lookup read again each batch costs a listing
(or a DescribeTable), one small job and the read itself. Over files the listing shows
unchanged (every path, size and version: S3's ETag) the columns are those of the last
read, without the job: the same files have the same columns.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import Counter
from collections.abc import Sequence
from typing import Any, Callable

from pyspark.sql.types import StringType, StructField, StructType, TimestampType

from ...spark_internals import hadoop_can_write
from ...sql.parsing import payload_types
from ..dynamodb_connection import describe_table
from ..errors import GlueError
from ..streaming.foreach_batch import first_line
from .batch_source import DYNAMODB_KIND, S3_KIND, SOURCE_NAME
from .dynamodb_options import DynamoDBOptions, planned_read
from .dynamodb_scan import infer_segment
from .file_readers import file_schema, infer_files, merge_summaries
from .s3_listing import file_groups, list_files
from .s3_options import S3Read

log = logging.getLogger(__name__)

SPARK_FORMATS = ("parquet", "orc")
#: The columns of the last reads, by read and listing (every file's path, size and
#: version): a lookup read again over the same files takes its columns from here instead
#: of from its records again; a file changed, added or gone is a new listing.
SCHEMAS_KEPT = 64
_SCHEMAS: dict = {}
_SCHEMAS_LOCK = threading.Lock()


def empty_frame(spark: Any) -> Any:
    return spark.createDataFrame([], StructType([]))


def in_tasks(spark: Any, fn: Callable[[Any], Any], inputs: list, what: str) -> list:
    """``[fn(x) for x in inputs]``, one Spark task an input; a failure is one line."""
    sc = spark.sparkContext
    try:
        return sc.parallelize(inputs, max(1, len(inputs))).map(fn).collect()
    except Exception as exc:  # a Spark job's error: the task's own error inside it
        raise GlueError(f"{what}: {first_line(exc)}") from None


def s3_frame(spark: Any, read: S3Read) -> Any:
    """The DataFrame of ``read`` (see the module)."""
    files = list_files(read)
    if not files:
        log.warning("no files to read under %s (an empty frame)", list(read.paths))
        return empty_frame(spark)
    sc = spark.sparkContext
    if read.fmt in SPARK_FORMATS and hadoop_can_write(sc, files[0].path):
        return _spark_read(spark, read, [f.path for f in files])
    groups = [[[f.path, f.modified_ms] for f in group] for group in file_groups(files, read)]
    key = (read, tuple(files))
    schema = _SCHEMAS.get(key)
    if schema is None:
        schema = _files_schema(spark, read, files, groups)
        _remember(key, schema)
    return batch_read(spark, _with_file_columns(schema, read), S3_KIND, read.to_json(), groups)


def _remember(key: tuple, schema: StructType) -> None:
    with _SCHEMAS_LOCK:
        _SCHEMAS[key] = schema
        while len(_SCHEMAS) > SCHEMAS_KEPT:
            _SCHEMAS.pop(next(iter(_SCHEMAS)))


def _files_schema(spark: Any, read: S3Read, files: list, groups: list) -> StructType:
    """The columns of ``files``: from the records (CSV, JSON: one Spark job) or the
    footers and headers."""
    where = f"reading {read.fmt} from {', '.join(read.paths)}"
    if read.fmt in ("csv", "json"):
        summaries = in_tasks(
            spark, lambda group: infer_files(read, [p for p, _ in group]), groups, where
        )
        _log_counts(where, [s["counts"] for s in summaries])
        schema = merge_summaries(read, summaries)
    elif read.fmt == "parquet" and read.merge_schema:
        parts = in_tasks(spark, lambda f: file_schema(read, f.path).json(), files, where)
        schema = StructType([])
        for part in parts:
            schema = payload_types.merge_structs(schema, StructType.fromJson(json.loads(part)))
    else:
        try:
            schema = file_schema(read, files[0].path)
        except (OSError, ValueError) as exc:
            raise GlueError(f"{where}: {files[0].path}: {first_line(exc)}") from None
    return schema


def batch_read(spark: Any, schema: StructType, kind: str, plan: str, tasks: Sequence = ()) -> Any:
    """The frame the Glue layer's data source reads with ``schema`` (no columns: an
    empty frame, as Glue's of no records)."""
    if not schema.fields:
        return empty_frame(spark)
    reader = spark.read.format(SOURCE_NAME).schema(schema).option("kind", kind)
    return reader.option("plan", plan).option("tasks", json.dumps(list(tasks))).load()


def _with_file_columns(schema: StructType, read: S3Read) -> StructType:
    """``schema`` with the columns a file gives every record of it: partition keys
    (strings, cast by the caller), the file's name and time."""
    added = {read.filename_column, read.timestamp_column, *read.partition_keys}
    fields = [f for f in schema.fields if f.name not in added]
    fields += [StructField(key, StringType(), True) for key in read.partition_keys]
    if read.filename_column:
        fields.append(StructField(read.filename_column, StringType(), True))
    if read.timestamp_column:
        fields.append(StructField(read.timestamp_column, TimestampType(), True))
    return StructType(fields)


def _spark_read(spark: Any, read: S3Read, paths: list) -> Any:
    from pyspark.sql import functions as F

    reader = spark.read.format(read.fmt)
    if read.merge_schema:
        reader = reader.option("mergeSchema", "true")
    if read.partition_keys:
        reader = reader.option("basePath", read.paths[0])
    df = reader.load(paths)
    if read.filename_column:
        df = df.withColumn(read.filename_column, F.col("_metadata.file_path"))
    if read.timestamp_column:
        df = df.withColumn(read.timestamp_column, F.col("_metadata.file_modification_time"))
    return df


def _log_counts(where: str, counts: list) -> None:
    total: Counter = Counter()
    for part in counts:
        total.update(part)
    if total:
        log.warning("%s: %s", where, dict(total))


def dynamodb_frame(spark: Any, options: DynamoDBOptions) -> Any:
    """The DataFrame of a DynamoDB table read (see the module): described with the
    read's own credentials and endpoint, as its Scans are made."""
    where = f"reading DynamoDB table {options.access.table}"
    description = describe_table(options.access, where)
    read = planned_read(options, description, spark.sparkContext.defaultParallelism)
    parts = in_tasks(
        spark, lambda segment: infer_segment(read, segment), list(range(read.segments)), where
    )
    schema = StructType([])
    for part in parts:
        schema = payload_types.merge_structs(
            schema, StructType.fromJson(json.loads(part["struct"]))
        )
    log.info("%s: %d items in %d segments", where, sum(p["items"] for p in parts), read.segments)
    return batch_read(spark, schema, DYNAMODB_KIND, read.to_json())
