"""The source's columns, as a Spark schema and as the Arrow schema ``read()`` yields."""

from __future__ import annotations

from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
from pyspark.sql.types import (
    BinaryType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

COLUMNS = (
    ("data", BinaryType(), pa.binary()),
    ("partitionKey", StringType(), pa.string()),
    ("stream", StringType(), pa.string()),
    ("shardId", StringType(), pa.string()),
    ("sequenceNumber", StringType(), pa.string()),
    ("subSequenceNumber", LongType(), pa.int64()),
    ("explicitHashKey", StringType(), pa.string()),
    ("approximateArrivalTimestamp", TimestampType(), pa.timestamp("us", tz="UTC")),
)
SCHEMA = StructType([StructField(name, spark_type, True) for name, spark_type, _ in COLUMNS])
ARROW_SCHEMA = pa.schema([pa.field(name, arrow_type, True) for name, _, arrow_type in COLUMNS])


def records_to_arrow(records: list, stream_name: str, shard_id: str) -> Any:
    """``KinesisRecord``s of one shard -> one ``pyarrow.RecordBatch`` in :data:`ARROW_SCHEMA`."""
    n = len(records)
    return pa.RecordBatch.from_arrays(
        [
            pa.array([r.data for r in records], pa.binary()),
            pa.array([r.partition_key for r in records], pa.string()),
            pa.array([stream_name] * n, pa.string()),
            pa.array([shard_id] * n, pa.string()),
            pa.array([r.sequence_number for r in records], pa.string()),
            pa.array([r.sub_sequence_number for r in records], pa.int64()),
            pa.array([r.explicit_hash_key for r in records], pa.string()),
            pa.array(
                [r.approximate_arrival_timestamp for r in records], pa.timestamp("us", tz="UTC")
            ),
        ],
        schema=ARROW_SCHEMA,
    )
