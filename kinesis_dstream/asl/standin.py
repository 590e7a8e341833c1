"""The stand-in for ``pyspark.streaming.kinesis``: this library under PySpark's module
name, only when asked.

PySpark's own ``pyspark/streaming/kinesis.py`` ships in every PySpark and needs the JVM
kinesis-asl jar. :func:`install` puts a finder first on ``sys.meta_path`` that serves
``pyspark.streaming.kinesis`` from :mod:`.pyspark_streaming_kinesis` (this library's
``KinesisUtils`` and constants); PySpark's file stays where it is, untouched. Nothing
installs it by default. ``kinesis-dstream submit`` puts :data:`SHIM_DIR` first on the
``PYTHONPATH`` of the spark-submit it starts; the ``sitecustomize`` there installs the
finder at every Python start that inherits that path: the driver, and the executors'
Python workers on local masters and YARN. On other cluster managers the stand-in's
``createStream`` (:mod:`.kinesis_utils`) puts the folder on the SparkContext's
environment, which reaches the workers with every function shipped after it. This
module loads at every such start, so it imports none of the DStream machinery.

Functions pickled to the executors name the modules their objects come from, which are
this library's (the stand-in defines nothing), so the workers need the library; they get
the stand-in too, for code there that imports ``pyspark.streaming.kinesis`` by name.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import os
import sys
from typing import Any

from ..errors import StandInError

MODULE = "pyspark.streaming.kinesis"
_HERE = os.path.dirname(os.path.abspath(__file__))
#: The file served as ``pyspark.streaming.kinesis``.
STANDIN_FILE = os.path.join(_HERE, "pyspark_streaming_kinesis.py")
#: The folder whose ``sitecustomize`` installs the stand-in at Python's start.
SHIM_DIR = os.path.join(_HERE, "shim")
#: Set in the stand-in module: tells it from PySpark's.
MARKER = "__kinesis_dstream_standin__"


class StandInFinder(importlib.abc.MetaPathFinder):
    """Finds ``pyspark.streaming.kinesis`` in :data:`STANDIN_FILE`; nothing else."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname != MODULE:
            return None
        return importlib.util.spec_from_file_location(MODULE, STANDIN_FILE)


def is_standin(module: Any) -> bool:
    """Whether ``module`` is this library's ``pyspark.streaming.kinesis``."""
    return bool(getattr(module, MARKER, False))


def installed() -> bool:
    """Whether this process serves ``pyspark.streaming.kinesis`` from this library."""
    return any(isinstance(finder, StandInFinder) for finder in sys.meta_path)


def install() -> str:
    """Serve ``pyspark.streaming.kinesis`` from this library in this process, from the
    next import of it on; returns the stand-in's file.

    Raises :class:`~kinesis_dstream.errors.StandInError` when PySpark's module is already
    imported here (code holding it would keep it: install before the first import).
    """
    loaded = sys.modules.get(MODULE)
    if loaded is not None and not is_standin(loaded):
        where = getattr(loaded, "__file__", MODULE)
        raise StandInError(
            f"PySpark's pyspark.streaming.kinesis is already imported ({where}): call "
            "kinesis_dstream.asl.install() before the first import of it"
        )
    if not installed():
        sys.meta_path.insert(0, StandInFinder())
    return STANDIN_FILE
