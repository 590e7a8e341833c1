"""Putting the ``awsglue`` shim where a Glue script imports it, only when asked.

The shim (``kinesis_dstream/glue/shim/awsglue``) is not importable as ``awsglue`` by
default: :func:`install` (called by ``kinesis-dstream glue run``, or by a program that
opts in) puts its folder first on ``sys.path`` and on the Python path of Spark's
workers, and refuses when another ``awsglue`` is installed (a real one is never
shadowed).
"""

from __future__ import annotations

import importlib.util
import os
import sys
from typing import Any, Optional

from ...python_path import put_first, put_first_everywhere
from ..errors import GlueError

#: The glue package's ``shim`` folder (this module is in ``glue/job/``).
SHIM_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "shim")
#: Set in the shim's ``awsglue/__init__.py``: tells ours from another ``awsglue``.
SHIM_MARKER = "__kinesis_dstream_shim__"


def _foreign_awsglue() -> Optional[str]:
    """Where another ``awsglue`` is (loaded or installed), or None."""
    loaded = sys.modules.get("awsglue")
    if loaded is not None:
        return (
            None
            if getattr(loaded, SHIM_MARKER, False)
            else str(getattr(loaded, "__file__", loaded))
        )
    if SHIM_DIR in sys.path:
        return None
    spec = importlib.util.find_spec("awsglue")
    if spec is None:
        return None
    return spec.origin or str(list(spec.submodule_search_locations or []))


def add_python_folder(folder: str) -> None:
    """Put ``folder`` on this process's ``sys.path`` (after the shim) and first on the
    ``PYTHONPATH`` that Spark's JVM, started from this process, hands its Python workers
    (the driver's and, on local and local-cluster masters, the executors')."""
    at = 1 if sys.path[:1] == [SHIM_DIR] else 0
    put_first(folder, sys_path_at=at, environ=os.environ)


def install(spark_context: Any = None) -> str:
    """Make ``import awsglue`` give this layer's Glue API here and in Spark's Python
    workers (those started after this call; on a cluster the library must be installed
    on every node, as the source needs it anyway). Returns the shim's folder.

    Raises :class:`~.errors.GlueError` when another ``awsglue`` is installed or loaded.
    """
    foreign = _foreign_awsglue()
    if foreign is not None:
        raise GlueError(
            f"another awsglue is installed ({foreign}); kinesis_dstream's Glue layer will not "
            "shadow it: run the job in a virtualenv without it (pip uninstall the awsglue "
            "package there)"
        )
    put_first_everywhere(SHIM_DIR, spark_context)  # (functions wrapped from now on)
    return SHIM_DIR
