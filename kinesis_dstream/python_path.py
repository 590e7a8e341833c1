"""A folder of this library's, first where Python looks for modules: here and in the
Python processes Spark starts.

Three places, each reaching its own processes:

- this process's ``sys.path`` (imports from now on);
- the ``PYTHONPATH`` environment variable, which Spark's JVM (started from this process,
  or by a spark-submit given that environment) hands the driver's Python and, on local
  masters and YARN, the executors' Python workers;
- a SparkContext's ``environment``, which every Python function Spark ships carries to
  the executors' workers on any cluster manager (functions wrapped from then on).

The Glue layer puts its ``awsglue`` shim there; ``kinesis-dstream submit`` the folder
whose ``sitecustomize`` serves ``pyspark.streaming.kinesis`` (:mod:`.asl`). A folder is a
path on this machine: on a cluster, the library must be installed at the same place on
every node (it must be installed there anyway: the executors import it).
"""

from __future__ import annotations

import os
import sys
from collections.abc import MutableMapping
from typing import Any, Optional

from .spark_internals import active_spark_context

PYTHONPATH = "PYTHONPATH"


def with_first(folder: str, path: Optional[str]) -> str:
    """A Python path (``PYTHONPATH``'s form) with ``folder`` first, once."""
    parts = [p for p in (path or "").split(os.pathsep) if p and p != folder]
    return os.pathsep.join([folder, *parts])


def put_first(
    folder: str,
    *,
    sys_path_at: Optional[int] = None,
    environ: Optional[MutableMapping[str, str]] = None,
    spark_context: Any = None,
) -> None:
    """Put ``folder`` at index ``sys_path_at`` of ``sys.path`` (None: leave it; nothing
    when it is there already), first on ``environ``'s ``PYTHONPATH`` (None: leave it) and
    first on ``spark_context``'s environment (None: leave it)."""
    if sys_path_at is not None and folder not in sys.path:
        sys.path.insert(sys_path_at, folder)
    if environ is not None:
        environ[PYTHONPATH] = with_first(folder, environ.get(PYTHONPATH))
    if spark_context is not None:
        env = spark_context.environment
        env[PYTHONPATH] = with_first(folder, env.get(PYTHONPATH))


def put_first_everywhere(folder: str, spark_context: Any = None) -> None:
    """:func:`put_first` in all three places of this process: ``sys.path`` (first),
    ``os.environ`` and ``spark_context`` (default: the running one, if any)."""
    sc = spark_context or active_spark_context()
    put_first(folder, sys_path_at=0, environ=os.environ, spark_context=sc)


def default_spark_python(environ: MutableMapping[str, str]) -> None:
    """Spark's Python (driver and workers) is this interpreter unless the user chose one:
    the one with this library installed, not whichever ``python3`` comes first on PATH."""
    environ.setdefault("PYSPARK_PYTHON", sys.executable)
