"""The values ApplyMapping could not cast: null, as Glue makes them, and counted.

Spark 4 casts with ANSI rules, so one malformed value (``'abc'`` to ``int``) would fail
the batch, and forEachBatch would run it again and fail the same way. ApplyMapping casts
with ``try_cast`` instead, and every value it turned into null is counted, never silent:

- on a batch frame (a forEachBatch batch, the Glue Studio shape), by one aggregation
  over the frame when ApplyMapping is applied, logged at once;
- on a streaming frame, by observed metrics (``df.observe``) that a query listener logs
  for each micro-batch.

Only casts that can fail are counted (not to string, not to a wider number).
"""

from __future__ import annotations

import itertools
import logging
import threading
from typing import Any

log = logging.getLogger(__name__)

#: The name prefix of the observed metrics of a streaming frame's counts.
METRICS_PREFIX = "kinesis_dstream_glue_cast_failures"
_NAMES = itertools.count()
_LISTENING: set = set()
_LISTENING_LOCK = threading.Lock()


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


def counted(df: Any, checks: list) -> Any:
    """``df``, its ApplyMapping casts that can fail counted: ``checks`` are (label,
    count column) pairs. A batch frame is counted now; a streaming one per micro-batch."""
    if not checks:
        return df
    if df.isStreaming:
        _listen(df.sparkSession)
        name = f"{METRICS_PREFIX}_{next(_NAMES)}"
        return df.observe(name, *[count.alias(label) for label, count in checks])
    row = df.select(*[count.alias(f"c{i}") for i, (_, count) in enumerate(checks)]).first()
    report("ApplyMapping", {label: row[i] for i, (label, _) in enumerate(checks)})
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


def _listen(session: Any) -> None:
    """Log a streaming frame's counts with each micro-batch's progress (once a session)."""
    from pyspark.sql.streaming import StreamingQueryListener

    class CastFailureLog(StreamingQueryListener):
        def onQueryStarted(self, event: Any) -> None:
            pass

        def onQueryProgress(self, event: Any) -> None:
            progress = event.progress
            for name, row in (progress.observedMetrics or {}).items():
                if name.startswith(METRICS_PREFIX):
                    report(f"ApplyMapping, batch {progress.batchId}", row.asDict())

        def onQueryIdle(self, event: Any) -> None:
            pass

        def onQueryTerminated(self, event: Any) -> None:
            pass

    with _LISTENING_LOCK:
        if id(session) in _LISTENING:
            return
        _LISTENING.add(id(session))
    session.streams.addListener(CastFailureLog())
