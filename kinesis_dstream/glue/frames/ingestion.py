"""``GlueContext.add_ingestion_time_columns``: Glue's ``ingest_year`` ... ``ingest_minute``.

The values are the time of the call in UTC (a batch function calls it once per batch),
as zero-padded strings (``2026``, ``04``, ``09``): the partition directories Glue writes,
``ingest_year=2026/ingest_month=04/...``.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Optional

from ..errors import GlueError

COLUMNS = ("ingest_year", "ingest_month", "ingest_day", "ingest_hour", "ingest_minute")
#: How many of :data:`COLUMNS` each granularity adds.
GRANULARITIES = {"day": 3, "hour": 4, "minute": 5}


def ingestion_values(time_granularity: str, now: Optional[dt.datetime] = None) -> list:
    """``[(column, value), ...]`` for ``time_granularity`` (day, hour or minute)."""
    count = GRANULARITIES.get(str(time_granularity).strip().lower())
    if count is None:
        raise GlueError(
            f"add_ingestion_time_columns: time_granularity={time_granularity!r} is not one of "
            f"{', '.join(GRANULARITIES)}"
        )
    now = now or dt.datetime.now(dt.timezone.utc)
    values = (f"{now.year:04d}", *(f"{n:02d}" for n in (now.month, now.day, now.hour, now.minute)))
    return list(zip(COLUMNS[:count], values[:count]))


def add_ingestion_time_columns(df: Any, time_granularity: str) -> Any:
    """``df`` with the ingestion time columns appended (replacing columns of those names)."""
    from pyspark.sql import functions as F

    return df.withColumns(
        {name: F.lit(value) for name, value in ingestion_values(time_granularity)}
    )
