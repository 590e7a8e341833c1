"""Read-ahead for one polled shard: the next pages are read while the last is processed.

A :class:`ShardPrefetch` reads a :class:`~.reader.ShardReader` page by page into a
queue, as the KCL's ``PrefetchRecordsPublisher`` does, while its consumer (one thread:
the kcl daemon's :class:`~..multilang.shard_consumer.ShardConsumer`) takes batches from
it with :meth:`ShardPrefetch.take`. Without it reading and processing take turns; with
it a GetRecords call is under way while the application works. Its reads run as steps
on a :class:`~.read_pool.ReadPool`: the daemon's, shared by every shard it holds (a
thread a shard cost a thousand idle shards a third more CPU a read), or one of its own
with one thread. One step at a time: a step reads one page and schedules the next step
when the next read is due; a step that finds no room, or leaves an error for the
consumer, schedules nothing, and :meth:`~ShardPrefetch.take` schedules the next once it
has made room or taken the error.

Bounds (:class:`PrefetchBounds`, the KCL's properties and defaults): at most
``maxPendingProcessRecordsInput`` batches queued (3); a new page is read only while the
queued records are under ``maxRecordsCount`` (30,000) and their bytes under
``maxCacheByteSize`` (8 MiB); a batch is one page's user records (``maxRecords`` Kinesis
records a call, more user records for KPL aggregates), cut at the room left (the rest
waits in the reader and needs no call). As in the
KCL, one page can carry the bytes past the byte bound (a page's size is known only once
it is read); records never pass theirs. ``idleTimeBetweenReadsInMillis`` is counted as
the KCL counts it: from the end of one GetRecords call to the start of the next, not from
the end of processing (processing overlaps the wait).

Order is the reader's; a batch at the shard's end is the last one (no step follows).
A read error reaches the consumer at its place in the order (:meth:`take` raises it) and
is never swallowed; after one the next read is scheduled only once the consumer has
taken it, so the consumer decides whether to go on and its wait between retries paces
them (throttling is retried inside the read with the transport's backoff first).
:meth:`close` stops the reads, waits for one under way, and drops what was read ahead
(on a lease loss or a stop), counted and logged.
The steps read only: checkpoints are the consumer's, on what it handed on.
"""

from __future__ import annotations

import collections
import enum
import logging
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Optional

from ..errors import KinesisDStreamError
from .read_pool import ReadPool
from .reader import ReadBatch, ShardReader

log = logging.getLogger(__name__)

#: The KCL's defaults: maxPendingProcessRecordsInput, maxCacheByteSize, maxRecordsCount.
DEFAULT_MAX_PENDING_BATCHES = 3
DEFAULT_MAX_CACHE_BYTES = 8 * 1024 * 1024
DEFAULT_MAX_CACHED_RECORDS = 30_000
#: How long :meth:`ShardPrefetch.close` waits for a read under way to return.
JOIN_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class PrefetchBounds:
    """How far a :class:`ShardPrefetch` reads ahead, and its pace. Units in the names."""

    #: Batches queued at most (the KCL's ``maxPendingProcessRecordsInput``).
    max_pending_batches: int = DEFAULT_MAX_PENDING_BATCHES
    #: A page is read only while the queued bytes are below this (``maxCacheByteSize``).
    max_bytes: int = DEFAULT_MAX_CACHE_BYTES
    #: Queued user records never pass this (``maxRecordsCount``).
    max_records: int = DEFAULT_MAX_CACHED_RECORDS
    #: From the end of one GetRecords call to the start of the next
    #: (``idleTimeBetweenReadsInMillis``).
    idle_between_calls_s: float = 1.0

    def __post_init__(self) -> None:
        for name in ("max_pending_batches", "max_bytes", "max_records"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)!r}")
        if self.idle_between_calls_s < 0:
            raise ValueError(
                f"idle_between_calls_s must be >= 0, got {self.idle_between_calls_s!r}"
            )


class PrefetchState(enum.Enum):
    #: A read is scheduled or under way.
    READING = "reading"
    #: The queue is at a bound: no read until the consumer takes a batch.
    FULL = "full"
    #: A read failed: no read until the consumer takes the error.
    FAILED_WAITING = "failed, waiting for the consumer"
    #: The shard ended (its last batch is queued), or the read failed for good.
    ENDED = "ended"
    STOPPED = "stopped"


