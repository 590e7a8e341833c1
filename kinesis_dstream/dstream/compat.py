"""Every use of PySpark internals (``_jsc``, ``_jrdd``, ``_jssc``) lives here.

PySpark's public Python API has no way to cache an RDD without a Python pass over it,
to ask whether a SparkContext is still alive, or to read a StreamingContext's batch
interval; these few helpers do it through the JVM objects, in one place, so a PySpark
upgrade that moves them breaks one module.
"""

from __future__ import annotations

from typing import Any


def context_alive(sc: Any) -> bool:
    """True while ``sc`` (a SparkContext) has a live JVM context."""
    return sc is not None and getattr(sc, "_jsc", None) is not None


def count_in_jvm(rdd: Any) -> int:
    """Compute (and cache, if persisted) ``rdd`` with no Python pass over its elements."""
    return int(rdd._jrdd.count())


def batch_interval_s(ssc: Any) -> float:
    """A StreamingContext's batch interval in seconds."""
    return ssc._jssc.ssc().graph().batchDuration().milliseconds() / 1000
