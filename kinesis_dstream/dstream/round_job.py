"""A fetch round as a Spark job: shards grouped into tasks, the RDD cached, ranges back.

The driver's :class:`~.round_thread.RoundThread` decides what a round reads; this module
runs it (:func:`run_round`) and frees it (:func:`unpersist`). Only each shard's
:class:`~.executor_read.ShardRange` reaches the driver; the records stay cached on the
executors until the batches holding them complete.
"""

from __future__ import annotations

import functools
import logging
from typing import Any

from ..spark_internals import count_in_jvm
from .executor_read import fetch
from .round_book import Round

log = logging.getLogger(__name__)


def group_plans(count: int, shards_per_task: int) -> list:
    """Plan indexes per partition: consecutive groups of at most ``shards_per_task``."""
    return [
        list(range(i, min(i + shards_per_task, count))) for i in range(0, count, shards_per_task)
    ]


def run_round(
    sc: Any,
    round_id: int,
    plans: list,
    generations: list,
    ranges: Any,
    storage_level: Any,
    shards_per_task: int = 1,
) -> Round:
    """Run a round as a Spark job, cache its RDD, and collect only its shard ranges.

    ``ranges`` is the receiver's accumulator: each task adds its shards' ranges there, so
    the driver learns them, and the order each partition holds them in, from the job
    that caches the data, with no second job.
    Each partition holds one group of plans (one element: the group's list), so Spark's
    slicing of the collection puts exactly that group in that partition.
    """
    groups = group_plans(len(plans), max(1, shards_per_task))
    elements = [[plans[i] for i in group] for group in groups]
    rdd = sc.parallelize(elements, len(elements)).mapPartitions(
        functools.partial(fetch, ranges=ranges)
    )
    rdd.persist(storage_level)
    count_in_jvm(rdd)  # computes and caches the round in the JVM; no Python pass over it
    # In the order the tasks yielded them (a task adds each range as it yields it); a
    # range reported twice (a task run again) counts where it was last reported.
    mine = [r for r in ranges.value if r.round_id == round_id]
    ranges.value = []  # a recomputed old round may add ranges: they are ignored
    by_shard = {r.shard_id: r for r in mine}
    missing = [p.shard_id for p in plans if p.shard_id not in by_shard]
    if missing:
        raise RuntimeError(f"round {round_id}: no range reported for shards {missing}")
    rank = {r.shard_id: n for n, r in enumerate(mine)}
    ordered = [by_shard[p.shard_id] for p in plans]
    # Each partition's plans in the order its block holds them: what a batch expects.
    groups = [sorted(group, key=lambda i: rank[plans[i].shard_id]) for group in groups]
    return Round(
        round_id,
        rdd,
        plans,
        ordered,
        generations,
        records=sum(r.records for r in ordered),
        data_bytes=sum(r.data_bytes for r in ordered),
        groups=groups,
    )


def unpersist(round_: Round) -> None:
    """Free a round's cached blocks (nothing if the SparkContext is already gone)."""
    try:
        round_.rdd.unpersist()
    except Exception:  # the SparkContext may already be gone
        log.debug("could not unpersist round %d", round_.round_id, exc_info=True)
