"""Records that do not parse, in a Glue frame: counted and named, in a column only on request.

The source keeps a record that does not parse, raw, in ``_corrupt_record`` (Spark's
PERMISSIVE mode) and each read task names the first ones in its log (stream, shard,
sequence number, why). Glue's frames carry the data's columns only, so the Glue layer
takes that column out of the frame a script sees, after counting it: the count is an
observed metric of each micro-batch (:mod:`~kinesis_dstream.glue.streaming.batch_metrics`),
logged whichever way the
script runs the stream (forEachBatch or ``writeStream``). A script or table that asks
for the records, with Spark's option ``columnNameOfCorruptRecord``, gets the column under
that name instead.
"""

from __future__ import annotations

import logging
from collections.abc import MutableMapping
from typing import Any, Optional

from ...sql.parsing.payload import CORRUPT_RECORD_COLUMN
from ..streaming.batch_metrics import observed

log = logging.getLogger(__name__)

#: Spark's option naming the column that keeps the records that did not parse.
CORRUPT_COLUMN_OPTION = "columnNameOfCorruptRecord"
METRICS_PREFIX = "kinesis_dstream_glue_corrupt_records"
#: The count's label: the records were dropped, or kept in the column named after it.
DROPPED = "dropped"
KEPT = "kept in "


def pop_corrupt_column(options: MutableMapping[str, Any]) -> Optional[str]:
    """Take ``columnNameOfCorruptRecord`` (any case) out of ``options``: the Glue layer's,
    the source does not take it. None when not given or empty."""
    for key in [k for k in options if k.lower() == CORRUPT_COLUMN_OPTION.lower()]:
        value = str(options.pop(key) or "").strip()
        return value or None
    return None


def glue_columns(df: Any, corrupt_column: Optional[str]) -> Any:
    """The source frame ``df`` with Glue's columns: its ``_corrupt_record`` counted per
    micro-batch, then dropped, or renamed to ``corrupt_column`` when one is asked for."""
    if CORRUPT_RECORD_COLUMN not in df.columns:
        return df
    from pyspark.sql import functions as F

    label = f"{KEPT}{corrupt_column}" if corrupt_column else DROPPED
    count = F.count_if(F.col(CORRUPT_RECORD_COLUMN).isNotNull()).alias(label)
    df = observed(df, METRICS_PREFIX, _report, count)
    if corrupt_column:
        return df.withColumnRenamed(CORRUPT_RECORD_COLUMN, corrupt_column)
    return df.drop(CORRUPT_RECORD_COLUMN)


def _report(batch_id: int, counts: dict) -> None:
    for label, n in counts.items():
        if n:
            where = (
                f"are kept in column {label[len(KEPT) :]!r}"
                if label.startswith(KEPT)
                else "are not in the frame (Glue's frames carry the data's columns; set "
                f"{CORRUPT_COLUMN_OPTION} to keep them in a column)"
            )
            log.warning(
                "batch %d: %d records did not parse and %s; the source's log names each "
                "(stream/shard#sequence number, why)",
                batch_id,
                int(n),
                where,
            )
