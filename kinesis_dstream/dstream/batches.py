"""What each batch holds: live rounds' partitions, and the log that survives a restart.

Batch ``t`` gets the ranges the ledger assigns to it; the RDD is the union of those
rounds' cached partitions. Its ranges (shard, first and last position, count) go into a
:class:`BatchLog` that rides in Spark's checkpoint (pickled with the ``transform``
function), so a restarted driver recomputes an old batch by reading exactly those ranges
again, as kinesis-asl's checkpointed block ranges do.

The log keeps what the DStream graph can still recompute: its input streams' remember
duration (window lengths, state checkpoint intervals), never less than
:data:`MIN_RETENTION_MS`.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Callable, NamedTuple, Optional

from ..retrieval.reader import StartPosition
from ..spark_internals import coalesced_parents
from .batch_read import deliver
from .executor_read import ShardRange
from .ledger import Ledger

#: Keep at least this much of the log whatever the graph says (Spark re-runs the batches
#: pending at a checkpoint, which lie within a few batch intervals of it).
MIN_RETENTION_MS = 60_000


class BatchRange(NamedTuple):
    """One shard's records in one batch, as the batch log keeps them: enough to read
    them again exactly. Pickled into Spark's checkpoint, so its module, name and fields
    are a stored format: a restarted driver reads the ones an older one wrote."""

    shard_id: str
    hash_key_range: Optional[tuple]
    first_esn: tuple  # (sequence number as int, sub-sequence number)
    last_esn: tuple
    records: int


def ranges_of(entries: list, rounds: dict) -> tuple:
    """The :class:`BatchRange` of every ledger entry holding records."""
    out = []
    for entry in entries:
        if not entry.records:
            continue
        plan = next(p for p in rounds[entry.round_id].plans if p.shard_id == entry.shard_id)
        out.append(
            BatchRange(
                entry.shard_id,
                plan.hash_key_range,
                (int(entry.first.sequence_number), entry.first.sub_sequence_number),
                (int(entry.last.sequence_number), entry.last.sub_sequence_number),
                entry.records,
            )
        )
    return tuple(out)


class BatchLog:
    """Batch time (ms) -> the ranges it held, oldest first; trimmed by retention.

    Not thread-safe: the receiver calls it under its lock.
    """

    def __init__(self, retention_ms: int = MIN_RETENTION_MS) -> None:
        self._entries: OrderedDict = OrderedDict()
        self.retention_ms = max(retention_ms, MIN_RETENTION_MS)

    def set_retention(self, remember_ms: Optional[int]) -> None:
        """Keep what the graph remembers (None: unknown, keep the minimum)."""
        self.retention_ms = max(remember_ms or 0, MIN_RETENTION_MS)

    def get(self, batch_ms: int) -> Optional[tuple]:
        return self._entries.get(batch_ms)

    def add(self, batch_ms: int, ranges: tuple) -> None:
        self._entries[batch_ms] = ranges
        self._entries.move_to_end(batch_ms)
        horizon = batch_ms - self.retention_ms
        while self._entries and next(iter(self._entries)) < horizon:
            self._entries.popitem(last=False)

    def restore(self, entries: dict) -> list:
        """Add entries from a checkpoint (never overwriting); returns their times."""
        for batch_ms, ranges in sorted(entries.items()):
            self._entries.setdefault(batch_ms, ranges)
        return sorted(entries)

    def snapshot(self) -> dict:
        return dict(self._entries)


class BatchBook:
    """Which rounds' partitions each batch holds, and the log of their ranges.

    Not thread-safe: the receiver calls it under its lock.
    """

    def __init__(self) -> None:
        self.live: dict = {}  # batch time (ms) -> [(Round, partitions)], until complete
        #: batch time (ms) -> the job times whose completions report it and have not yet
        #: come (itself, unless a window makes an output run jobs only every few batch
        #: times: then each output's next job time)
        self.owners: dict = {}
        #: live batch times one of whose job times failed: failed once all have come
        self.failed: set = set()
        self.newest_completed_ms: Optional[int] = None
        self.log = BatchLog()

    def take(self, batch_ms: int, ledger: Ledger, rounds: dict, owners_ms: tuple) -> tuple:
        """(parts, logged ranges) of batch ``batch_ms``, assigning it ranges if it is new.

        Asked again for a live time: the same parts. A time known only from the log (a
        restart): its ranges. A new time: the ranges the ledger assigns to it, complete
        once every job time of ``owners_ms`` has completed.
        """
        parts = self.live.get(batch_ms)
        logged = self.log.get(batch_ms)
        if parts is None and logged is None:
            entries = ledger.assign(batch_ms)
            parts = []
            for round_id in sorted({s.round_id for s in entries}):
                round_ = rounds[round_id]
                round_.batch_ms = batch_ms
                parts.append((round_, round_.partitions(entries)))
            if parts:
                self.live[batch_ms] = parts
                self.owners[batch_ms] = set(owners_ms)
                self.log.add(batch_ms, ranges_of(entries, rounds))
        return parts, logged

    def complete(self, job_ms: int, succeeded: bool) -> list:
        """Job time ``job_ms`` completed: ``[(batch time, parts, succeeded)]`` of the
        batches whose last job time it was; a batch succeeded if all of them did."""
        self.newest_completed_ms = max(self.newest_completed_ms or job_ms, job_ms)
        completed = []
        for batch_ms, pending in sorted(self.owners.items()):
            if job_ms not in pending:
                continue
            pending.discard(job_ms)
            if not succeeded:
                self.failed.add(batch_ms)
            if pending:
                continue  # another output's job time is still to come
            del self.owners[batch_ms]
            every_job_succeeded = batch_ms not in self.failed
            self.failed.discard(batch_ms)
            completed.append((batch_ms, self.live.pop(batch_ms), every_job_succeeded))
        return completed

    def stalled(self, after_ms: int) -> list:
        """Live batch times whose job time is ``after_ms`` older than the newest completed
        one: a completion Spark never reported (a lost listener event)."""
        newest = self.newest_completed_ms
        if newest is None:
            return []
        return sorted(t for t, pending in self.owners.items() if min(pending) < newest - after_ms)

    def restore(self, entries: dict, ledger: Ledger) -> None:
        """After a restart: the batches before it; live ranges go only to later times."""
        for batch_ms in self.log.restore(entries):
            ledger.note_batch_time(batch_ms)


def union_rdd(sc: Any, parts: list) -> Any:
    """The records of a live batch: each round's included partitions, in round order.

    A batch of one round with more cached partitions than the application has cores
    (``defaultParallelism``) reads them in that many tasks (a ``coalesce``, no shuffle: a
    task reads several cached blocks one after another), so it is one wave of tasks: a
    512-shard round is 8 cached blocks, 4 waves of tasks on 2 cores. Its blocks are
    different shards, so their order does not matter. A batch of several rounds keeps each
    round's partitions in round order (a shard's records span its rounds, and Spark's
    coalescer groups cached blocks by where they are, not in order).
    """
    if not parts:
        return sc.parallelize([], 1)
    if len(parts) > 1:
        return sc.union([_delivered(r, included) for r, included in parts])
    round_, included = parts[0]
    groups = round_.groups if round_.groups is not None else [[i] for i in range(len(round_.plans))]
    tasks = max(1, int(sc.defaultParallelism))
    if len(groups) <= tasks:
        return _delivered(round_, included)
    cached = round_.rdd.coalesce(tasks)
    # A coalesced partition holds its parents' blocks one after another; each is compared
    # with the record on its own (a lost block does not make its siblings be read again).
    blocks = [[groups[p] for p in parents] for parents in coalesced_parents(cached)]
    return cached.mapPartitionsWithIndex(
        deliver(round_.plans, round_.ranges, included, blocks), preservesPartitioning=True
    )


def _delivered(round_: Any, included: frozenset) -> Any:
    blocks = None if round_.groups is None else [[group] for group in round_.groups]
    return round_.rdd.mapPartitionsWithIndex(
        deliver(round_.plans, round_.ranges, included, blocks), preservesPartitioning=True
    )


def range_rdd(sc: Any, ranges: tuple, plan: Callable[..., Any]) -> Any:
    """Exactly the records of ``ranges``, read from Kinesis (a recovered batch).

    ``plan(shard_id, start, hash_key_range, records)`` builds each shard's FetchPlan.
    """
    if not ranges:
        return sc.parallelize([], 1)
    plans = [
        plan(
            r.shard_id,
            StartPosition.at_esn(str(r.first_esn[0]), r.first_esn[1]),
            r.hash_key_range,
            r.records,
        )
        for r in ranges
    ]
    recorded = [
        ShardRange(
            0, r.shard_id, r.records, r.first_esn, r.last_esn, 0, None, False, (), None, 0, 0.0
        )
        for r in ranges
    ]
    # Empty partitions: deliver() finds no range and reads each recorded one.
    return sc.parallelize([], len(plans)).mapPartitionsWithIndex(deliver(plans, recorded))
