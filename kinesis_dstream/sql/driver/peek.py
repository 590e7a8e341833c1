"""The source runner's peek: does a shard have records after a position?

Kinesis cannot say how many records a shard holds past a position without reading them,
so the runner reads a little: the first GetRecords from a position asks for at most 2
records, later ones (following ``NextShardIterator`` while the shard stays idle) for 1.
What is read is only inspected (is there a user record after the position? did it arrive
before an AvailableNow cutoff? is the position itself still retained?) and dropped: at
most 2 records per shard per ``minFetchPeriod``, never returned to Spark. The same
answer gives each shard's MillisBehindLatest for the query's progress. A peek is a small
read through the read core (:class:`~..retrieval.reader.ShardReader`: de-aggregation,
the drop through the position, expired iterators renewed). It may learn nothing
(throttled, an empty page while MillisBehindLatest > 0): it
follows the shard at the next period, and the runner decides what an unsettled shard
means (see :meth:`~.runner.SourceRunner._find_data`).

Per shard the peeker keeps its reader, so an idle shard costs one GetRecords call per
peek and no GetShardIterator; and an idle shard (its peeks settle at the tip, nothing
found) is peeked less often, its wait doubling up to ``idleShardPollMs``
(:mod:`..retrieval.idle`). A new position (its records were read) starts over at
``minFetchPeriod``: a busy shard is never slowed.

GetShardIterator is the dearest call of a shard's micro-batch (botocore's whole machinery,
~1 ms of CPU; Kinesis allows 5 a second per shard), and a shard with new records every
batch would pay two each batch: one for the peek at its new position, one for the task
that reads its range. So:

- the new reader at a new position starts from an iterator that already stands there:
  the previous reader's, when it read exactly through the position (the range ended
  where the peek stopped reading, as a trickle's ranges do), else the iterator the
  range's task stopped at, when its range ended with a whole page
  (:meth:`Peeker.go_on_from`). Such a reader does not read the position's own record
  again: the peek or the range read it moments ago. If its iterator expired (Kinesis
  keeps one 5 minutes; a long batch, a restart) before records came, the new one is made
  AT the position and its first record proves the position retained, as for any new
  reader (:meth:`Peeker._inspect`);
- the iterator the peek found records with (at the position: a reader from the position
  reads the same records from it) goes to the range's task (:meth:`Peeker.start_iterator`),
  which then needs no GetShardIterator of its own. It is a hint, never part of the offset:
  a task without it, or whose iterator expired, makes its own from the position.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Callable, Optional

from ...backoff import Backoff
from ...errors import DependencyError, KinesisServiceError, ThrottledError
from ...retrieval.idle import IdlePolling, is_idle_read
from ...retrieval.reader import ReadBatch, ReaderConfig, ReadPhase, ShardReader
from ..hints import hint_refused
from ..positions import Position, seq_position, start_position

log = logging.getLogger(__name__)

PEEK_BACKOFF = Backoff(initial_delay_s=0.1, max_delay_s=1.0, max_attempts=3, max_elapsed_s=5.0)
#: Peeks pace themselves (minFetchPeriod, idle waits): no pacing in the transport.
PEEK_CONFIG = ReaderConfig(min_call_interval_s=0.0, backoff=PEEK_BACKOFF)


@dataclass
class PeekResult:
    """What the runner learnt about one shard at one position."""

    has_data: bool = False
    #: The shard is closed and nothing follows the position: it is finished.
    drained: bool = False
    #: The position is no longer retained: the earliest sequence number found instead.
    lost_to: Optional[str] = None
    #: The peek reached the shard's tip, or (with a cutoff) a record after the cutoff,
    #: with no record to read in between: nothing to read now.
    settled: bool = False
    millis_behind_latest: Optional[int] = None


@dataclass
class _ShardState:
    position: str
    cutoff: Optional[datetime]
    reader: Optional[ShardReader] = None  # follows the shard from the position
    check_retained: bool = False
    last_call_at: Optional[float] = None
    saw_after_cutoff: bool = False
    idle_peeks: int = 0  # peeks in a row that settled at the tip with nothing found
    #: The iterator the records after the position were found with (None: unknown).
    start_iterator: Optional[str] = None
    #: An iterator standing at the position, for the new reader (None: made AT it).
    hint: Optional[str] = None
    #: The reader was made from :attr:`hint`: its pages begin after the position's record
    #: until the transport makes an iterator anew (AT the position, nothing received yet).
    hinted: bool = False
    result: PeekResult = field(default_factory=PeekResult)


class Peeker:
    """Per-shard peeks for one stream; lives in the source runner only (not picklable)."""

    def __init__(
        self,
        client: Any,
        stream_name: str,
        min_period_s: float,
        clock: Callable[[], float] = time.monotonic,
        max_idle_wait_s: float = 0.0,
    ) -> None:
        self._client = client
        self.stream_name = stream_name
        self._idle = IdlePolling(min_period_s, max_idle_wait_s)
        self._clock = clock
        self._states: dict = {}  # shard id -> _ShardState; one thread peeks a shard at a time
        self._go_on: dict = {}  # shard id -> (position key, iterator) from a range's end
        self.calls = 0
        #: Iterators given to a peek's reader (a range's end's) that Kinesis refused.
        self.hints_refused = 0
        self._calls_lock = threading.Lock()  # peeks of different shards run concurrently

    def peek_all(self, asks: list, cutoff: Optional[datetime], threads: int) -> list:
        """:meth:`peek` each (shard id, position, hash key range), ``threads`` at a time."""

        def peek(ask: tuple) -> PeekResult:
            shard_id, position, hash_key_range = ask
            return self.peek(shard_id, position, hash_key_range, cutoff)

        threads = min(threads, len(asks))
        if threads <= 1:
            return [peek(a) for a in asks]
        with ThreadPoolExecutor(threads, thread_name_prefix="kinesis-peek") as pool:
            return list(pool.map(peek, asks))

    def go_on_from(self, shard_id: str, position: Position, iterator: str) -> None:
        """A range of ``shard_id`` was read through ``position`` and stopped at
        ``iterator`` (its end's ``next_iterator``): the next peek at ``position`` may go on
        from it. Called by the runner between peeks (not concurrently with them)."""
        self._go_on[shard_id] = (_key(position), iterator)

    def peek(
        self,
        shard_id: str,
        position: Position,
        hash_key_range: Optional[tuple],
        cutoff: Optional[datetime] = None,
    ) -> PeekResult:
        key = _key(position)
        state = self._states.get(shard_id)
        if state is None or state.position != key or state.cutoff != cutoff:
            ended_at = self._go_on.pop(shard_id, None)
            go_on = ended_at[1] if ended_at is not None and ended_at[0] == key else None
            hint = _standing_iterator(state, position, cutoff) or go_on
            state = self._states[shard_id] = _ShardState(key, cutoff, hint=hint)
        result = state.result
        if result.has_data or result.drained or result.lost_to is not None:
            return result
        if result.settled and cutoff is not None:
            return result  # nothing before the cutoff: settled for this AvailableNow run
        now = self._clock()
        wait_s = self._idle.wait_s(state.idle_peeks)
        if state.last_call_at is not None and now - state.last_call_at < wait_s:
            return result
        state.last_call_at = now
        first = state.reader is None
        if state.reader is None:
            start = start_position(position)
            assert start is not None
            iterator, state.hint = state.hint, None
            state.hinted = iterator is not None
            # the first record of an iterator made AT the position is the position's own:
            # its presence proves that it is still retained; the core drops what is not
            # after it (see _inspect)
            state.check_retained = isinstance(position, dict) and "seq" in position
            state.reader = ShardReader(
                self._client,
                self.stream_name,
                shard_id,
                start,
                hash_key_range=hash_key_range,
                config=PEEK_CONFIG,
                iterator=iterator,
            )
        reader = state.reader
        calls = reader.transport.calls
        # the next page begins at the position: a new reader's first (its iterator is
        # made from the position), or one with nothing pending that read nothing after it
        from_position = first or reader.iterator is not None
        try:
            batch = reader.read(max_records=2 if first else 1, max_calls=1)
        except (ThrottledError, DependencyError) as exc:
            log.info("peek at %s/%s deferred: %s", self.stream_name, shard_id, exc)
            return result  # the executors' reads matter; a peek can wait a period
        except KinesisServiceError as exc:
            what = f"peek at {self.stream_name}/{shard_id}"
            if not hint_refused(reader, state.hinted, exc, what):
                raise
            # the hint may be in a recorded end, met again at every restart: drop it
            with self._calls_lock:
                self.hints_refused += 1
            state.reader, state.hinted, state.last_call_at = None, False, None
            return self.peek(shard_id, position, hash_key_range, cutoff)  # once: no hint
        finally:
            with self._calls_lock:
                self.calls += reader.transport.calls - calls
        self._inspect(state, position, reader, batch)
        if state.result.has_data and batch.get_records_calls and from_position:
            state.start_iterator = getattr(reader.transport, "page_iterator", None)
        return state.result

    def start_iterator(self, shard_id: str, position: Position) -> Optional[str]:
        """A shard iterator from which a reader starting at ``position`` reads the records
        the peek found there (None if there is none): the range's task may read with it
        instead of asking GetShardIterator. Valid for Kinesis' 5 minutes."""
        state = self._states.get(shard_id)
        if state is None or state.position != _key(position) or not state.result.has_data:
            return None
        return state.start_iterator

    def _inspect(
        self, state: _ShardState, position: Position, reader: ShardReader, batch: ReadBatch
    ) -> None:
        result = state.result
        result.millis_behind_latest = batch.millis_behind_latest
        first = reader.first_raw_sequence
        if state.check_retained and first is not None:
            state.check_retained = False
            # the first records came from an iterator made AT the position: the reader's
            # own, or one made anew after its hint expired (nothing was received before,
            # so the transport made it from the reader's start)
            made_at_position = not state.hinted or reader.transport.iterators_renewed > 0
            if made_at_position and int(first) > int(position["seq"]):  # type: ignore[index]
                result.lost_to = first
                return
        users = batch.records
        if state.cutoff is not None:
            later = [
                u
                for u in users
                if u.approximate_arrival_timestamp is not None
                and u.approximate_arrival_timestamp > state.cutoff
            ]
            state.saw_after_cutoff = state.saw_after_cutoff or bool(later)
            users = [
                u
                for u in users
                if u.approximate_arrival_timestamp is None
                or u.approximate_arrival_timestamp <= state.cutoff
            ]
        if users:
            result.has_data = True
        if batch.shard_ended and not users and not state.saw_after_cutoff:
            result.drained = True
        # an empty page with MillisBehindLatest > 0 says nothing (Kinesis returns those
        # on the way through old data): the next peek follows NextShardIterator
        result.settled = not users and (state.saw_after_cutoff or result.millis_behind_latest == 0)
        if is_idle_read(len(users), result.millis_behind_latest, result.drained):
            state.idle_peeks += 1
        else:
            state.idle_peeks = 0


def _key(position: Position) -> str:
    return json.dumps(position, separators=(",", ":"))


def _standing_iterator(
    state: Optional[_ShardState], position: Position, cutoff: Any
) -> Optional[str]:
    """The previous position's reader's iterator when that reader stands exactly at
    ``position`` (it read through it and nothing after it was taken), else None.

    The new reader goes on from it, as an idle shard's follow-up peeks do, and saves a
    GetShardIterator; it is a new reader from ``position`` all the same, so an iterator
    made anew after this one expired is made AT the position and checked (see
    :class:`_ShardState`'s ``hinted``).
    """
    if state is None or state.reader is None or state.cutoff != cutoff:
        return None
    reader = state.reader
    consumed = reader.resume_after
    if reader.phase is not ReadPhase.READING or consumed is None:
        return None
    if not isinstance(position, dict) or "seq" not in position:
        return None
    if seq_position(str(consumed[0]), consumed[1]) != position:
        return None
    return reader.iterator
