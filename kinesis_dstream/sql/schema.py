"""The source's columns, as a Spark schema and as the Arrow schema ``read()`` yields."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
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
            arrival_times(records),
        ],
        schema=ARROW_SCHEMA,
    )


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_MICROSECOND = timedelta(microseconds=1)
_UNSEEN = object()


def arrival_times(records: list) -> Any:
    """The records' arrival times as an Arrow ``timestamp("us", "UTC")`` array.

    pyarrow converts a list of aware datetimes at ~1 µs a value, most of a batch's cost;
    a page's records share few arrival times (Kinesis gives milliseconds), so each
    distinct one is converted once here and the column is built from integers. A naive
    datetime is taken as UTC, as pyarrow takes it.
    """
    micros: dict = {}
    column: list = []
    append = column.append
    for record in records:
        arrival = record.approximate_arrival_timestamp
        value = micros.get(arrival, _UNSEEN)
        if value is _UNSEEN:
            value = micros[arrival] = _micros(arrival)
        append(value)
    return pa.array(column, pa.int64()).view(pa.timestamp("us", tz="UTC"))


def _micros(arrival: Any) -> Any:
    if arrival is None:
        return None
    if arrival.tzinfo is None:
        arrival = arrival.replace(tzinfo=timezone.utc)
    return (arrival - _EPOCH) // _MICROSECOND


#: The awslabs connector's documented columns, in its order, then ours it lacks.
AWSLABS_ORDER = (
    ("data", "data"),
    ("streamName", "stream"),
    ("partitionKey", "partitionKey"),
    ("sequenceNumber", "sequenceNumber"),
    ("approximateArrivalTimestamp", "approximateArrivalTimestamp"),
    ("shardId", "shardId"),
    ("subSequenceNumber", "subSequenceNumber"),
    ("explicitHashKey", "explicitHashKey"),
)
#: Glue's addRecordTimestamp column: the record's arrival time in the stream.
SRC_TIMESTAMP = "__src_timestamp"
_TYPES = {name: (spark_type, arrow_type) for name, spark_type, arrow_type in COLUMNS}


@dataclass(frozen=True)
class OutputColumns:
    """Which columns a query gives: (output name, base column) pairs, in order.

    ``format("kinesis")`` gives :data:`COLUMNS` (Databricks' names and more);
    ``format("aws-kinesis")`` the awslabs connector's (``streamName``, its order);
    ``addRecordTimestamp`` appends Glue's ``__src_timestamp``.
    """

    pairs: tuple

    @classmethod
    def for_source(cls, flavour: str, add_record_timestamp: bool) -> OutputColumns:
        pairs: tuple
        if flavour == "aws-kinesis":
            pairs = AWSLABS_ORDER
        else:
            pairs = tuple((name, name) for name, _, _ in COLUMNS)
        if add_record_timestamp:
            pairs = (*pairs, (SRC_TIMESTAMP, "approximateArrivalTimestamp"))
        return cls(pairs)

    @property
    def spark_schema(self) -> StructType:
        return StructType([StructField(out, _TYPES[base][0], True) for out, base in self.pairs])

    @property
    def arrow_schema(self) -> Any:
        return pa.schema([pa.field(out, _TYPES[base][1], True) for out, base in self.pairs])

    @property
    def is_base(self) -> bool:
        return all(out == base for out, base in self.pairs) and len(self.pairs) == len(COLUMNS)

    def shape(self, batch: Any) -> Any:
        """A batch in :data:`ARROW_SCHEMA` -> the query's columns (no copy of the data)."""
        if self.is_base:
            return batch
        index = {name: i for i, (name, _, _) in enumerate(COLUMNS)}
        return pa.RecordBatch.from_arrays(
            [batch.column(index[base]) for _, base in self.pairs], schema=self.arrow_schema
        )
