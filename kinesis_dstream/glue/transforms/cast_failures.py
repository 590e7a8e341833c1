"""The values ApplyMapping could not cast: null, as Glue makes them, and counted.

Spark 4 casts with ANSI rules, so one malformed value (``'abc'`` to ``int``) would fail
the batch, and forEachBatch would run it again and fail the same way. ApplyMapping casts
with ``try_cast`` instead, and every value it turned into null is counted, never silent:

- on a batch frame (a forEachBatch batch, the Glue Studio shape), by one aggregation
  over the frame when ApplyMapping is applied, logged at once;
- on a streaming frame, by observed metrics logged for each micro-batch
  (:mod:`~kinesis_dstream.glue.streaming.batch_metrics`).

Only casts that can fail are counted (not to string, not to a wider number).
"""

from __future__ import annotations

import logging
from typing import Any

from ..streaming.batch_metrics import observed

log = logging.getLogger(__name__)

#: The name prefix of the observed metrics of a streaming frame's counts.
METRICS_PREFIX = "kinesis_dstream_glue_cast_failures"


#: Integral types, narrowest first: a cast to a wider one (or to double) always succeeds.
_INTEGRAL = ("tinyint", "smallint", "int", "bigint")


def may_fail(source_type: Any, target: str) -> bool:
    """Whether casting a field of ``source_type`` (a Spark DataType) to ``target`` (Spark's
    name) can meet a value it cannot convert."""
    source = source_type.simpleString()
    if target in ("string", source):
        return False
    if source in _INTEGRAL and target in _INTEGRAL:
        return _INTEGRAL.index(target) < _INTEGRAL.index(source)
    return not (target == "double" and source in (*_INTEGRAL, "float"))


def failure_count(source: Any, cast: Any) -> Any:
    """The count of values of ``source`` that ``cast`` (its try_cast) made null."""
    from pyspark.sql import functions as F

    return F.count_if(source.isNotNull() & cast.isNull())


def counted(df: Any, checks: list, where: str = "ApplyMapping") -> Any:
    """``df``, the casts that can fail counted: ``checks`` are (label, count column)
    pairs; ``where`` names the transform casting. A batch frame is counted now; a
    streaming one per micro-batch."""
    if not checks:
        return df
    if df.isStreaming:
        aliased = [count.alias(label) for label, count in checks]

        def report_batch(batch_id: int, counts: dict) -> None:
            report(f"{where}, batch {batch_id}", counts)

        # one prefix a transform: a reporter is registered by its prefix
        return observed(df, f"{METRICS_PREFIX}_{where}_", report_batch, *aliased)
    row = df.select(*[count.alias(f"c{i}") for i, (_, count) in enumerate(checks)]).first()
    report(where, {label: row[i] for i, (label, _) in enumerate(checks)})
    return df


def report(where: str, counts: dict) -> None:
    """One warning line for the casts that made values null (none: nothing logged)."""
    failed = {label: int(n) for label, n in counts.items() if n}
    if failed:
        log.warning(
            "%s: %d of the values could not be cast and are null (%s)",
            where,
            sum(failed.values()),
            ", ".join(f"{label}: {n}" for label, n in failed.items()),
        )
