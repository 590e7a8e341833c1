"""Records (dicts of Python values) as an Arrow batch of a frame's schema.

One rule for the readers that build rows in Python (JSON and Avro files, DynamoDB
items): each field's value goes through its column's converter; a value that does not
fit (a string where a number was inferred, after the source changed between a read's two
passes) is null and counted, never the end of the task.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]

#: What a converter raises for a value that does not fit its column.
MISFITS = (ValueError, TypeError, OverflowError, ArithmeticError)


def records_batch(
    records: list, schema: Any, converters: list, target: Any, counts: Counter
) -> Any:
    """``records`` as a batch of ``target`` (``schema``'s Arrow form); ``converters``
    one a field of ``schema``; misfits counted in ``counts`` by field."""
    arrays = []
    for i, (f, convert) in enumerate(zip(schema.fields, converters)):
        values = []
        for record in records:
            value = record.get(f.name)
            if value is not None:
                try:
                    value = convert(value)
                except MISFITS:
                    value = None
                    counts[f"values of {f.name} that did not fit its type"] += 1
            values.append(value)
        arrays.append(pa.array(values, type=target.field(i).type))
    return pa.RecordBatch.from_arrays(arrays, schema=target)
