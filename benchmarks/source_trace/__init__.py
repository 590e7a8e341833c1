"""Where a query's time goes, process by process: the source's calls with timestamps.

    from benchmarks import source_trace
    source_trace.enable("/tmp/trace.jsonl")   # before the SparkContext starts
    ... run queries ...
    print(source_trace.timeline(source_trace.load("/tmp/trace.jsonl"), t0, t1))

:func:`enable` makes every Python process Spark starts afterwards (the source runner, the
planner, the workers: they inherit the JVM's environment) load this folder's
``sitecustomize``, which records each process's start, the imports of PySpark, pyarrow,
boto3 and the library, and each call of the source's reader (``initialOffset``,
``latestOffset``, ``partitions``, ``read``, ``commit``), of the runner's steps (building
it, resolving range ends, peeking) and of each range read (``prepare``: read and end
recorded). :func:`timeline` prints them relative to a query's start.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from .sitecustomize import TRACE_ENV

HERE = Path(__file__).resolve().parent


def enable(path: str) -> None:
    """Trace the Python processes Spark starts from now on into ``path`` (JSON lines)."""
    os.environ[TRACE_ENV] = path
    rest = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = str(HERE) + (os.pathsep + rest if rest else "")


def load(path: str) -> list:
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def timeline(events: list, t0: float, t1: float) -> str:
    """The events that overlap [t0, t1], one line each, in seconds after ``t0``; the many
    ``prepare`` events (one per range) summed per process."""
    inside = [e for e in events if e["t1"] >= t0 and e["t0"] <= t1]
    lines = []
    prepared: dict = {}
    for e in sorted(inside, key=lambda e: e["t0"]):
        if e["ev"] == "prepare":
            first, last, n, busy = prepared.get(e["pid"], (e["t0"], e["t1"], 0, 0.0))
            spent = busy + e["t1"] - e["t0"]
            prepared[e["pid"]] = (min(first, e["t0"]), max(last, e["t1"]), n + 1, spent)
            continue
        extra = {k: v for k, v in e.items() if k not in ("pid", "ev", "t0", "t1", "argv")}
        if extra.get("first"):
            extra["first"] = round(extra["first"] - t0, 3)
        lines.append(
            f"{e['t0'] - t0:7.3f} {e['t1'] - t0:7.3f} ({e['t1'] - e['t0']:6.3f}) "
            f"pid {e['pid']:>7} {e['ev']:<38} {extra or ''}"
        )
    for pid, (first, last, n, busy) in sorted(prepared.items()):
        lines.append(
            f"{first - t0:7.3f} {last - t0:7.3f} ({last - first:6.3f}) pid {pid:>7} "
            f"{n} ranges prepared (read, end recorded), {busy:.3f} s in all"
        )
    return "\n".join(lines)
