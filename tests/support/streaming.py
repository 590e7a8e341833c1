"""Helpers for tests that run a StreamingContext on the session's SparkContext."""

from __future__ import annotations

import contextlib
import threading
from typing import Callable

from .waiting import wait_until

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

    def wait_batches(self, more: int, timeout_s: float = 60) -> None:
        """Wait until ``more`` further batches reached the output (a positive event)."""
        with self._lock:
            target = self.batches + more
        wait_until(lambda: self.batches >= target, timeout_s, f"{more} more batches")

    def snapshot(self) -> list:
        with self._lock:
            return list(self.items)

    def wait_for(self, predicate: Callable[[list], bool], timeout_s: float, what: str) -> list:
        """The items once ``predicate(items)`` holds (a positive event, bounded)."""
        seen: list = []

        def holds() -> bool:
            seen[:] = self.snapshot()
            return bool(predicate(seen))

        wait_until(holds, timeout_s, what, detail=lambda: f"(have {len(seen)})")
        return seen


def our_threads() -> list:
    """Names of live threads this library starts."""
    return sorted(
        t.name for t in threading.enumerate() if t.name.startswith(("kinesis-", "lease-"))
    )


def leases_of(dynamodb, app: str) -> dict:
    """Lease key -> Lease of an application's table; empty while the table does not exist
    yet (a receiver creates it when it starts)."""
    from kinesis_dstream.errors import KinesisServiceError
    from kinesis_dstream.leases.dynamodb import LeaseTable

    try:
        return {lease.lease_key: lease for lease in LeaseTable(dynamodb, app).list_leases()}
    except KinesisServiceError as exc:
        if exc.code == "ResourceNotFoundException":
            return {}
        raise


def progress_of(stream_name: str) -> dict:
    """kinesis_dstream.progress() of the stream in this process ({} if none)."""
    from kinesis_dstream import progress

    return next((p for p in progress() if p["stream"] == stream_name), {})


@contextlib.contextmanager
def running(query):
    """Stop a Structured Streaming query however the test ends."""
    try:
        yield query
    finally:
        if query.isActive:
            query.stop()
