"""The shard ledger: which records may be checkpointed, as pure logic (no Spark, no AWS).

Per shard, the records fetched form an ordered queue of *ranges* (a
:class:`RangeEntry` for each :class:`~.executor_read.ShardRange` a round read). A range
is handed to exactly one batch, and its batch completes with every
output successful, or fails, or never reports (a lost listener event). The ledger rule:

    a shard's checkpoint advances only over the contiguous prefix of ranges, from the
    oldest, whose batches completed with every output successful.

So a batch that completes out of order (``spark.streaming.concurrentJobs`` > 1), a
completion that never arrives, and a batch time nobody knows (after a restart) can never
move a checkpoint past an earlier range that has not succeeded. ``SHARD_END`` is a target
only once every range of the shard, including the one that reached the end, succeeded.

A lease that is lost ends its shard's *generation*: the ranges not yet handed to Spark are
dropped (returned, so the caller can free them), and completions of ranges already handed
out are ignored for checkpointing. A regained lease opens a new generation that starts
from the lease's checkpoint, so nothing of the old one can leak into it.

Each shard has an explicit :class:`ShardPhase`; transitions go through :meth:`_move`,
which refuses any not in :data:`TRANSITIONS`. The phase a shard starts in while a parent
shard is unfinished is the lease's (:class:`~..leases.held.LeaseState`, which owns it).
The ledger is not thread-safe: its owner (:class:`~.receiver_state.ReceiverState`) calls
it under one lock and makes no I/O while holding it.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Optional

from ..esn import ESN_SHARD_END, ExtendedSequenceNumber
from ..leases.held import LeaseState


class ShardPhase(enum.Enum):
    """A held shard's phase in the ledger (one lease generation)."""

    #: The lease's state of that name (leases own it): until the round thread sees the
    #: lease READY, the shard is not read.
    WAITING_ON_PARENTS = LeaseState.WAITING_ON_PARENTS.value
    READING = "reading"
    ENDED = "ended"  # the shard's end was read; its last ranges may still be in batches
    BLOCKED = "blocked"  # a batch holding its records failed, or a read failed for good
    FINISHED = "finished"  # SHARD_END was checkpointed
    LOST = "lost"  # the lease went to another worker or expired


P = ShardPhase
#: Every allowed phase change. LOST and FINISHED are final for a generation.
TRANSITIONS = {
    P.WAITING_ON_PARENTS: {P.READING, P.LOST},
    P.READING: {P.ENDED, P.BLOCKED, P.LOST},
    P.ENDED: {P.BLOCKED, P.FINISHED, P.LOST},  # BLOCKED: a batch of its ranges failed
    P.BLOCKED: {P.LOST},
    P.FINISHED: set(),
    P.LOST: set(),
}


class RangeState(enum.Enum):
    """Where a range is on its way through batches."""

    FETCHED = "fetched"  # not yet in a batch
    ASSIGNED = "assigned"  # in a batch that has not completed
    SUCCEEDED = "succeeded"
    FAILED = "failed"


@dataclass(frozen=True)
class RangeEntry:
    """The ledger's entry for one :class:`~.executor_read.ShardRange` (a shard's records
    read in one round): enough to read them again exactly, and its batch's outcome."""

    round_id: int
    shard_id: str
    generation: int
    records: int
    first: Optional[ExtendedSequenceNumber] = None
    last: Optional[ExtendedSequenceNumber] = None
    ends_shard: bool = False
    state: RangeState = RangeState.FETCHED
    batch_ms: Optional[int] = None


@dataclass
class _ShardBook:
    generation: int
    phase: ShardPhase
    checkpoint: ExtendedSequenceNumber
    ranges: list = field(default_factory=list)  # oldest first; popped once checkpointed
    blocked_reason: Optional[str] = None


class IllegalTransition(RuntimeError):
    """A phase change the transition table does not allow: a bug, never expected."""


