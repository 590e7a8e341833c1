"""Several shard slices in one batch-read task (``shardsPerTask``).

A batch read's task mostly waits: on each ``GetRecords`` and between its calls on its
shard (``minFetchPeriod``: Kinesis allows 5 reads a second per shard). With more shards
than task slots Spark runs the tasks in waves and those waits add up; a task that holds
several slices reads them concurrently, a thread each, so the waits overlap (measured on
4 shards and 2 cores: see the benchmarks page).

The threads hand the task their Arrow batches through a bounded queue
(:data:`QUEUED_BATCHES` at most: a slice's page is read only once there is room), in
order within each slice and interleaved between slices, as Spark promises no row order
within a task. A slice that fails fails the task with its error, once the other threads
have stopped: Spark runs the task again, and it reads the same records (both ends of every
slice are fixed when the read is planned). A task stopped early (a ``limit``) stops its
threads the same way. The task's thread owns the slice threads: it starts them, and stops
and joins them (bounded) before it returns or raises.
"""

from __future__ import annotations

import enum
import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Optional

from pyspark.sql.datasource import InputPartition

log = logging.getLogger(__name__)

#: Arrow batches (a page each) queued between the slice threads and the task.
QUEUED_BATCHES = 4
#: How often a thread waiting to queue a batch looks at the stop signal.
PUT_WAIT_S = 0.2
#: How long the task waits for a slice thread to stop (a GetRecords under way ends first).
JOIN_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class SliceGroup(InputPartition):
    """One task of a batch read holding several :class:`~.plan.ShardSlice` s."""

    slices: tuple

    def describe(self) -> str:
        return "; ".join(part.describe() for part in self.slices)


def group_slices(slices: list, per_task: Optional[int]) -> list:
    """The read's tasks: a slice each, or consecutive groups of ``per_task`` slices."""
    if per_task is None or per_task <= 1 or len(slices) <= 1:
        return slices
    groups = [tuple(slices[i : i + per_task]) for i in range(0, len(slices), per_task)]
    return [group[0] if len(group) == 1 else SliceGroup(group) for group in groups]


class _Item(enum.Enum):
    BATCH = "batch"
    FAILED = "failed"
    DONE = "done"


def read_group(group: SliceGroup, read: Callable[[Any], Iterator[Any]]) -> Iterator[Any]:
    """Every batch of ``read(slice)`` for the group's slices, the slices read concurrently."""
    handed: queue.Queue = queue.Queue(maxsize=QUEUED_BATCHES)
    stop = threading.Event()

    def put(item: tuple) -> bool:
        while not stop.is_set():
            try:
                handed.put(item, timeout=PUT_WAIT_S)
                return True
            except queue.Full:
                continue
        return False

    def work(part: Any) -> None:
        try:
            batches = read(part)
            try:
                for batch in batches:
                    if not put((_Item.BATCH, batch)):
                        return
            finally:
                close = getattr(batches, "close", None)
                if close is not None:
                    close()  # the slice's reader is closed in its own thread
        except BaseException as exc:  # handed to the task, raised there
            put((_Item.FAILED, exc))
            return
        put((_Item.DONE, None))

    threads = [
        threading.Thread(target=work, args=(part,), name=f"kinesis-slice-{i}", daemon=True)
        for i, part in enumerate(group.slices)
    ]
    for thread in threads:
        thread.start()
    try:
        running = len(threads)
        while running:
            try:
                kind, value = handed.get(timeout=PUT_WAIT_S)
            except queue.Empty:
                if not any(thread.is_alive() for thread in threads) and handed.empty():
                    message = f"batch read of {group.describe()}: a slice thread ended unheard"
                    raise RuntimeError(message) from None
                continue
            if kind is _Item.BATCH:
                yield value
            elif kind is _Item.FAILED:
                raise value
            else:
                running -= 1
    finally:
        stop.set()
        deadline = time.monotonic() + JOIN_TIMEOUT_S  # one bound for all the threads
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
            if thread.is_alive():
                log.error("batch read thread %s did not stop in %.0fs", thread.name, JOIN_TIMEOUT_S)
