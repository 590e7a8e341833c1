"""Run by Python at start-up when this folder is on ``PYTHONPATH``, which only
``kinesis-dstream submit`` (or a user who means it) arranges: installs the stand-in for
``pyspark.streaming.kinesis`` (:mod:`kinesis_dstream.asl.standin`), then runs the
``sitecustomize`` this one shadows, if there is one further along the path.

It never stops Python from starting: a Python without kinesis_dstream says so in one
line on stderr and goes on with PySpark's own module.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys


def _install() -> None:
    try:
        from kinesis_dstream.asl.standin import install
    except ImportError as exc:
        sys.stderr.write(
            f"kinesis-dstream submit: {sys.executable} cannot import kinesis_dstream ({exc}): "
            "pyspark.streaming.kinesis is PySpark's own in this process; install "
            "kinesis_dstream for this Python or set PYSPARK_PYTHON to one that has it\n"
        )
        return
    install()


def _run_shadowed() -> None:
    """The next ``sitecustomize`` on ``sys.path`` after this folder (a distribution's, a
    virtualenv's), run as ``site`` runs one: a failure is printed, not raised. (The
    benchmarks' source trace has its own copy: it must import nothing of the library.)"""
    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["_shadowed_sitecustomize"] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # what site does with a failing sitecustomize
        print(f"Error in sitecustomize {spec.origin}: {exc!r}", file=sys.stderr)


if __name__ == "sitecustomize":  # Python's start-up, not an import by package name
    _install()
    _run_shadowed()
