"""Timestamps of the source's calls in every Python process Spark starts (benchmarks only).

Python imports ``sitecustomize`` at start-up from the path; :func:`benchmarks.source_trace.enable`
puts this folder first on the ``PYTHONPATH`` that Spark's JVM hands its Python processes
(the source runner, the planner, the workers), and names the trace file in
``KINESIS_DSTREAM_TRACE``. Each process then appends one JSON line per event: its own start
(from ``/proc``), the import of the modules below, and each call of the source's reader,
runner, peeker and range reads, with wall-clock start and end. Nothing is traced without
the variable.
"""

from __future__ import annotations

import atexit
import importlib.abc
import importlib.util
import json
import os
import sys
import time

TRACE_ENV = "KINESIS_DSTREAM_TRACE"
_FILE = os.environ.get(TRACE_ENV)
_BUFFER: list = []
_FLUSH_ON = {"process", "read", "latestOffset", "partitions", "commit", "initialOffset"}


def _flush() -> None:
    if _BUFFER:
        with open(_FILE, "a", encoding="utf-8") as handle:  # type: ignore[arg-type]
            handle.write("".join(_BUFFER))
        del _BUFFER[:]


def emit(event: str, t0: float, t1: float, **extra: object) -> None:
    record = {"pid": os.getpid(), "ev": event, "t0": t0, "t1": t1, **extra}
    _BUFFER.append(json.dumps(record, default=str) + "\n")
    if event in _FLUSH_ON or len(_BUFFER) > 500:
        _flush()


def _started_at() -> float:
    """This process's start (wall clock), from /proc."""
    with open("/proc/self/stat", encoding="ascii") as handle:
        ticks = int(handle.read().rsplit(")", 1)[1].split()[19])
    with open("/proc/uptime", encoding="ascii") as handle:
        uptime = float(handle.read().split()[0])
    return time.time() - uptime + ticks / os.sysconf("SC_CLK_TCK")


def _timed(owner: object, name: str, generator: bool = False, **labels: object) -> None:
    original = getattr(owner, name)

    def call(*args, **kwargs):  # type: ignore[no-untyped-def]
        t0 = time.time()
        try:
            return original(*args, **kwargs)
        finally:
            emit(name, t0, time.time(), **labels)

    def gen(self, partition, *args, **kwargs):  # type: ignore[no-untyped-def]
        t0, first, rows = time.time(), None, 0
        try:
            for item in original(self, partition, *args, **kwargs):
                first = first or time.time()
                rows += getattr(item, "num_rows", 0)
                yield item
        finally:
            ranges = len(getattr(partition, "parts", (partition,)))
            emit(name, t0, time.time(), first=first, rows=rows, ranges=ranges)

    setattr(owner, name, gen if generator else call)


def _source(module: object) -> None:
    reader = module.KinesisStreamReader  # type: ignore[attr-defined]
    for name in ("initialOffset", "latestOffset", "partitions", "commit", "__init__"):
        _timed(reader, name)
    _timed(reader, "read", generator=True)


def _runner(module: object) -> None:
    for name in ("_resolve", "_find_data"):
        _timed(module.SourceRunner, name)  # type: ignore[attr-defined]


def _multi(module: object) -> None:
    _timed(module, "build_runner")


def _partition(module: object) -> None:
    _timed(module, "prepare")


PATCHES = {
    "kinesis_dstream.sql.source": _source,
    "kinesis_dstream.sql.driver.runner": _runner,
    "kinesis_dstream.sql.driver.multi": _multi,
    "kinesis_dstream.sql.executor.partition": _partition,
}
TIMED_IMPORTS = {"pyspark", "pyarrow", "boto3", "kinesis_dstream", *PATCHES}


class _ImportHook(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):  # type: ignore[no-untyped-def]
        if name not in TIMED_IMPORTS:
            return None
        sys.meta_path.remove(self)
        try:
            spec = importlib.util.find_spec(name)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return spec
        load = spec.loader.exec_module

        def exec_module(module):  # type: ignore[no-untyped-def]
            t0 = time.time()
            load(module)
            emit("import " + name, t0, time.time())
            if name in PATCHES:
                PATCHES[name](module)

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


if _FILE:
    emit("process", _started_at(), time.time(), argv=" ".join(sys.argv)[:120])
    sys.meta_path.insert(0, _ImportHook())
    atexit.register(_flush)