class Ledger:
    """Ranges per shard, batches per time, and the checkpoint each shard may reach."""

    def __init__(self) -> None:
        self._books: dict = {}  # shard id -> _ShardBook (current generation only)
        self._generations: dict = {}  # shard id -> last generation opened
        #: Newest batch time that was given ranges, or is known from a restored log.
        self._newest_batch_ms: Optional[int] = None

    # -- shards --------------------------------------------------------------------------

    def open_shard(
        self, shard_id: str, checkpoint: ExtendedSequenceNumber, ready: bool = True
    ) -> int:
        """A lease was gained: start a new generation from ``checkpoint``. Returns it."""
        generation = self._generations.get(shard_id, 0) + 1
        self._generations[shard_id] = generation
        phase = P.READING if ready else P.WAITING_ON_PARENTS
        self._books[shard_id] = _ShardBook(generation, phase, checkpoint)
        return generation

    def set_ready(self, shard_id: str) -> None:
        """Every parent of the shard is finished: it may be read now."""
        book = self._books.get(shard_id)
        if book is not None and book.phase is P.WAITING_ON_PARENTS:
            self._move(shard_id, book, P.READING)

    def lose(self, shard_id: str) -> list:
        """The lease is gone: drop the ranges not yet in a batch and return them."""
        book = self._books.pop(shard_id, None)
        if book is None:
            return []
        self._move(shard_id, book, P.LOST)
        return [s for s in book.ranges if s.state is RangeState.FETCHED]

    def block(self, shard_id: str, reason: str) -> None:
        """Stop the shard's checkpoint where it is (a read failed for good)."""
        book = self._books.get(shard_id)
        if book is not None and book.phase is P.READING:
            self._move(shard_id, book, P.BLOCKED)
            book.blocked_reason = reason

    def phase(self, shard_id: str) -> Optional[ShardPhase]:
        book = self._books.get(shard_id)
        return None if book is None else book.phase

    def generation(self, shard_id: str) -> Optional[int]:
        book = self._books.get(shard_id)
        return None if book is None else book.generation

    def shards(self, phase: Optional[ShardPhase] = None) -> list:
        """Shard ids held (in ``phase``, if given), sorted."""
        return sorted(k for k, b in self._books.items() if phase is None or b.phase is phase)

    def blocked(self) -> dict:
        """Shard id -> why it is blocked, for every blocked shard."""
        return {k: b.blocked_reason for k, b in sorted(self._books.items()) if b.phase is P.BLOCKED}

    def _move(self, shard_id: str, book: _ShardBook, to: ShardPhase) -> None:
        if to not in TRANSITIONS[book.phase]:
            raise IllegalTransition(
                f"shard {shard_id}: no transition {book.phase.name} -> {to.name}"
            )
        book.phase = to

    # -- ranges and batches --------------------------------------------------------------

    def add(self, new: RangeEntry) -> bool:
        """Record a fetched range. False (and nothing kept) if its generation is over,
        the shard is not being read, or it holds nothing (no records, not the end)."""
        book = self._books.get(new.shard_id)
        if book is None or book.generation != new.generation:
            return False
        if book.phase is not P.READING or not (new.records or new.ends_shard):
            return False
        previous = book.ranges[-1].last if book.ranges else book.checkpoint
        if new.records and new.first is not None and new.first <= previous:
            raise ValueError(
                f"shard {new.shard_id}: range of round {new.round_id} starts at "
                f"{new.first}, not after {previous}"
            )
        book.ranges.append(replace(new, state=RangeState.FETCHED, batch_ms=None))
        if new.ends_shard:
            self._move(new.shard_id, book, P.ENDED)
        return True

    def note_batch_time(self, batch_ms: int) -> None:
        """A batch time already taken elsewhere (a restored batch log): live ranges go
        only to later times."""
        if self._newest_batch_ms is None or batch_ms > self._newest_batch_ms:
            self._newest_batch_ms = batch_ms

    def assign(self, batch_ms: int) -> list:
        """Hand every fetched range to batch ``batch_ms``; returns them, oldest first.

        A time at or before one already assigned or logged gets nothing: live records
        never go back in time (a recomputed batch must hold what it held before).
        """
        if self._newest_batch_ms is not None and batch_ms <= self._newest_batch_ms:
            return []
        self._newest_batch_ms = batch_ms
        assigned = []
        for book in self._books.values():
            for n, entry in enumerate(book.ranges):
                if entry.state is RangeState.FETCHED:
                    book.ranges[n] = replace(entry, state=RangeState.ASSIGNED, batch_ms=batch_ms)
                    assigned.append(book.ranges[n])
        return sorted(assigned, key=lambda s: (s.round_id, s.shard_id))

    def complete(self, batch_ms: int, succeeded: bool) -> list:
        """Batch ``batch_ms`` ended. Returns the shards it blocked (failed batches)."""
        blocked = []
        state = RangeState.SUCCEEDED if succeeded else RangeState.FAILED
        for shard_id, book in self._books.items():
            for n, entry in enumerate(book.ranges):
                if entry.batch_ms == batch_ms and entry.state is RangeState.ASSIGNED:
                    book.ranges[n] = replace(entry, state=state)
                    if not succeeded and book.phase is not P.BLOCKED:
                        self._move(shard_id, book, P.BLOCKED)
                        first = entry.first or entry.last
                        book.blocked_reason = (
                            f"batch {batch_ms} failed: records from {first} are not checkpointed"
                        )
                        blocked.append(shard_id)
        return blocked

    # -- checkpoints ---------------------------------------------------------------------

    def targets(self) -> dict:
        """Shard id -> (generation, position) for every shard whose checkpoint may move.

        The position is the last record of the contiguous successful prefix, or
        SHARD_END when that prefix includes the range that reached the shard's end.
        """
        out = {}
        for shard_id, book in self._books.items():
            target = None
            for entry in book.ranges:
                if entry.state is not RangeState.SUCCEEDED:
                    break
                if entry.ends_shard:
                    target = ESN_SHARD_END
                    break
                if entry.last is not None:
                    target = entry.last
            if target is not None and target > book.checkpoint:
                out[shard_id] = (book.generation, target)
        return out

    def checkpointed(
        self, shard_id: str, generation: int, position: ExtendedSequenceNumber
    ) -> None:
        """``position`` was written for the shard: forget the ranges it covers."""
        book = self._books.get(shard_id)
        if book is None or book.generation != generation or position <= book.checkpoint:
            return
        book.checkpoint = position
        if position.is_shard_end:
            self._move(shard_id, book, P.FINISHED)
            del self._books[shard_id]
            return
        while book.ranges and book.ranges[0].state is RangeState.SUCCEEDED:
            last = book.ranges[0].last
            if last is None or last > position:
                break
            book.ranges.pop(0)

    def checkpoint(self, shard_id: str) -> Optional[ExtendedSequenceNumber]:
        book = self._books.get(shard_id)
        return None if book is None else book.checkpoint

    # -- introspection -------------------------------------------------------------------

    def ranges(self, shard_id: str) -> list:
        book = self._books.get(shard_id)
        return [] if book is None else list(book.ranges)

    def unassigned(self) -> Iterable[RangeEntry]:
        for book in self._books.values():
            yield from (s for s in book.ranges if s.state is RangeState.FETCHED)

    def waiting_batches(self) -> set:
        """Batch times holding ranges that have not completed (for stall warnings)."""
        return {
            s.batch_ms
            for book in self._books.values()
            for s in book.ranges
            if s.state is RangeState.ASSIGNED
        }
