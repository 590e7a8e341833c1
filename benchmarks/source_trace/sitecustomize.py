"""Timestamps of the source's calls in every Python process Spark starts (benchmarks only).

Python imports ``sitecustomize`` at start-up from the path; :func:`benchmarks.source_trace.enable`
puts this folder first on the ``PYTHONPATH`` that Spark's JVM hands its Python processes
(the source runner, the planner, the workers), and names the trace file in
``KINESIS_DSTREAM_TRACE``. Each process then appends one JSON line per event: its own start
(from ``/proc``), the import of the modules below, and each call of the source's reader,
runner, peeker and range reads, with wall-clock start and end. Nothing is traced without
the variable.

Many processes write at once (the workers, each with threads): each flush is one
``os.write`` of whole lines to the file opened ``O_APPEND``, so lines never interleave (a
buffered text file splits a large write into several), and a process forks only after its
buffer is written (the PySpark daemon forks its workers; they would write it again). The
import hook never changes ``sys.meta_path`` (two threads importing at once did: one's
``remove`` failed). And the ``sitecustomize`` this one shadows (the next one on the path,
e.g. Debian's in ``/usr/lib/python3.X``) still runs, after this one.
"""

from __future__ import annotations

import atexit
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys
import threading
import time

TRACE_ENV = "KINESIS_DSTREAM_TRACE"
_FILE = os.environ.get(TRACE_ENV)
_BUFFER: list = []
_LOCK = threading.Lock()  # the buffer and the file: a worker's threads emit at once
_FLUSH_ON = {"process", "read", "latestOffset", "partitions", "commit", "initialOffset"}


def _flush() -> None:
    with _LOCK:
        if not _BUFFER:
            return
        data = "".join(_BUFFER).encode("utf-8")
        del _BUFFER[:]
        fd = os.open(_FILE, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)  # type: ignore[arg-type]
        try:
            written = os.write(fd, data)  # one write: whole lines, appended as one
            while written < len(data):  # only on a full disk or a signal
                written += os.write(fd, data[written:])
        finally:
            os.close(fd)


def _new_lock_in_child() -> None:
    global _LOCK
    _LOCK = threading.Lock()  # another thread may have held it at the fork


def emit(event: str, t0: float, t1: float, **extra: object) -> None:
    record = {"pid": os.getpid(), "ev": event, "t0": t0, "t1": t1, **extra}
    line = json.dumps(record, default=str) + "\n"
    with _LOCK:
        _BUFFER.append(line)
        due = event in _FLUSH_ON or len(_BUFFER) > 500
    if due:
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
        spec = _spec_from_others(self, name, path, target)
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


def _spec_from_others(hook: object, name: str, path: object, target: object) -> object:
    """The spec the finders after ``hook`` give, as the import system asks them; a copy of
    ``sys.meta_path``, which stays as it is (another thread may be importing)."""
    for finder in list(sys.meta_path):
        find = getattr(finder, "find_spec", None)
        if finder is hook or find is None:
            continue
        spec = find(name, path, target)
        if spec is not None:
            return spec
    return None


def _run_shadowed_sitecustomize() -> None:
    """Run the ``sitecustomize`` that Python would have run without this folder first on
    the path, as ``site`` runs one: a failure is printed, not raised."""
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
        print(
            f"Error in sitecustomize {spec.origin} (run by the source trace's): {exc!r}",
            file=sys.stderr,
        )


if _FILE:
    emit("process", _started_at(), time.time(), argv=" ".join(sys.argv)[:120])
    sys.meta_path.insert(0, _ImportHook())
    atexit.register(_flush)
    os.register_at_fork(before=_flush, after_in_child=_new_lock_in_child)
_run_shadowed_sitecustomize()
