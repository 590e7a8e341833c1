"""Counts of a streaming frame reported with each micro-batch.

A streaming frame cannot be counted when it is defined, so the counts that must never be
silent (values ApplyMapping could not cast, records that did not parse) are observed
metrics (``df.observe``): Spark computes them with the batch, whichever sink runs it
(forEachBatch or ``writeStream`` directly), and one query listener a session hands each
batch's values to the reporter registered for their name's prefix.
"""

from __future__ import annotations

import itertools
import threading
import weakref
from typing import Any, Callable

#: ``reporter(batch_id, {metric: value})`` of each name prefix.
Reporter = Callable[[int, dict], None]
_REPORTERS: dict = {}
_NAMES = itertools.count()
#: Sessions with the listener (weak: a new session must not inherit a dead one's id).
_LISTENING: Any = weakref.WeakSet()
_LOCK = threading.Lock()


def observed(df: Any, prefix: str, reporter: Reporter, *counts: Any) -> Any:
    """``df`` with ``counts`` (aliased aggregate columns) computed with each micro-batch
    and handed to ``reporter``; the name prefix picks the reporter."""
    with _LOCK:
        _REPORTERS[prefix] = reporter
    _listen(df.sparkSession)
    return df.observe(f"{prefix}_{next(_NAMES)}", *counts)


def _report(batch_id: int, metrics: dict) -> None:
    for name, row in metrics.items():
        for prefix, reporter in list(_REPORTERS.items()):
            if name.startswith(prefix):
                reporter(batch_id, row.asDict())


def _listen(session: Any) -> None:
    """One listener a session."""
    from pyspark.sql.streaming import StreamingQueryListener

    class BatchMetricsLog(StreamingQueryListener):
        def onQueryStarted(self, event: Any) -> None:
            pass

        def onQueryProgress(self, event: Any) -> None:
            progress = event.progress
            _report(progress.batchId, progress.observedMetrics or {})

        def onQueryIdle(self, event: Any) -> None:
            pass

        def onQueryTerminated(self, event: Any) -> None:
            pass

    with _LOCK:
        if session in _LISTENING:
            return
        _LISTENING.add(session)
    session.streams.addListener(BatchMetricsLog())
