"""Fetch rounds' bookkeeping on the driver: where each shard is read from, the rounds
still cached, and what each shard's :class:`~.executor_read.ShardRange` changed.

Every ``fetch_interval_s`` the receiver's round thread plans a round (every held,
ready, unblocked shard whose backoff and idle wait have passed, in groups of
``shards_per_task`` a task), runs it as a Spark job (:mod:`.round_job`) and records each
shard's outcome here:

- records (or the shard's end): the shard's :class:`Cursor` moves after them and the
  ledger gets a :class:`~.ledger.RangeEntry`;
- a transient failure (throttling or an unavailable service past the retry budget): the
  shard is retried on a later round after a backoff, counted and logged; the other
  shards' records in the round are kept. After :data:`MAX_TRANSIENT_FAILURES` in a row
  the failure is treated as permanent: a failure that does not heal fails loudly;
- a permanent failure (the message handler raised, the stream was deleted): the shard is
  blocked in the ledger (nothing at or past the failing record is checkpointed) and the
  error is kept as :attr:`FetchBook.failure`, which fails the next batch.

Under enhanced fan-out every read is a subscription, and Kinesis refuses a second one to
a shard within 5 s of the last: a shard is then read again ``min_read_gap_s`` after its
round was recorded (the subscription was made before that, so no executor is refused).

:class:`FetchBook` is not thread-safe: its owner, the
:class:`~.receiver_state.ReceiverState`, calls it under its one lock.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from ..backoff import Backoff
from ..errors import KinesisDStreamError, MessageHandlerError
from ..esn import ExtendedSequenceNumber
from ..retrieval.idle import IdlePolling, is_idle_read
from ..retrieval.reader import StartPosition
from ..retrieval.start import WHOLE_RECORD
from .executor_read import ShardRange
from .ledger import Ledger, RangeEntry, ShardPhase

log = logging.getLogger(__name__)

#: Consecutive transient failures of one shard before it fails the stream.
MAX_TRANSIENT_FAILURES = 20
#: Waits between a shard's failed rounds: up to 10 s, so 20 failures span minutes.
SHARD_RETRY_BACKOFF = Backoff(
    initial_delay_s=0.5, max_delay_s=10.0, max_attempts=MAX_TRANSIENT_FAILURES
)


class ShardReadError(KinesisDStreamError):
    """A shard could not be read for good; names stream, shard, position and cause."""


@dataclass(eq=False)
class Cursor:
    """Where the next round reads one held shard from (a new one per lease generation)."""

    generation: int
    position: StartPosition
    hash_key_range: Optional[tuple]
    iterator: Optional[str] = None
    children: tuple = ()
    failures: int = 0  # consecutive transient failures
    retry_at: float = 0.0  # monotonic time before which the shard is not read
    idle_reads: int = 0  # reads in a row that found nothing at the shard's tip
    idle_until: float = 0.0  # monotonic time before which an idle shard is not read
    next_read_at: float = 0.0  # fan-out: monotonic time of the shard's next subscription


@dataclass(eq=False)
class Round:
    """One fetch round: the ShardRanges read across shards in one Spark job, and its
    cached RDD."""

    round_id: int
    rdd: Any
    plans: list
    ranges: list  # the ShardRange each plan read, in plan order
    generations: list  # the lease generation each plan was made in
    records: int
    data_bytes: int
    batch_ms: Optional[int] = None
    completed_at: Optional[float] = None
    #: Plan indexes each partition of ``rdd`` holds, in the order its block holds them
    #: (the order its task yielded them; None: one plan each).
    groups: Optional[list] = None
    #: When the round was planned (the book's clock); None: when it is recorded.
    planned_at: Optional[float] = None

    def partitions(self, entries: list) -> frozenset:
        """Indexes of the plans holding ``entries`` (of this round)."""
        wanted = {s.shard_id for s in entries if s.round_id == self.round_id}
        return frozenset(i for i, p in enumerate(self.plans) if p.shard_id in wanted)


@dataclass
class FetchStats:
    rounds: int = 0
    records: int = 0
    data_bytes: int = 0
    rounds_skipped_full_buffer: int = 0
    transient_failures: int = 0
    #: Shard reads planned in rounds (one GetRecords each).
    shard_reads: int = 0
    #: Shard reads left out of rounds because the shard was idle (see retrieval.idle).
    idle_reads_skipped: int = 0
    last_millis_behind: dict = field(default_factory=dict)


class FetchBook:
    """Cursors of the held shards and the rounds still cached; guarded by the caller."""

    def __init__(
        self,
        stream_name: str,
        ledger: Ledger,
        clock: Callable[[], float],
        idle: Optional[IdlePolling] = None,
        min_read_gap_s: float = 0.0,
    ) -> None:
        self.stream_name = stream_name
        self.idle = idle  # None: every round reads every shard
        self.min_read_gap_s = min_read_gap_s  # between two reads of a shard (fan-out)
        self.ledger = ledger
        self.cursors: dict = {}  # shard id -> Cursor
        self.rounds: dict = {}  # round id -> Round, until unpersisted
        self.stats = FetchStats()
        #: The first permanent failure: every later batch fails with it.
        self.failure: Optional[KinesisDStreamError] = None
        self._clock = clock

    def open(self, shard_id: str, cursor: Cursor) -> None:
        self.cursors[shard_id] = cursor

    def close(self, shard_id: str) -> list:
        """The lease is gone: forget the cursor; returns rounds now holding nothing."""
        self.cursors.pop(shard_id, None)
        dropped = {s.round_id for s in self.ledger.lose(shard_id)}
        empty = []
        for round_id in dropped:
            round_ = self.rounds.get(round_id)
            if round_ is not None and round_.batch_ms is None and not self._has_unassigned(round_):
                empty.append(self.rounds.pop(round_id))
        return empty

    def _has_unassigned(self, round_: Round) -> bool:
        return any(s.round_id == round_.round_id for s in self.ledger.unassigned())

    def now(self) -> float:
        """The book's clock (monotonic seconds)."""
        return self._clock()

    def buffered(self) -> tuple:
        """(records, bytes) fetched whose batches have not completed."""
        waiting = [r for r in self.rounds.values() if r.completed_at is None]
        return sum(r.records for r in waiting), sum(r.data_bytes for r in waiting)

    def readable(self, ready: set) -> list:
        """(shard id, cursor) of every shard the round being planned reads, sorted: only
        shards whose leases are held and ready now (``ready``), whatever this book last
        heard of them.

        Called once per round: an idle shard left out is counted here.
        """
        now = self._clock()
        for shard_id in ready:
            self.ledger.set_ready(shard_id)
        shards = []
        for shard_id, cursor in sorted(self.cursors.items()):
            if shard_id not in ready or max(cursor.retry_at, cursor.next_read_at) > now:
                continue
            if self.ledger.phase(shard_id) is not ShardPhase.READING:
                continue
            if cursor.idle_until > now:
                self.stats.idle_reads_skipped += 1
                continue
            shards.append((shard_id, cursor))
        return shards

    def record(self, round_: Round) -> bool:
        """Take in a round's outcomes. True if it holds anything a batch must deliver."""
        keep = False
        for plan, read, generation in zip(round_.plans, round_.ranges, round_.generations):
            cursor = self.cursors.get(plan.shard_id)
            if cursor is None or cursor.generation != generation:
                continue  # the lease was lost (and maybe regained) while the round ran
            self.stats.last_millis_behind[plan.shard_id] = read.millis_behind_latest
            if self.min_read_gap_s:
                cursor.next_read_at = self._clock() + self.min_read_gap_s
            if read.error_kind is not None:
                self._failed(plan.shard_id, cursor, read)
                continue
            cursor.failures = 0
            cursor.iterator = read.next_iterator
            self._pace(cursor, read, round_.planned_at)
            consumed = read.resume_after or (read.last_esn if read.records else None)
            if consumed is not None:
                cursor.position = _next_start(*consumed)
            if read.shard_ended:
                cursor.children = read.child_shard_ids
            try:
                keep |= self.ledger.add(_entry(round_.round_id, generation, read))
            except ValueError as exc:  # a range out of order: a bug or a broken server
                self._block(plan.shard_id, cursor, str(exc), None)
        self.stats.rounds += 1
        self.stats.shard_reads += len(round_.plans)
        self.stats.records += round_.records
        self.stats.data_bytes += round_.data_bytes
        if keep:
            self.rounds[round_.round_id] = round_
        return keep

    def _pace(self, cursor: Cursor, read: ShardRange, planned_at: Optional[float]) -> None:
        """An idle read makes the shard wait (in time, whatever the rounds' pace);
        anything else has it read every round."""
        if self.idle is not None and is_idle_read(
            read.records, read.millis_behind_latest, read.shard_ended
        ):
            cursor.idle_reads += 1
            read_at = self._clock() if planned_at is None else planned_at
            cursor.idle_until = self.idle.next_read_at(read_at, cursor.idle_reads)
        else:
            cursor.idle_reads = 0
            cursor.idle_until = 0.0

    def _failed(self, shard_id: str, cursor: Cursor, read: ShardRange) -> None:
        cursor.idle_reads = 0
        cursor.idle_until = 0.0
        cursor.iterator = read.next_iterator
        if read.error_kind == "transient" and cursor.failures + 1 < MAX_TRANSIENT_FAILURES:
            self.stats.transient_failures += 1
            delay = SHARD_RETRY_BACKOFF.ceiling_s(cursor.failures)
            cursor.failures += 1
            cursor.retry_at = self._clock() + delay
            log.warning(
                "shard %s of stream %s: read failed (%d in a row), retrying in %.1fs: %s",
                shard_id,
                self.stream_name,
                cursor.failures,
                delay,
                read.error,
            )
            return
        if read.error_kind == "transient":
            cause = f"{MAX_TRANSIENT_FAILURES} reads in a row failed; the last: {read.error}"
        else:
            cause = read.error or "unknown error"
        self._block(shard_id, cursor, cause, read.error_type)

    def _block(self, shard_id: str, cursor: Cursor, cause: str, error_type: Optional[str]) -> None:
        """The shard failed for good: block it, and fail every later batch."""
        where = f"stream {self.stream_name!r}, shard {shard_id}, after position {_after(cursor)}"
        error_class = MessageHandlerError if error_type == "MessageHandlerError" else ShardReadError
        error = error_class(f"{where}: {cause}")
        self.ledger.block(shard_id, str(error))
        log.error("%s; nothing at or past it is checkpointed", error)
        if self.failure is None:
            self.failure = error


