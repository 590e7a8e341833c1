"""The executor side of a batch: a round's cached partition, exactly the recorded ranges.

A batch's RDD maps each cached partition of the rounds it holds through :func:`deliver`.
A partition holds one group of shards, each as its :class:`~.executor_read.ShardRange`
followed by its records, in the order the round's task yielded them, which the driver
recorded with the ranges. A batch partition may read several cached blocks one after
another (a coalesced round). The batch checks each header against the recorded one. If a
cached block was lost and Spark re-ran the round's task, the re-read may have started
elsewhere (a LATEST iterator), gone further (new records since) or finished its reads in
another order: from the first header that differs, the batch skips the rest of that
block (a block holds one header per plan of its group, each followed by as many records
as it says) and reads the block's remaining recorded ranges again from Kinesis instead,
concurrently and yielded in the recorded order; the next block is compared again, so an
intact block after a lost one is taken from the cache. A batch recomputes to the same
records in the same order, never to "whatever is there now".
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Iterator
from typing import Any, Callable, Optional

from ..executor_heap import freeze_heap_once
from ..retrieval.reader import StartPosition, apply_handler
from ..retrieval.replay import replay_range
from .executor_read import MAX_READ_THREADS, FetchPlan, ShardRange
from .read_window import read_window

log = logging.getLogger(__name__)


def deliver(
    plans: list,
    ranges: list,
    included: Optional[frozenset] = None,
    blocks: Optional[list] = None,
) -> Callable[[int, Iterator], Iterator]:
    """mapPartitionsWithIndex function of a batch: the round's records, exactly its range.

    Partition ``p`` holds the cached blocks ``blocks[p]`` one after another (default:
    plan ``p`` alone, one block). A block is the list of the plans its round task read,
    in the order the task yielded them, each as its :class:`ShardRange` then that many
    records. ``ranges`` are the ones the driver recorded, a plan each. ``included`` names
    the plans (shards) the batch holds; the others (a lost lease's) deliver nothing. A
    block that is not what was recorded (a recomputed block) reads the recorded ranges
    from its first difference on again from Kinesis (:func:`_reread`).
    """

    def records(index: int, items: Iterator) -> Iterator:
        freeze_heap_once()  # a worker that never built a client: what the imports left
        held = blocks[index] if blocks is not None else ((index,),)
        if included is not None and all(included.isdisjoint(block) for block in held):
            _consume(items)  # nothing of this partition is in the batch
            return
        for block in held:
            yield from _block_records(block, items)
        # Read the input to its end: PySpark reuses a Python worker only if the task read
        # its input's end marker; stopping after the last record costs a new worker (a
        # fork and the imports, about 0.3 s on 2 cores) per task of every batch.
        _consume(items)

    def wanted(plan_index: int) -> bool:
        return included is None or plan_index in included

    def _block_records(block: Any, items: Iterator) -> Iterator:
        for position, plan_index in enumerate(block):
            header = next(items, None)
            if header is None or not _same_range(header, ranges[plan_index]):
                # A recomputed block: what it holds from here on is not the record. Skip
                # to its end only (this header's records, then the block's other
                # headers' each), so the blocks after it are compared again.
                if header is not None:
                    _skip_block(items, header, len(block) - position - 1)
                rest = [i for i in block[position:] if wanted(i) and ranges[i].records]
                yield from _reread(plans, ranges, rest)
                return
            chunk = itertools.islice(items, header.records)
            if wanted(plan_index):
                yield from chunk
            else:
                _consume(chunk)

    return records


def _skip_block(items: Iterator, header: ShardRange, headers_left: int) -> None:
    """Read past ``header``'s records and the ``headers_left`` shards after it."""
    _consume(itertools.islice(items, header.records))
    for _ in range(headers_left):
        following = next(items, None)
        if following is None:
            return
        _consume(itertools.islice(items, following.records))


def _consume(chunk: Iterator) -> None:
    for _ in chunk:
        pass


def _same_range(header: ShardRange, expected: ShardRange) -> bool:
    return (header.shard_id, header.first_esn, header.last_esn, header.records) == (
        expected.shard_id,
        expected.first_esn,
        expected.last_esn,
        expected.records,
    )


def _reread(plans: list, ranges: list, indexes: list) -> Iterator:
    """The records of the recorded ranges ``indexes``, read again from Kinesis by threads
    (at most :data:`~.executor_read.MAX_READ_THREADS` ranges in flight or waiting to be
    yielded, :func:`~.read_window.read_window`) and yielded in that order, each through the
    message handler in this (the task's) thread. One after another, a lost block of a
    64-shard group took 64 reads' round trips."""
    reads = read_window(
        lambda i: read_range(plans[i], ranges[i]), indexes, MAX_READ_THREADS, True, "kinesis-reread"
    )
    for plan_index, raw in reads:
        plan = plans[plan_index]
        yield from apply_handler(plan.transform, raw, plan.stream_name, plan.shard_id)


def read_range(plan: FetchPlan, expected: ShardRange) -> list:
    """Exactly the records from ``expected.first_esn`` to ``expected.last_esn``, as the
    reader gives them (before the message handler)."""
    assert expected.first_esn is not None and expected.last_esn is not None
    log.warning(
        "re-reading shard %s of %s from %s to %s (%d records): its cached block was lost",
        plan.shard_id,
        plan.stream_name,
        expected.first_esn,
        expected.last_esn,
        expected.records,
    )
    first_seq, first_sub = expected.first_esn
    # GetRecords even under fan-out: a live round may hold the shard's subscription.
    reader = plan.reader(
        start=StartPosition.at_esn(str(first_seq), first_sub), with_handler=False, polling=True
    )
    chunks = replay_range(
        reader,
        expected.last_esn,
        expected.records,
        f"shard {plan.shard_id} of stream {plan.stream_name!r} from {expected.first_esn} "
        f"to {expected.last_esn}",
        max_records=plan.config.max_records_per_call,
    )
    return [record for chunk in chunks for record in chunk]
