"""Long-lived objects of a Spark Python worker kept out of PySpark's per-task collection.

PySpark's daemon runs a full ``gc.collect()`` after every task of a reused Python worker
(``spark.python.worker.reuse``, on by default). A collection walks every object alive: a
worker that imported this library and built a botocore client holds about 90,000 (modules,
service models, shapes), 30-50 ms a collection on a 2-core machine, paid by every task of
every round and batch. At 128 shards that was 86% of the Python workers' samples
(py-spy; see docs/benchmarks/).

``gc.freeze()`` moves every object alive at the call to a generation the collector never
walks. What is frozen here (modules, clients and their models) lives as long as the worker
anyway; reference counting still frees a frozen object that loses its last reference,
and a collection right before each freeze leaves no cyclic garbage to keep. Freezes are
few (each costs that one collection): once per worker process when a task of ours first
runs there, and after each client built in it (one per client spec and process).

Only processes running a Spark task freeze (``TaskContext.get()``): never the driver, the
KCL daemon or a user's own process. ``KINESIS_DSTREAM_FREEZE_WORKER_HEAP=0`` in the
executors' environment turns it off (``spark.executorEnv.`` on a cluster).
"""

from __future__ import annotations

import gc
import os
import sys
import threading

#: The environment variable that turns freezing off ("0"); on by default.
FREEZE_ENV = "KINESIS_DSTREAM_FREEZE_WORKER_HEAP"

_frozen_pids: set = set()
_lock = threading.Lock()


def _in_spark_task() -> bool:
    if "pyspark" not in sys.modules:  # not Spark (the KCL daemon): no import for nothing
        return False
    from pyspark import TaskContext

    return TaskContext.get() is not None


def _enabled() -> bool:
    return os.environ.get(FREEZE_ENV, "1").strip() != "0"


def freeze_heap() -> bool:
    """Freeze every object alive now if this process runs a Spark task. Call it right
    after building something that lives as long as the worker. Returns whether it froze."""
    if not (_enabled() and _in_spark_task()):
        return False
    with _lock:
        gc.collect()  # cyclic garbage now (a client's discarded Session) is not kept
        gc.freeze()
        _frozen_pids.add(os.getpid())
    return True


def freeze_heap_once() -> bool:
    """:func:`freeze_heap` once per process: at the start of a task, for what the
    library's imports left. Returns whether it froze now."""
    if os.getpid() in _frozen_pids:
        return False
    return freeze_heap()