def _next_start(sequence_number: int, sub_sequence_number: int) -> StartPosition:
    """Where the shard's next read starts: AFTER a raw record consumed whole, so that a
    subscription does not send it again (its first event then holds only what is new, or a
    closed shard's end); else AT it, dropping the user records already read."""
    if sub_sequence_number == WHOLE_RECORD:
        return StartPosition.after_sequence_number(str(sequence_number))
    return StartPosition.after_checkpoint(str(sequence_number), sub_sequence_number)


def _after(cursor: Cursor) -> str:
    position = cursor.position
    if position.drop_through is not None:
        seq, sub = position.drop_through
        return str(ExtendedSequenceNumber(str(seq), sub))
    if position.timestamp is not None:
        return f"{position.iterator_type} {position.timestamp.isoformat()}"
    return position.sequence_number or position.iterator_type


def _entry(round_id: int, generation: int, read: ShardRange) -> RangeEntry:
    def esn(value: Optional[tuple]) -> Optional[ExtendedSequenceNumber]:
        return None if value is None else ExtendedSequenceNumber(str(value[0]), value[1])

    return RangeEntry(
        round_id,
        read.shard_id,
        generation,
        read.records,
        esn(read.first_esn),
        esn(read.last_esn),
        ends_shard=read.shard_ended,
    )
