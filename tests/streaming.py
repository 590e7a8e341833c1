"""Helpers for tests that run a StreamingContext on the session's SparkContext."""

from __future__ import annotations

import threading
import time
from typing import Callable

_COLLECTORS: dict = {}  # key -> Collected; the output function holds only the key


def _collect(key: int, rdd) -> None:
    _COLLECTORS[key].add(rdd)


class Collected:
    """What a DStream delivered, gathered in the driver by foreachRDD.

    The output function Spark pickles (into its checkpoint, too) holds only a key into a
    module-level table, never the lock or the list.
    """

    def __init__(self, dstream=None):
        self.items: list = []
        self.batches = 0
        self._lock = threading.Lock()
        key = id(self)
        _COLLECTORS[key] = self
        if dstream is not None:

            def output(rdd):  # one argument: PySpark reads a two-argument one as (time, rdd)
                _collect(key, rdd)

            dstream.foreachRDD(output)

    def add(self, rdd):
        rows = rdd.collect()
        with self._lock:
            self.items += rows
            self.batches += 1

    def snapshot(self) -> list:
        with self._lock:
            return list(self.items)

    def wait_for(self, predicate: Callable[[list], bool], timeout_s: float, what: str) -> list:
        deadline = time.monotonic() + timeout_s
        while True:
            items = self.snapshot()
            if predicate(items):
                return items
            if time.monotonic() > deadline:
                raise AssertionError(f"not within {timeout_s:.0f}s: {what} (have {len(items)})")
            time.sleep(0.1)


def our_threads() -> list:
    """Names of live threads this library starts."""
    return sorted(
        t.name for t in threading.enumerate() if t.name.startswith(("kinesis-", "lease-"))
    )
