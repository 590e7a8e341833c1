"""One receiver's state: what was read, what each batch holds, what may be checkpointed.

:class:`ReceiverState` owns a receiver's :class:`~.ledger.Ledger`, its
:class:`~.round_book.FetchBook` (cursors, cached rounds, fetch counters), its
:class:`~.batches.BatchBook` with the batch log, and the one lock guarding them. Each
operation is named for what happened (a shard opened or closed, a round planned or
recorded, a batch opened or completed, checkpoints written, ...) and moves every piece
it concerns together, under the lock. Nothing else takes that lock or reaches the
pieces: the receiver, its :class:`~.round_thread.RoundThread` and its
:class:`~.checkpointer.Checkpointer` call operations.

No operation makes an AWS or Spark call: what needs one (a round to unpersist, the
checkpoints to write) is returned, and the caller does it after the lock is released,
so a lease renewal or a Spark job never waits on this lock.
"""

from __future__ import annotations

import dataclasses
import itertools
import threading
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Optional

from ..esn import ExtendedSequenceNumber
from ..retrieval.idle import IdlePolling
from ..retrieval.reader import StartPosition
from .batches import BatchBook
from .ledger import Ledger, ShardPhase
from .round_book import Cursor, FetchBook, FetchStats, Round


@dataclass(frozen=True)
class PlannedRound:
    """What a round reads: its id, when it was planned, and each shard's cursor (a copy
    taken under the lock: the round thread reads it without one)."""

    round_id: int
    planned_at: float  # the state's clock (monotonic seconds)
    shards: tuple  # (shard id, Cursor), sorted by shard id


@dataclass(frozen=True)
class CompletedBatch:
    """What a batch's completion changed, for the caller to act on outside the lock."""

    #: ``[(batch time, [(Round, partitions)])]``: the batch times the job reported.
    done: list
    #: Shards a failed batch blocked (their checkpoints stop where they are).
    blocked: list
    #: Rounds no batch needs any more: unpersist them.
    expired: list
    #: Shards held when the batch completed.
    shards_held: int
    #: Whether every job time of every batch in ``done`` succeeded.
    succeeded: bool = True


