"""Read-ahead for one polled shard: the next pages are read while the last is processed.

A :class:`ShardPrefetch` owns one thread that reads a :class:`~.reader.ShardReader` page
by page into a queue, as the KCL's ``PrefetchRecordsPublisher`` does, while its consumer
(one thread: the kcl daemon's :class:`~..multilang.shard_consumer.ShardConsumer`) takes
batches from it with :meth:`ShardPrefetch.take`. Without it reading and processing take
turns; with it a GetRecords call is under way while the application works.

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

Order is the reader's; a batch at the shard's end is the last one (the thread ends).
A read error reaches the consumer at its place in the order (:meth:`take` raises it) and
is never swallowed; after one the thread reads again only once the consumer has taken
it, so the consumer decides whether to go on and its wait between retries paces them
(throttling is retried inside the read with the transport's backoff first).
:meth:`close` stops the thread, joins it, and drops what was read ahead (on a lease loss
or a stop), counted and logged.
The thread reads only: checkpoints are the consumer's, on what it handed on.
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
    READING = "reading"
    #: The queue is at a bound: the thread waits for the consumer to take a batch.
    FULL = "full"
    #: A read failed: the thread waits for the consumer to take the error.
    FAILED_WAITING = "failed, waiting for the consumer"
    #: The shard ended (its last batch is queued), or the read failed for good.
    ENDED = "ended"
    STOPPED = "stopped"


class ShardPrefetch:
    """Reads ``reader`` ahead on one owned thread; see the module. Use as a context
    manager, or :meth:`start` then :meth:`close`. The reader is the thread's until
    :meth:`close` returns."""

    def __init__(
        self,
        reader: ShardReader,
        bounds: PrefetchBounds = PrefetchBounds(),
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep_until: Optional[Callable[[threading.Event, float], bool]] = None,
    ) -> None:
        self.reader = reader
        self.bounds = bounds
        self._clock = clock
        #: Waits up to the given seconds or until the event is set (tests inject time).
        self._sleep_until = sleep_until or (lambda event, seconds: event.wait(seconds))
        self._queue: collections.deque = collections.deque()  # ReadBatch or exception
        self._records = 0  # user records queued
        self._bytes = 0  # their data bytes
        self._changed = threading.Condition()
        self._stop = threading.Event()
        self._interrupted = False  # under _changed: the next take returns at once
        self._last_call_end: Optional[float] = None
        self.state = PrefetchState.READING
        #: GetRecords pages read, batches queued, records dropped by :meth:`close`.
        self.pages_read = 0
        self.batches_queued = 0
        self.records_dropped = 0
        self._thread = threading.Thread(
            target=self._run, name=f"prefetch-{reader.shard_id}", daemon=True
        )

    # -- the consumer's side ------------------------------------------------------------------

    def start(self) -> ShardPrefetch:
        self._thread.start()
        return self

    def __enter__(self) -> ShardPrefetch:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def take(self, timeout_s: float) -> Optional[ReadBatch]:
        """The next batch, waiting up to ``timeout_s``; None if none came (or the shard's
        last batch was taken). Raises the read's error in its place in the order."""
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
                if self.state is PrefetchState.FULL:
                    self.state = PrefetchState.READING  # there is room: the thread reads
            self._changed.notify_all()
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
        """Stop the thread, join it and drop what was read ahead; returns the records
        dropped (counted in :attr:`records_dropped`, logged with ``reason``). A second
        close drops nothing more."""
        closed_before = self._stop.is_set()
        self._stop.set()
        with self._changed:
            self._changed.notify_all()
        if self._thread.is_alive():
            self._thread.join(JOIN_TIMEOUT_S)
            if self._thread.is_alive():
                log.error(
                    "stream %s, shard %s: the read-ahead thread is still in a read %.0fs "
                    "after the stop; left to end on its own",
                    self.reader.stream_name,
                    self.reader.shard_id,
                    JOIN_TIMEOUT_S,
                )
        with self._changed:
            # The queue's records, and those the reader holds past the last batch (the
            # rest of a page cut at the room left; the thread has stopped reading).
            held = 0 if closed_before or self._thread.is_alive() else self.reader.pending_records
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

    # -- the read thread -----------------------------------------------------------------------

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

    def _run(self) -> None:
        try:
            self._read_ahead()
        except BaseException as exc:  # a bug, not a read error: the consumer must see it
            log.exception("shard %s: the read-ahead thread failed", self.reader.shard_id)
            self._put(exc, PrefetchState.ENDED)

    def _read_ahead(self) -> None:
        while not self._stop.is_set():
            with self._changed:
                room = self._room()
                while not room and not self._stop.is_set():
                    self.state = PrefetchState.FULL
                    self._changed.wait()
                    room = self._room()
                if self._stop.is_set():
                    return
                self.state = PrefetchState.READING
            # Records left of the last page (an aggregate cut at the room) need no call.
            calls = 0 if self.reader.has_pending else 1
            if calls and self._last_call_end is not None:
                wait = self.bounds.idle_between_calls_s - (self._clock() - self._last_call_end)
                if wait > 0 and self._sleep_until(self._stop, wait):
                    return
            try:
                batch = self.reader.read(max_records=room, max_calls=calls)
            except KinesisDStreamError as exc:
                self._last_call_end = self._clock()
                # Retriable or not, the consumer decides whether to read on (the kcl
                # daemon does, for as long as it holds the lease, as the Java daemon).
                self._put(exc, PrefetchState.FAILED_WAITING)
                self._wait_taken(exc)
                continue
            if batch.get_records_calls:
                self._last_call_end = self._clock()
                self.pages_read += batch.get_records_calls
            if batch.shard_ended:
                self._put(batch, PrefetchState.ENDED)
                return
            if batch.records:
                self._put(batch, PrefetchState.READING)

    def _wait_taken(self, error: BaseException) -> None:
        """Read again once the consumer has taken ``error`` (or at a stop)."""
        with self._changed:
            self._changed.wait_for(lambda: self._stop.is_set() or error not in self._queue)

    def _put(self, item: Any, state: PrefetchState) -> None:
        with self._changed:
            self._queue.append(item)
            if isinstance(item, ReadBatch):
                self._records += len(item.records)
                self._bytes += item.data_bytes
                self.batches_queued += 1
            self.state = state
            self._changed.notify_all()
