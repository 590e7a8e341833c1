"""Several shard ranges in one read task (Databricks' ``shardsPerTask``).

A Spark task per shard costs a task launch and a Python worker round trip even when the
shard has a few records; on a stream of many quiet shards that cost dominates. A
:class:`GroupPartition` holds up to ``shardsPerTask`` ranges: the task reads their fresh
parts concurrently (one thread per range, each recording its own end, as a task of one
range would), then yields them one after another. Every range keeps its own end record, so
replays and recovery are exactly those of single ranges.

Without ``shardsPerTask`` the batch's ranges are grouped by what the peeks said: a range
of a shard near its tip (at most :data:`AUTO_GROUP_LAG_MS` behind at its last peek: a
trickle since the last batch) joins a group, up to :data:`AUTO_SHARDS_PER_TASK` a task;
a shard further behind (catching up, its range may be large) or of unknown lag (a replay)
shares a task with at most one other, :data:`AUTO_BACKLOG_RANGES_PER_TASK`. Either kind
makes at least :data:`AUTO_MIN_TASKS` tasks when it has that many ranges.

Why two backlog ranges a task: a range of a backlog spends most of its read waiting for
Kinesis' pace (5 calls a second per shard: a 50,000-record range is six calls, a second),
its decoding a small part of it, so a task reads two in the time one takes, within one
core. The tasks of a batch run in waves when there are more of them than task slots, each
wave waiting for the last: four one-range tasks on two slots read a 200,000-record
backlog over 4 shards in two waves, two two-range tasks in one (measured with
bench_structured on the benchmark server, the ranges planned as behind, 14-18 s: addBatch
2.28-2.32 s against 1.31-1.33 s, the warm query 3.64-3.65 s against 2.54-2.55 s). The
slots are not known where the batch is planned (the source runner is told nothing of the
cluster), so the default is what costs little on a large cluster (the same read time;
half the tasks for the stage's downstream work) and spares a small one its waves;
``shardsPerTask`` sets it.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any, Optional

from pyspark.sql.datasource import InputPartition

from ..ends.store import EndStore
from .partition import SPILL_BYTES, RangePartition, ReadSettings, deliver, discard, prepare

#: Threads one task reads its ranges with.
MAX_READ_THREADS = 16
#: Data bytes a range may read when fetchBufferSize is shared by very many ranges.
MIN_RANGE_BYTES = 1024 * 1024
#: The default grouping (see the module doc).
AUTO_GROUP_LAG_MS = 10_000
#: A task's memory is bounded by SPILL_BYTES whatever its ranges, but "near the tip" may
#: be busy too and a task's ranges share one Python process: 16 a task made 32 tasks (16
#: waves on 2 cores) of a batch over 512 quiet shards, 128 would make 4 on any cluster.
AUTO_SHARDS_PER_TASK = 64
#: Ranges of shards behind (or of unknown lag) a task: see the module doc.
AUTO_BACKLOG_RANGES_PER_TASK = 2
#: At least this many tasks of each kind (when it has that many ranges): two task slots
#: are the smallest cluster, and more tasks than slots run in waves.
AUTO_MIN_TASKS = 2


@dataclass(frozen=True)
class GroupPartition(InputPartition):
    """One task reading several shard ranges."""

    parts: tuple


def plan_tasks(
    parts: list,
    shards_per_task: Optional[int],
    fetch_buffer_bytes: Any = None,
    lag_ms: Optional[Mapping] = None,
) -> list:
    """The batch's input partitions: ranges alone, or grouped ``shards_per_task`` a task.

    ``shards_per_task`` None: the default grouping by ``lag_ms`` ((stream, shard) ->
    MillisBehindLatest at the last peek; see the module doc). ``fetch_buffer_bytes``
    (Databricks' fetchBufferSize) is shared equally by the ranges of the batch as each
    range's byte bound.
    """
    if fetch_buffer_bytes is not None and parts:
        share = max(MIN_RANGE_BYTES, fetch_buffer_bytes // len(parts))
        parts = [replace(p, max_bytes=share) for p in parts]
    if shards_per_task is not None:
        return _groups(list(parts), shards_per_task)
    lags = lag_ms or {}
    near: list = []
    far: list = []
    for part in parts:
        lag = lags.get((part.stream_name, part.shard_id))
        (near if lag is not None and lag <= AUTO_GROUP_LAG_MS else far).append(part)
    return _even_groups(far, AUTO_BACKLOG_RANGES_PER_TASK) + _even_groups(
        near, AUTO_SHARDS_PER_TASK
    )


def _even_groups(parts: list, most: int) -> list:
    """``parts`` in consecutive groups of nearly equal size: at least
    :data:`AUTO_MIN_TASKS` groups (when there are that many parts), at most ``most``
    parts a group."""
    count = len(parts)
    if count <= AUTO_MIN_TASKS:
        return list(parts)
    tasks = max(AUTO_MIN_TASKS, math.ceil(count / most))
    bounds = [count * i // tasks for i in range(tasks + 1)]
    return [GroupPartition(tuple(parts[a:b])) for a, b in zip(bounds, bounds[1:])]


def _groups(parts: list, size: int) -> list:
    if size <= 1:
        return parts
    return [GroupPartition(tuple(parts[i : i + size])) for i in range(0, len(parts), size)]


def read_task(partition: Any, store: EndStore, settings: ReadSettings) -> Iterator[Any]:
    """The arrow batches of one task: one range, or a group read concurrently."""
    if isinstance(partition, RangePartition):
        yield from deliver(partition, settings, prepare(partition, store, settings))
        return
    parts = partition.parts
    threads = min(len(parts), MAX_READ_THREADS)
    with ThreadPoolExecutor(threads, thread_name_prefix="kinesis-range") as pool:
        spill = SPILL_BYTES // len(parts)  # the task's memory bound, shared by its ranges
        futures = [pool.submit(prepare, part, store, settings, spill) for part in parts]
        prepared = []
        failure = None
        for future in futures:  # every range finishes (or fails) before anything yields
            try:
                prepared.append(future.result())
            except BaseException as exc:
                failure = failure or exc
                prepared.append(None)
    if failure is not None:
        for item in prepared:
            discard(item)
        raise failure
    for index, (part, item) in enumerate(zip(parts, prepared)):
        try:
            yield from deliver(part, settings, item)
        except BaseException:
            for rest in prepared[index + 1 :]:
                discard(rest)
            raise
