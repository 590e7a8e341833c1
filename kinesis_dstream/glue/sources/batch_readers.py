"""Batch reads of Glue's API: the lookups a streaming job enriches its batches from.

``create_dynamic_frame.from_options`` / ``create_data_frame.from_options`` with
``connection_type`` ``s3`` (or Glue's Spark SQL spellings ``parquet`` and ``orc``) and
``dynamodb``; ``from_catalog`` on a catalog table over S3 files or over a DynamoDB table
(:mod:`~kinesis_dstream.glue.catalog.batch_tables`). A Kinesis table or
``connection_type="kinesis"`` is a stream (:mod:`.readers`). What this layer does not
read (JDBC, Kafka, ...) is refused in one line naming it, at the call.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping
from typing import Any, Optional

from ..catalog.batch_tables import DYNAMODB, BatchTable, batch_table
from ..catalog.tables import TableName
from ..errors import not_provided
from ..sinks.file_target import warn_ignored
from .batch_frames import dynamodb_frame, s3_frame
from .dynamodb_options import parse_dynamodb_options
from .s3_options import parse_s3_read

log = logging.getLogger(__name__)

#: Connection types read as a batch; ``parquet`` and ``orc`` are Glue's Spark SQL
#: spellings of S3 files of that format (aws-glue-libs' ``Spark_SQL_Formats``).
BATCH_CONNECTIONS = ("s3", "dynamodb", "parquet", "orc")


def is_batch_connection(connection_type: Any) -> bool:
    return str(connection_type).strip().lower() in BATCH_CONNECTIONS


def read_batch_options(
    spark: Any,
    connection_type: Any,
    connection_options: Mapping[str, Any],
    format: Any,
    format_options: Optional[Mapping[str, Any]],
    where: str,
) -> Any:
    """The DataFrame of a batch connection (see the module)."""
    kind = str(connection_type).strip().lower()
    if kind not in BATCH_CONNECTIONS:
        raise not_provided(
            f"{where}(connection_type={connection_type!r})",
            "this layer reads connection_type 'kinesis' (a stream), 's3' and 'dynamodb'",
        )
    if kind == DYNAMODB:
        if format or format_options:
            warn_ignored(where, ["format", "format_options"], "a DynamoDB table has no format")
        return dynamodb_frame(spark, parse_dynamodb_options(connection_options, where))
    fmt = format if kind == "s3" else kind
    return s3_frame(spark, parse_s3_read(connection_options, fmt, format_options or {}))


def read_batch_table(
    spark: Any,
    table: Mapping[str, Any],
    name: TableName,
    additional_options: Mapping[str, Any],
    push_down_predicate: str = "",
) -> Any:
    """The DataFrame of a catalog table over S3 files or a DynamoDB table."""
    source: BatchTable = batch_table(table, name, additional_options)
    where = f"from_catalog({name})"
    if source.connection_type == DYNAMODB:
        if push_down_predicate:
            warn_ignored(where, ["push_down_predicate"], "Glue's DynamoDB reader has no filters")
        return dynamodb_frame(spark, parse_dynamodb_options(source.connection_options, where))
    partition_predicate = _pop(source.connection_options, "catalogPartitionPredicate")
    read = parse_s3_read(source.connection_options, source.format, source.format_options)
    read = dataclasses.replace(read, partition_keys=tuple(k for k, _ in source.partition_keys))
    df = s3_frame(spark, read)
    if not df.columns:
        return df
    for key, type_name in source.partition_keys:
        if type_name.lower() not in ("string", "varchar", "char"):
            df = df.withColumn(key, df[key].cast(type_name))
    for predicate in (push_down_predicate, partition_predicate):
        if predicate:
            if not source.partition_keys:
                warn_ignored(where, [predicate], "the table has no partitions to filter")
                continue
            # the partitions' rows that the predicate keeps, as Glue's partition pruning
            df = df.where(predicate)
    return df


def _pop(options: dict, name: str) -> str:
    for key in list(options):
        if str(key).lower() == name.lower():
            return str(options.pop(key) or "")
    return ""