class ShardPrefetch:
    """Reads ``reader`` ahead; see the module. Use as a context manager, or :meth:`start`
    then :meth:`close`. The reader is the prefetch's steps' until :meth:`close` returns.

    ``pool``: the :class:`~.read_pool.ReadPool` its reads run on (its owner starts and
    stops it); None: a pool of one thread of its own, stopped by :meth:`close`."""

    def __init__(
        self,
        reader: ShardReader,
        bounds: PrefetchBounds = PrefetchBounds(),
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep_until: Optional[Callable[[threading.Event, float], bool]] = None,
        pool: Optional[ReadPool] = None,
    ) -> None:
        self.reader = reader
        self.bounds = bounds
        self._clock = clock
        self._own_pool = pool is None
        self.pool = pool or ReadPool(
            f"prefetch-{reader.shard_id}", 1, clock=clock, sleep_until=sleep_until
        )
        self._queue: collections.deque = collections.deque()  # ReadBatch or exception
        self._records = 0  # user records queued
        self._bytes = 0  # their data bytes
        self._changed = threading.Condition()
        self._stop = threading.Event()
        self._interrupted = False  # under _changed: the next take returns at once
        self._stepping = False  # under _changed: a step is running now
        self._last_call_end: Optional[float] = None
        self.state = PrefetchState.READING
        #: GetRecords pages read, batches queued, records dropped by :meth:`close`.
        self.pages_read = 0
        self.batches_queued = 0
        self.records_dropped = 0

    # -- the consumer's side ------------------------------------------------------------------

    def start(self) -> ShardPrefetch:
        if self._own_pool:
            self.pool.start()
        self.pool.call_at(self._clock(), self._step)
        return self

    def __enter__(self) -> ShardPrefetch:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def take(self, timeout_s: float) -> Optional[ReadBatch]:
        """The next batch, waiting up to ``timeout_s``; None if none came (or the shard's
        last batch was taken). Raises the read's error in its place in the order."""
        resume = False
        with self._changed:
            if not self._queue and self.state is not PrefetchState.ENDED and not self._interrupted:
                self._changed.wait_for(
                    lambda: bool(self._queue)
                    or self.state is PrefetchState.ENDED
                    or self._interrupted,
                    timeout_s,
                )
            self._interrupted = False
            if not self._queue:
                return None
            item = self._queue.popleft()
            if isinstance(item, ReadBatch):
                self._records -= len(item.records)
                self._bytes -= item.data_bytes
            if not self._stop.is_set():
                if self.state is PrefetchState.FAILED_WAITING and isinstance(item, BaseException):
                    self.state = PrefetchState.FULL  # the error is taken: read once there is room
                if self.state is PrefetchState.FULL and self._room():
                    self.state = PrefetchState.READING
                    resume = True
        if resume:
            self.pool.call_at(self._clock(), self._step)
        if isinstance(item, BaseException):
            raise item
        return item

    def interrupt(self) -> None:
        """Make the :meth:`take` under way, or the next one, return at once (None if
        nothing is queued): the consumer has a signal of its own to look at (a lost
        lease, a stop), so it can wait long on an idle shard and still answer at once."""
        with self._changed:
            self._interrupted = True
            self._changed.notify_all()

    @property
    def queued_records(self) -> int:
        """User records read ahead and not yet taken."""
        return self._records

    @property
    def queued_bytes(self) -> int:
        return self._bytes

    @property
    def queued_batches(self) -> int:
        return sum(1 for item in self._queue if isinstance(item, ReadBatch))

    def close(self, reason: str = "stopped") -> int:
        """Stop reading, wait for a read under way and drop what was read ahead; returns
        the records dropped (counted in :attr:`records_dropped`, logged with ``reason``).
        A second close drops nothing more."""
        closed_before = self._stop.is_set()
        self._stop.set()
        with self._changed:
            self._changed.notify_all()
            finished = self._changed.wait_for(lambda: not self._stepping, JOIN_TIMEOUT_S)
        if not finished:
            log.error(
                "stream %s, shard %s: the read ahead is still in a read %.0fs after the "
                "stop; left to end on its own",
                self.reader.stream_name,
                self.reader.shard_id,
                JOIN_TIMEOUT_S,
            )
        if self._own_pool:
            self.pool.stop(0.0 if not finished else JOIN_TIMEOUT_S)
        with self._changed:
            # The queue's records, and those the reader holds past the last batch (the
            # rest of a page cut at the room left; no step reads any more).
            held = 0 if closed_before or not finished else self.reader.pending_records
            dropped = self._records + held
            self._queue.clear()
            self._records = self._bytes = 0
            if self.state is not PrefetchState.ENDED:
                self.state = PrefetchState.STOPPED
        if dropped:
            self.records_dropped += dropped
            log.info(
                "stream %s, shard %s: %d records read ahead and not handed on are dropped "
                "(%s); they are read again from the last checkpoint by the next owner",
                self.reader.stream_name,
                self.reader.shard_id,
                dropped,
                reason,
            )
        return dropped

    # -- the reads (steps on the pool) ---------------------------------------------------------

    def _room(self) -> int:
        """User records the next batch may hold (0: wait for the consumer). A batch is
        one page's user records, as the KCL hands them over: the page's size is the
        reader's ``max_records_per_call`` (``maxRecords``), in Kinesis records."""
        bounds = self.bounds
        if (
            len(self._queue) >= bounds.max_pending_batches
            or self._bytes >= bounds.max_bytes
            or self._records >= bounds.max_records
        ):
            return 0
        return bounds.max_records - self._records

    def _step(self) -> None:
        """One read (or the wait for it, scheduled): then the next step, unless parked."""
        with self._changed:
            if self._stop.is_set() or self.state is not PrefetchState.READING:
                return
            room = self._room()
            if not room:
                self.state = PrefetchState.FULL  # take() schedules the next step
                return
            self._stepping = True
        next_at: Optional[float] = None
        try:
            next_at = self._read(room)
        except BaseException as exc:  # a bug, not a read error: the consumer must see it
            log.exception("shard %s: the read ahead failed", self.reader.shard_id)
            self._put(exc, PrefetchState.ENDED)
        finally:
            with self._changed:
                self._stepping = False
                if next_at is not None and (
                    self._stop.is_set() or self.state is not PrefetchState.READING
                ):
                    next_at = None
                elif next_at is not None and not self._room():
                    self.state = PrefetchState.FULL  # no wait scheduled: take() resumes
                    next_at = None
                if self._stop.is_set():
                    self._changed.notify_all()  # close() waits for the step to end
                # (not otherwise: the consumer waits on this condition for batches, and an
                # idle shard's reads put none; _put wakes it)
        if next_at is not None:
            self.pool.call_at(next_at, self._step)

    def _read(self, room: int) -> Optional[float]:
        """Read one page into the queue (or wait for the idle time first); returns when
        the next step is due, None if the prefetch is parked, ended or stopped."""
        # Records left of the last page (an aggregate cut at the room) need no call.
        calls = 0 if self.reader.has_pending else 1
        now = self._clock()
        if calls and self._last_call_end is not None:
            due = self._last_call_end + self.bounds.idle_between_calls_s
            if due > now:
                return due
        try:
            batch = self.reader.read(max_records=room, max_calls=calls)
        except KinesisDStreamError as exc:
            self._last_call_end = self._clock()
            # Retriable or not, the consumer decides whether to read on (the kcl daemon
            # does, for as long as it holds the lease, as the Java daemon).
            self._put(exc, PrefetchState.FAILED_WAITING)
            return None
        if batch.get_records_calls:
            self._last_call_end = self._clock()
            self.pages_read += batch.get_records_calls
        if batch.shard_ended:
            self._put(batch, PrefetchState.ENDED)
            return None
        if batch.records:
            self._put(batch, PrefetchState.READING)
        if self.reader.has_pending or self._last_call_end is None:
            return self._clock()
        return self._last_call_end + self.bounds.idle_between_calls_s

    def _put(self, item: Any, state: PrefetchState) -> None:
        with self._changed:
            self._queue.append(item)
            if isinstance(item, ReadBatch):
                self._records += len(item.records)
                self._bytes += item.data_bytes
                self.batches_queued += 1
            if self.state is not PrefetchState.STOPPED:
                self.state = state
            self._changed.notify_all()
