"""The executor side of a batch: a round's cached partition, exactly the recorded ranges.

A batch's RDD maps each cached partition of the rounds it holds through :func:`deliver`.
A partition holds one group of shards, each as its :class:`~.executor_read.ShardRange`
followed by its records, in the order the round's task yielded them (the order its reads
finished), which the driver recorded with the ranges. A batch partition may read several
cached blocks one after another (a coalesced round). The batch checks each header against
the recorded one.

If a cached block was lost (an executor gone, a MEMORY_ONLY block that did not fit) or a
speculative copy of the round's task ran, the block is the task run again: its reads
may have started elsewhere (a LATEST iterator), gone further (new records since), and
finish in another order. From the first header that differs, the batch reads the rest of
that block (a block holds one header per plan of its group, each followed by as many
records as it says) and lines it up with the record by shard: a range that came back
exactly as recorded is delivered from the block, held until its turn if it came early
(at most :data:`MAX_HELD_BYTES` a block); every other recorded range of the block is
read again from Kinesis, concurrently (:mod:`.read_window`), and all are yielded in the
recorded order. The next block is compared again. A batch recomputes to the same
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


#: A recomputed block's ranges that came back as recorded but ahead of their turn are
#: held (their records) up to this many bytes of data a block; past it, they are read
#: again from Kinesis when their turn comes (a few ranges of a 64-shard block at most).
MAX_HELD_BYTES = 16 * 1024 * 1024


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
    block that is not what was recorded (a recomputed block) is lined up with the record
    from its first difference on (:func:`_recomputed`).
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
        in_batch = included is None or plan_index in included
        return in_batch and ranges[plan_index].records > 0

    def _block_records(block: Any, items: Iterator) -> Iterator:
        for position, plan_index in enumerate(block):
            header = next(items, None)
            if header is None or not _same_range(header, ranges[plan_index]):
                yield from _recomputed(block[position:], header, items)
                return
            chunk = itertools.islice(items, header.records)
            if wanted(plan_index):
                yield from chunk
            else:
                _consume(chunk)

    def _recomputed(targets: list, header: Optional[ShardRange], items: Iterator) -> Iterator:
        """The rest of a recomputed block (``header`` and what follows to the block's end:
        one header per plan of ``targets``), lined up with the record: the recorded ranges
        ``targets`` in that order, each from the block if it came back as recorded (held
        until its turn, within :data:`MAX_HELD_BYTES`), else read again from Kinesis."""
        slot = {ranges[i].shard_id: i for i in targets}
        held: dict = {}  # plan index -> its records, exactly the recorded range's
        room = MAX_HELD_BYTES
        for left in range(len(targets) - 1, -1, -1):
            if header is None:
                break  # no block at all (a recovered batch's empty partition)
            i = slot.get(header.shard_id)
            chunk = itertools.islice(items, header.records)
            fits = header.data_bytes <= room
            if i is not None and wanted(i) and fits and _same_range(header, ranges[i]):
                held[i] = list(chunk)
                room -= header.data_bytes
            else:
                _consume(chunk)
            header = next(items, None) if left else None
        again = _reread(plans, ranges, [i for i in targets if wanted(i) and i not in held])
        for i in targets:
            if i in held:
                yield from held.pop(i)
            elif wanted(i):
                _, handled = next(again)
                yield from handled

    return records


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
    """``(index, records)`` of the recorded ranges ``indexes``, read again from Kinesis by
    threads (at most :data:`~.executor_read.MAX_READ_THREADS` ranges in flight or held,
    :func:`~.read_window.read_window`), in that order, each through the message handler
    in this (the task's) thread. One after another, a lost block of a 64-shard group took
    64 reads' round trips."""
    reads = read_window(
        lambda i: read_range(plans[i], ranges[i]), indexes, MAX_READ_THREADS, True, "kinesis-reread"
    )
    for plan_index, raw in reads:
        plan = plans[plan_index]
        yield plan_index, apply_handler(plan.transform, raw, plan.stream_name, plan.shard_id)


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
