"""One reshard case, whatever the consumer: produce all through the resharding, wait after
each step for every open shard to deliver, drain, check (:mod:`benchmarks.reshard`).

Used by ``tests/spark/test_reshard_matrix.py`` (createStream, the Structured Streaming
source) and ``tests/interop/test_reshard_kcl.py`` (``kinesis-dstream kcl``).
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable, Protocol

from benchmarks.reshard import STEPS, ContinuousProducer, check_reshard, lineage, open_shards, save
from benchmarks.reshard import reshard as reshard_steps
from kinesis_dstream.retrieval.streams import ensure_stream

from .waiting import wait_until

#: Bounds for a loaded 2-core machine: a step's shards all delivering, the final drain.
STEP_BOUND_S = 90.0
DRAIN_BOUND_S = 120.0


class Delivered(Protocol):
    """What a consumer delivered: ``(data, shard id, delivered_at, unit)`` (wall-clock
    seconds; ``unit`` numbers what was delivered at once, see
    :func:`benchmarks.reshard.check_reshard`)."""

    def snapshot(self) -> list: ...


class Deliveries:
    """Deliveries gathered in this process (a Spark output), in the order seen; each
    batch is a unit."""

    def __init__(self) -> None:
        self._items: list = []
        self._units = 0
        self._lock = threading.Lock()

    def add(self, rows: list) -> None:
        """``rows``: (data, shard id) pairs delivered now, in one batch."""
        now = time.time()
        with self._lock:
            self._units += 1
            self._items += [(data, shard, now, self._units) for data, shard in rows]

    def snapshot(self) -> list:
        with self._lock:
            return list(self._items)


def shards_since(deliveries: Delivered, since: float) -> set:
    return {d[1] for d in deliveries.snapshot() if d[2] >= since}


def run_case(
    name: str,
    server: Any,
    stream: str,
    deliveries: Delivered,
    start: Callable[[], Callable[[], None]],
    restart_around: str = "",
) -> None:
    """Produce, reshard through every step (the consumer stopped before the step
    ``restart_around`` and started after it: its parents unfinished, its children
    unread), drain, check. ``start()`` starts the consumer and returns its stop
    function; the consumer adds what it delivers to ``deliveries``."""
    kinesis = server.client("kinesis")
    ensure_stream(kinesis, stream, 2)
    producer = ContinuousProducer(stream, kinesis).start()
    began = time.monotonic()
    stop = start()
    try:

        def before(step: str) -> None:
            if step == restart_around:
                stop()

        def between(step: str) -> None:
            nonlocal stop
            since = time.time()
            if step == restart_around:  # the parents unfinished, the children unread
                stop = start()
            wanted = {s["ShardId"] for s in open_shards(kinesis, stream)}
            wait_until(
                lambda: wanted <= shards_since(deliveries, since),
                STEP_BOUND_S,
                f"{name}: records of every shard open after {step}",
                detail=lambda: f"(missing {sorted(wanted - shards_since(deliveries, since))})",
            )

        reshard_steps(kinesis, stream, between, STEPS, before)
        produced = producer.stop()
        wanted = {f"{key}:{seq}" for key, seq in produced}

        def all_delivered() -> bool:
            seen = {d[0].rsplit(":", 1)[0] for d in deliveries.snapshot()}
            return wanted <= seen

        wait_until(all_delivered, DRAIN_BOUND_S, f"{name}: every record produced")
    finally:
        stop()
        producer.stop()
    report = check_reshard(
        name, produced, deliveries.snapshot(), lineage(kinesis, stream), time.monotonic() - began
    )
    save(report)
    report.assert_ok()