class ReceiverState:
    """The ledger, fetch book, batch book and batch log of one receiver, and their lock.

    Thread-safe: every public method takes the lock for its whole change, and none
    makes I/O. ``retain_s`` is how long a completed round's cache is kept (a batch
    recomputed meanwhile reads it from the cache); ``clock`` is monotonic seconds.
    """

    def __init__(
        self,
        stream_name: str,
        retain_s: float,
        idle: Optional[IdlePolling] = None,
        clock: Callable[[], float] = time.monotonic,
        min_read_gap_s: float = 0.0,
    ) -> None:
        self.stream_name = stream_name
        self.retain_s = retain_s
        self._clock = clock
        self._lock = threading.Lock()
        self._ledger = Ledger()
        self._book = FetchBook(stream_name, self._ledger, clock, idle, min_read_gap_s)
        self._batches = BatchBook()
        self._round_ids = itertools.count(1)
        #: Since when the buffer bound has refused every round (None: not refusing).
        self._full_since: Optional[float] = None
        #: Shards whose due SHARD_END shard_end_due() has answered.
        self._ends_told: set = set()

    # -- shards (lease callbacks) -----------------------------------------------------------

    def shard_opened(
        self,
        shard_id: str,
        checkpoint: ExtendedSequenceNumber,
        position: StartPosition,
        hash_key_range: Optional[tuple],
        iterator: Optional[str] = None,
    ) -> list:
        """A lease was gained: a new generation of the shard, read from ``position`` once
        its parents are finished. A generation still open (the lease was lost and taken
        again before its loss was told) is closed first: returns the rounds it leaves
        holding nothing (the caller unpersists them), as :meth:`shard_closed` does."""
        with self._lock:
            freed = self._book.close(shard_id)
            generation = self._ledger.open_shard(shard_id, checkpoint, ready=False)
            self._book.open(shard_id, Cursor(generation, position, hash_key_range, iterator))
            return freed

    def shard_closed(self, shard_id: str) -> list:
        """The lease is gone: forget the shard's cursor and unbatched ranges. Returns the
        rounds now holding nothing (the caller unpersists them)."""
        with self._lock:
            return self._book.close(shard_id)

    # -- rounds (the round thread) ----------------------------------------------------------

    def plan_round(
        self, ready: Collection[str], max_buffer_records: int, max_buffer_bytes: int
    ) -> Optional[PlannedRound]:
        """A round is due: the shards it reads (ready, unblocked, past backoff and idle
        wait). None when nothing is to be read, or when what was fetched and not yet
        completed is at a buffer bound (counted as a round skipped)."""
        with self._lock:
            records, data_bytes = self._book.buffered()
            if records >= max_buffer_records or data_bytes >= max_buffer_bytes:
                self._book.stats.rounds_skipped_full_buffer += 1
                if self._full_since is None:
                    self._full_since = self._clock()
                return None
            self._full_since = None
            planned_at = self._book.now()
            shards = self._book.readable(set(ready))
            if not shards:
                return None
            copies = tuple((shard_id, dataclasses.replace(c)) for shard_id, c in shards)
            return PlannedRound(next(self._round_ids), planned_at, copies)

    def round_recorded(self, round_: Round) -> bool:
        """A round ran: move the cursors, queue its ranges in the ledger. True if it holds
        anything a batch must deliver; else the caller unpersists it."""
        with self._lock:
            return self._book.record(round_)

    # -- batches (the DStream and the streaming listener) -----------------------------------

    def batch_opened(self, batch_ms: int, owners_ms: tuple) -> tuple:
        """Batch ``batch_ms`` is asked for: ``(parts, logged ranges)`` (see
        :meth:`~.batches.BatchBook.take`); a new time gets the ranges fetched so far,
        complete once every job time of ``owners_ms`` has completed. Raises the stream's
        failure, if a shard failed for good."""
        with self._lock:
            if self._book.failure is not None:
                raise self._book.failure
            return self._batches.take(batch_ms, self._ledger, self._book.rounds, owners_ms)

    def batch_completed(self, job_ms: int, succeeded: bool) -> CompletedBatch:
        """Job time ``job_ms`` ended: the batches whose last job time it was are complete,
        and succeeded if each of their job times did (a failure blocks their shards);
        rounds kept past ``retain_s`` since their batches completed expire."""
        with self._lock:
            done = self._batches.complete(job_ms, succeeded)
            if not done:  # a batch from before this receiver (recovery), with no rounds,
                # or with job times still to come
                return CompletedBatch([], [], [], len(self._book.cursors))
            now = self._clock()
            blocked = []
            for time_ms, parts, ok in done:
                blocked += self._ledger.complete(time_ms, ok)
                for round_, _ in parts:
                    round_.completed_at = now
            expired = self._rounds_expired(now)
            done_parts = [(time_ms, parts) for time_ms, parts, _ in done]
            ok = all(ok for _, _, ok in done)
            return CompletedBatch(done_parts, blocked, expired, len(self._book.cursors), ok)

    def _rounds_expired(self, now: float) -> list:
        rounds = self._book.rounds
        expired = [
            r
            for r in rounds.values()
            if r.completed_at is not None and now - r.completed_at >= self.retain_s
        ]
        for round_ in expired:
            del rounds[round_.round_id]
        return expired

    def batch_ranges(self, batch_ms: int) -> tuple:
        """(the ranges batch ``batch_ms`` holds, MillisBehindLatest by shard)."""
        with self._lock:
            lags = dict(self._book.stats.last_millis_behind)
            return self._batches.log.get(batch_ms) or (), lags

    def batch_log(self) -> dict:
        """Recent batches' ranges (plain data) for Spark's checkpoint."""
        with self._lock:
            return self._batches.log.snapshot()

    def batch_log_restored(self, entries: dict) -> None:
        """After a restart: the batches before it; live ranges go only to later times."""
        with self._lock:
            self._batches.restore(entries, self._ledger)

    def keep_batch_log_for(self, remember_ms: Optional[int]) -> None:
        """The graph remembers ``remember_ms`` (None: unknown): keep that much of the
        batch log (at least its minimum)."""
        with self._lock:
            self._batches.log.set_retention(remember_ms)

    def batch_log_retention_ms(self) -> int:
        """How far back (ms) the batch log keeps batches."""
        with self._lock:
            return self._batches.log.retention_ms

    # -- checkpoints (the checkpointer) -----------------------------------------------------

    def checkpoint_targets(self) -> tuple:
        """``(targets, children)``: shard -> (generation, position) the ledger allows,
        and shard -> its child shards (known once its end was read)."""
        with self._lock:
            children = {k: c.children for k, c in self._book.cursors.items()}
            return self._ledger.targets(), children

    def shard_end_due(self) -> bool:
        """A shard's end may be checkpointed now (the batch of its last range completed)
        that this method has not answered before: a write that keeps failing is retried
        at the checkpoint interval, not at every batch."""
        with self._lock:
            due = {s for s, (_, p) in self._ledger.targets().items() if p.is_shard_end}
            new = due - self._ends_told
            self._ends_told = due
            return bool(new)

    def checkpoints_written(self, written: list) -> None:
        """``(shard, generation, position)`` were written: the ledger forgets what they
        cover; a shard checkpointed at its end is no longer held. A write for a
        generation since lost (and maybe regained) changes nothing."""
        with self._lock:
            for shard_id, generation, position in written:
                if self._ledger.generation(shard_id) != generation:
                    continue
                self._ledger.checkpointed(shard_id, generation, position)
                if position.is_shard_end:
                    self._book.cursors.pop(shard_id, None)

    def reading_paused_s(self) -> Optional[float]:
        """Seconds for which the buffer bound has refused every round (what was fetched
        waits for batches to complete); None while rounds are planned."""
        with self._lock:
            return None if self._full_since is None else self._clock() - self._full_since

    def stuck(self, stalled_after_ms: int) -> tuple:
        """``(blocked shards with why, batch times whose completion never came)``."""
        with self._lock:
            return self._ledger.blocked(), self._batches.stalled(stalled_after_ms)

    # -- stop -------------------------------------------------------------------------------

    def rounds_dropped(self) -> list:
        """The receiver stops: forget every cached round and live batch; returns the
        rounds (the caller unpersists them)."""
        with self._lock:
            rounds = list(self._book.rounds.values())
            self._book.rounds.clear()
            self._batches.live = {}
            return rounds

    # -- views ------------------------------------------------------------------------------

    def stats(self) -> FetchStats:
        """A copy of the fetch counters."""
        with self._lock:
            stats = self._book.stats
            return dataclasses.replace(stats, last_millis_behind=dict(stats.last_millis_behind))

    def rounds(self) -> list:
        """The rounds still cached, oldest first."""
        with self._lock:
            return [self._book.rounds[k] for k in sorted(self._book.rounds)]

    def buffered_records(self) -> int:
        """User records fetched whose batches have not completed."""
        with self._lock:
            return self._book.buffered()[0]

    def progress(self) -> dict:
        """The state's part of ``progress()``: shards, failures, fetch counters."""
        with self._lock:
            book, ledger, stats = self._book, self._ledger, self._book.stats
            lags = [x for x in stats.last_millis_behind.values() if x is not None]
            return {
                "shards_held": sorted(book.cursors),
                "shards_waiting_on_parents": ledger.shards(ShardPhase.WAITING_ON_PARENTS),
                "blocked_shards": ledger.blocked(),
                "batches_awaiting_completion": sorted(ledger.waiting_batches()),
                "failure": None if book.failure is None else str(book.failure),
                "max_millis_behind_latest": max(lags, default=None),
                "millis_behind_latest": dict(stats.last_millis_behind),
                "records_fetched": stats.records,
                "bytes_fetched": stats.data_bytes,
                "rounds": stats.rounds,
                "transient_read_failures": stats.transient_failures,
                "shard_reads": stats.shard_reads,
                "idle_reads_skipped": stats.idle_reads_skipped,
                "buffered_records": book.buffered()[0],
            }
