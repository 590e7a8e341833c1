"""One segment of a DynamoDB parallel Scan, in a Spark task: items read at a pace, typed
as Glue types them, as Arrow batches.

A table read with ``dynamodb.splits`` = N is N tasks, each scanning segment i of N
(``Segment``/``TotalSegments``) page by page. Each task spends at most its share of the
read rate (``dynamodb.throughput.read.percent`` of the table's read capacity, divided by
the segments): a :class:`~kinesis_dstream.token_bucket.TokenBucket` of that rate waits
between pages for the capacity units the last page consumed (DynamoDB's
``ConsumedCapacity``). Every call is retried with
:data:`SCAN_BACKOFF` (throttling, unavailability); past it the task fails, naming the
table and segment.

Items become rows through :mod:`~kinesis_dstream.glue.frames.dynamodb_types` (the
``plain`` shape, Glue's DynamoDB reader) or as DynamoDB JSON (``{"Item": {"id": {"S":
...}}}``, the shape of Glue's export connector without ``unnestDDBJson``).
"""

from __future__ import annotations

import base64
import logging
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any, Callable, Optional

from pyspark.sql.types import StructType

from ...backoff import Backoff, call_with_retry
from ...sql.parsing import payload_types
from ...sql.parsing.payload import arrow_schema
from ...token_bucket import TokenBucket
from ..frames import dynamodb_types
from .dynamodb_options import DynamoDBRead
from .record_batches import records_batch

log = logging.getLogger(__name__)

#: Retries of each Scan page (throttling, unavailability): Glue's writer retries 10 times.
SCAN_BACKOFF = Backoff(initial_delay_s=0.1, max_delay_s=5.0, max_attempts=10, max_elapsed_s=120.0)
#: Items a batch.
BATCH_ITEMS = 10_000
#: Read units of one eventually consistent read of 4 KB, when DynamoDB does not say.
UNITS_PER_4KB = 0.5
#: Why an item's attribute was not read: the read's columns have none for it.
NOT_IN_COLUMNS = "attributes with no column (not read)"
#: The attributes not in the columns named in the warning (the others only counted).
NAMED_ATTRIBUTES = 5


def consumed_units(page: dict) -> float:
    """The capacity units a Scan page consumed (estimated from its items' size when the
    answer does not say)."""
    consumed = page.get("ConsumedCapacity") or {}
    if consumed.get("CapacityUnits") is not None:
        return float(consumed["CapacityUnits"])
    size = sum(len(repr(item)) for item in page.get("Items", []))
    return max(UNITS_PER_4KB, UNITS_PER_4KB * size / 4096)


def scan_segment(
    read: DynamoDBRead,
    segment: int,
    sleep: Callable[[float], None] = time.sleep,
    pace: Optional[TokenBucket] = None,
) -> Iterator[list]:
    """The items of ``segment`` (wire form), a page at a time, at the segment's pace
    (``pace``: the segment's share of the read capacity, units a second)."""
    client = read.client_spec().client()
    pace = pace or TokenBucket(read.segment_units_per_s)
    kwargs: dict = {
        "TableName": read.table,
        "Segment": segment,
        "TotalSegments": read.segments,
        "ReturnConsumedCapacity": "TOTAL",
    }
    where = f"Scan of DynamoDB table {read.table} (segment {segment} of {read.segments})"
    while True:
        page = call_with_retry(
            lambda: client.scan(**kwargs), SCAN_BACKOFF, operation=where, client=client
        )
        yield page.get("Items", [])
        if "LastEvaluatedKey" not in page:
            return
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        wait = pace.take(consumed_units(page))
        if wait > 0:
            sleep(wait)


def ddb_json(attribute: dict) -> dict:
    """An attribute as DynamoDB JSON (the export's form): numbers as text, binary as
    base64, sets as lists."""
    ((kind, value),) = attribute.items()
    if kind == "B":
        return {kind: base64.b64encode(bytes(value)).decode("ascii")}
    if kind == "BS":
        return {kind: [base64.b64encode(bytes(v)).decode("ascii") for v in value]}
    if kind == "L":
        return {kind: [ddb_json(v) for v in value]}
    if kind == "M":
        return {kind: {k: ddb_json(v) for k, v in value.items()}}
    if kind in ("SS", "NS"):
        return {kind: [str(v) for v in value]}
    return {kind: value}


def shaped(read: DynamoDBRead, item: dict) -> dict:
    """One scanned item as the frame's record: plain values, or ``{"Item": ...}``."""
    if read.ddb_json:
        return {"Item": {k: ddb_json(v) for k, v in item.items()}}
    return dynamodb_types.plain_item(item)


def record_struct(read: DynamoDBRead, record: dict) -> StructType:
    if read.ddb_json:
        return payload_types.infer_json_type(record)  # type: ignore[return-value]
    return dynamodb_types.item_struct(record)


def infer_segment(read: DynamoDBRead, segment: int) -> dict:
    """The columns of ``segment``'s items (Spark's schema JSON) and their count."""
    merged = StructType([])
    items = 0
    for page in scan_segment(read, segment):
        for item in page:
            merged = dynamodb_types.merge_items(merged, record_struct(read, shaped(read, item)))
            items += 1
    return {"struct": merged.json(), "items": items}


def read_segment(read: DynamoDBRead, schema: StructType, segment: int) -> Iterator[Any]:
    """``segment``'s items as Arrow batches of ``schema``. What an item changed since the
    schema was taken loses is counted in one warning line at the end: a value that no
    longer fits its column (null), an attribute the schema does not have (not read;
    the first named), a nested value (:func:`~.dynamodb_types.conformer`'s)."""
    target = arrow_schema(schema)
    counts: Counter = Counter()
    if read.ddb_json:
        converters = [payload_types.converter(f.dataType) for f in schema.fields]
    else:
        converters = [
            dynamodb_types.conformer(f.dataType, _counter(counts, f.name)) for f in schema.fields
        ]
    columns = _attribute_columns(read, schema)
    unknown: set = set()
    batch: list = []
    for page in scan_segment(read, segment):
        for item in page:
            extra = [name for name in item if name not in columns]
            if extra:
                counts[NOT_IN_COLUMNS] += len(extra)
                unknown.update(extra[: max(0, NAMED_ATTRIBUTES - len(unknown))])
            batch.append(shaped(read, item))
        if len(batch) >= BATCH_ITEMS:
            yield records_batch(batch, schema, converters, target, counts)
            batch = []
    if batch:
        yield records_batch(batch, schema, converters, target, counts)
    if counts:
        log.warning(
            "DynamoDB table %s, segment %d: %s (items changed since the read's columns were "
            "taken)%s",
            read.table,
            segment,
            dict(counts),
            f"; attributes not in the columns: {', '.join(sorted(unknown))}" if unknown else "",
        )


def _attribute_columns(read: DynamoDBRead, schema: StructType) -> frozenset:
    """The item attributes ``schema`` has columns for (the export's shape: the ``Item``
    struct's fields)."""
    if not read.ddb_json:
        return frozenset(schema.names)
    if "Item" not in schema.names:
        return frozenset()
    item = schema["Item"].dataType
    return frozenset(item.names) if isinstance(item, StructType) else frozenset()


def _counter(counts: Counter, column: str) -> Callable[[str], None]:
    """What a column's conformer tells of a nested value it dropped, counted."""

    def dropped(reason: str) -> None:
        counts[f"{column}: {reason}"] += 1

    return dropped
