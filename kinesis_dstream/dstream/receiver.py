"""The driver side of one input stream: leases, fetch rounds, batches, checkpoints.

One :class:`KinesisReceiver` per ``createStream`` call is one KCL-style worker. It owns:

- a :class:`~..leases.coordinator.LeaseCoordinator` (renewer and taker, shard sync);
- its :class:`~.receiver_state.ReceiverState`: the ledger, fetch book, batch book and
  batch log, and the one lock guarding them (taken by nobody else);
- the round thread (:class:`~.round_thread.RoundThread`): every ``fetch_interval_s``,
  the last round before each batch time timed to end just before it (:mod:`.pacing`), it
  plans a round (the ready shards in groups, a task each, bounded by
  ``max_records_per_fetch``, the buffer bounds and ``spark.streaming.receiver.maxRate``)
  and runs it as a Spark job whose RDD is persisted at the stream's storage level; only
  each shard's :class:`~.executor_read.ShardRange` reaches the driver (:mod:`.round_job`);
- the checkpointer thread: every ``checkpoint_interval_s`` its
  :class:`~.checkpointer.Checkpointer` writes, per shard, the position the ledger allows
  (the contiguous prefix of rounds whose batches completed with every output
  successful), and warns about blocked shards; a batch that completes a shard's last
  range wakes it at once, so the shard's children are read without waiting an interval;
- the metrics thread (both in one :class:`~..periodic.PeriodicLoops`).

Batch ``t`` gets the ranges the ledger assigns to it (:meth:`batch_rdd`); the streaming
listener reports each batch's outcome (:meth:`batch_completed`). A shard that failed for
good fails every later batch with an error naming stream, shard and position.

Locking: the state's lock is the state's own; ``_phase_lock`` guards only this
receiver's :class:`ReceiverPhase`. No Spark call or AWS call is made under either.
"""

from __future__ import annotations

import enum
import logging
import threading
import time
from datetime import datetime, timezone
from typing import Any, Optional

from ..leases.lease import Lease
from ..periodic import PeriodicLoops
from ..retrieval.consumers import ensure_consumer
from ..retrieval.fanout import FanOutConfig
from ..retrieval.idle import IdlePolling
from ..retrieval.reader import StartPosition
from ..retrieval.streams import latest_iterator, require_stream
from ..spark_internals import context_alive
from .batches import range_rdd, union_rdd
from .checkpointer import Checkpointer
from .executor_read import FetchPlan
from .lease_setup import build_lease_worker
from .observe import ReceiverObserver
from .receiver_state import ReceiverState
from .round_book import FetchStats
from .round_job import unpersist
from .round_thread import RoundThread
from .settings import StreamSettings

log = logging.getLogger(__name__)

#: Bound on joining one of our threads at stop (a fetch job is cancelled first).
JOIN_TIMEOUT_S = 15.0
#: A batch still not reported complete this long after a later one was is warned about.
STALLED_BATCH_MS = 60_000


class ReceiverPhase(enum.Enum):
    """Where a receiver is in its life: NEW -> STARTING -> RUNNING -> STOPPED (a failed
    start goes back to NEW; a stop from any phase is final)."""

    NEW = "new"
    STARTING = "starting"
    RUNNING = "running"
    STOPPED = "stopped"


class KinesisReceiver:
    """One worker of an application reading one stream; lives in the driver."""

    def __init__(self, settings: StreamSettings, credentials: Optional[dict] = None) -> None:
        credentials = credentials or {}
        self.settings = settings
        self.kinesis_spec, worker = build_lease_worker(
            settings, credentials, self._lease_gained, self._lease_lost
        )
        self.table, self.shard_sync = worker.table, worker.shard_sync
        self.coordinator = worker.coordinator
        self.observer = ReceiverObserver(settings, credentials.get("cloudwatch"), self.coordinator)
        idle = IdlePolling(settings.fetch_interval_s, settings.max_idle_wait_s)
        #: What was read, what each batch holds, what may be checkpointed.
        gap_s = FanOutConfig().resubscribe_interval_s if settings.fan_out else 0.0
        self.state = ReceiverState(
            settings.stream_name, settings.retain_s, idle, min_read_gap_s=gap_s
        )
        self._phase_lock = threading.Lock()
        self._phase = ReceiverPhase.NEW
        self.round_thread = RoundThread(
            settings, self.kinesis_spec, self.state, self.coordinator, self.observer, JOIN_TIMEOUT_S
        )
        self.checkpointer = Checkpointer(
            self.state, self.coordinator, self.observer, STALLED_BATCH_MS
        )
        #: The checkpointer's and the metrics' threads (kinesis-checkpointer-<stream id>).
        self.loops = PeriodicLoops(
            "kinesis", settings.stream_id, f"stream {settings.stream_name}", log
        )
        #: Set to run a checkpoint pass now (a shard's end may be written).
        self._wake_checkpointer = threading.Event()

    @property
    def stats(self) -> FetchStats:
        """A copy of the fetch counters."""
        return self.state.stats()

    # -- lifecycle ------------------------------------------------------------------------

    def start(self, sc: Any, round_thread: bool = True) -> None:
        """Take leases and start fetching; idempotent. A failure (a missing stream, say)
        is raised, and the next call tries again, so batches fail loudly, not empty.

        ``round_thread=False`` leaves rounds to :meth:`fetch_round` (driven by hand).
        """
        with self._phase_lock:
            if self._phase is not ReceiverPhase.NEW:
                return
            self._phase = ReceiverPhase.STARTING
        try:
            self._start(sc, round_thread)
        except BaseException:
            with self._phase_lock:
                if self._phase is ReceiverPhase.STARTING:
                    self._phase = ReceiverPhase.NEW
            raise

    def _start(self, sc: Any, round_thread: bool) -> None:
        """Start; a :meth:`stop` meanwhile (the state went to STOPPED) is honoured after
        each blocking step, so no worker outlives a stop that raced its start."""
        self.round_thread.configure(sc)
        if round_thread:
            self.round_thread.start_warm_up()  # overlaps the lease table's set-up below
        require_stream(self.kinesis_spec.client(), self.settings.stream_name)
        if self.settings.fan_out:
            self.round_thread.consumer_arn = self._consumer_arn()
        self.table.create_if_missing()
        with self._phase_lock:
            if self._phase is ReceiverPhase.STOPPED:
                return
        self.coordinator.start()
        with self._phase_lock:
            stopped = self._phase is ReceiverPhase.STOPPED
            if not stopped:
                self._start_threads(round_thread)
                self._phase = ReceiverPhase.RUNNING
        if stopped:
            self.coordinator.stop(release=False)
            return
        log.info(
            "receiver %s started for stream %s (application %s)",
            self.coordinator.worker_id,
            self.settings.stream_name,
            self.settings.app_name,
        )

    def _consumer_arn(self) -> str:
        """retrievalMode FANOUT: consumerArn, else found or registered by consumerName
        (default: the application name, as the KCL's FanOutConfig)."""
        settings = self.settings
        name = None if settings.consumer_arn else (settings.consumer_name or settings.app_name)
        consumer = ensure_consumer(
            self.kinesis_spec.client(),
            settings.stream_name,
            consumer_name=name,
            consumer_arn=settings.consumer_arn,
        )
        log.info(
            "stream %s: reading with enhanced fan-out consumer %s (%s)",
            settings.stream_name,
            consumer.name,
            consumer.arn,
        )
        return consumer.arn

    def _start_threads(self, round_thread: bool) -> None:
        if round_thread:
            self.round_thread.start_thread()
        settings = self.settings
        checkpoint = self.checkpointer.checkpoint_pass
        self.loops.spawn(
            "checkpointer", settings.checkpoint_interval_s, checkpoint, self._wake_checkpointer
        )
        self.loops.spawn("metrics", settings.metrics_interval_s, self.observer.publish)

    def remember(self, remember_ms: Optional[int]) -> None:
        """How far back (ms) the DStream graph may recompute batches: the batch log
        keeps that much (None: unknown, keep the minimum)."""
        self.state.keep_batch_log_for(remember_ms)

    def stop_fetching(self) -> None:
        """Stop starting rounds and wait for the one in flight (before Spark stops)."""
        self.round_thread.stop()

    def fetch_round(self) -> int:
        """Plan and run one round by hand (tests); returns the user records fetched."""
        return self.round_thread.fetch_round()

    def stop(self, release: bool) -> None:
        """Stop fetching, write the last checkpoints, stop the worker; idempotent.

        ``release`` gives the leases back at once (a graceful stop); otherwise they expire
        after the failover time and other workers take them then. Every step runs even
        when an earlier one fails (DynamoDB or Kinesis down): no thread is left behind.
        """
        with self._phase_lock:
            # A start still in progress sees STOPPED and unwinds itself (see _start).
            started = self._phase is ReceiverPhase.RUNNING
            if self._phase is ReceiverPhase.STOPPED:
                return
            self._phase = ReceiverPhase.STOPPED
        try:
            self.stop_fetching()
            self.loops.stop(time.monotonic() + JOIN_TIMEOUT_S, self._wake_checkpointer)
            if started:
                self._last_checkpoints()
        finally:
            if started:
                try:
                    self.coordinator.stop(release=release)
                except Exception:
                    log.exception(
                        "stopping the lease coordinator of stream %s (table %s) failed",
                        self.settings.stream_name,
                        self.settings.app_name,
                    )
            self._unpersist_all()
        log.info(
            "receiver %s stopped (leases %s)",
            self.coordinator.worker_id,
            "released" if release else "left to expire",
        )

    def _last_checkpoints(self) -> None:
        try:
            self.checkpoint_now()
        except Exception:
            log.exception("the last checkpoints of stream %s failed", self.settings.stream_name)
        try:
            self.observer.publish()
        except Exception:
            log.exception("the last metrics of stream %s failed", self.settings.stream_name)

    def _unpersist_all(self) -> None:
        rounds = self.state.rounds_dropped()
        if context_alive(self.round_thread.sc):
            for round_ in rounds:
                unpersist(round_)

    # -- leases -----------------------------------------------------------------------------

    def _lease_gained(self, lease: Lease) -> None:
        """Open a new generation for the shard. Raises (and the coordinator releases the
        lease) when the lease cannot be read, e.g. AT_TIMESTAMP with no timestamp."""
        position = StartPosition.from_checkpoint(lease.checkpoint, self.settings.initial_timestamp)
        if position is None:
            return  # finished: nothing to read
        iterator = None
        if position.iterator_type == "LATEST":
            # Pin "latest" to now, when the lease is gained. If the pinned iterator
            # expires unused, reading restarts AT_TIMESTAMP of the pin, skipping nothing.
            pinned_at = datetime.now(timezone.utc)
            iterator = latest_iterator(
                self.kinesis_spec.client(), self.settings.stream_name, lease.lease_key
            )
            position = StartPosition.at_timestamp(pinned_at)
        if lease.lease_key not in self.coordinator.held_leases():
            return  # a late callback: the lease was lost again meanwhile
        freed = self.state.shard_opened(
            lease.lease_key, lease.checkpoint, position, lease.hash_key_range, iterator
        )
        for round_ in freed:  # a generation whose loss was not told (taken again first)
            unpersist(round_)

    def _lease_lost(self, shard_id: str, reason: str) -> None:
        if shard_id in self.coordinator.held_leases():
            return  # a late callback: the lease was lost and taken again meanwhile
        for round_ in self.state.shard_closed(shard_id):
            unpersist(round_)
        log.info(
            "stream %s: stopped reading shard %s: lease lost (%s)",
            self.settings.stream_name,
            shard_id,
            reason,
        )

    # -- batches ----------------------------------------------------------------------------

    def batch_rdd(self, batch_ms: int, sc: Any, owners_ms: Optional[tuple] = None) -> Any:
        """The RDD of batch ``batch_ms``: the ranges the ledger assigns to it (the rounds
        recorded by then, and a round running at ``batch_ms``, waited for up to half a
        batch interval: :mod:`.batch_cut`), processed
        once every job time of ``owners_ms`` (default: ``batch_ms`` alone; see
        :func:`~kinesis_dstream.spark_internals.next_job_times`) has completed.

        Asked again for the same time, it returns the same records; for a time known only
        from a restored batch log (after a restart), it re-reads exactly those ranges. A
        shard that failed for good fails the batch, naming stream, shard and position.
        """
        # A round running at the batch time is waited for (bounded): its records would
        # otherwise wait a whole batch interval (see batch_cut).
        self.round_thread.wait_for_round_at(batch_ms)
        parts, logged = self.state.batch_opened(batch_ms, owners_ms or (batch_ms,))
        if parts is None:
            return range_rdd(sc, logged or (), self._range_plan)
        return union_rdd(sc, parts)

    def _range_plan(
        self, shard_id: str, start: StartPosition, hash_key_range: Any, records: int
    ) -> FetchPlan:
        return self.round_thread.plan(0, shard_id, start, None, hash_key_range, records)

    def batch_ranges(self, batch_ms: int) -> tuple:
        """(the ranges batch ``batch_ms`` holds, MillisBehindLatest by shard): the UI's."""
        return self.state.batch_ranges(batch_ms)

    def batch_log(self) -> dict:
        """Recent batches' ranges (plain data) for Spark's checkpoint."""
        return self.state.batch_log()

    def restore_batch_log(self, entries: dict) -> None:
        """After a restart: remember what the batches before it held, to recompute them;
        live records go only to later batch times."""
        self.state.batch_log_restored(entries)

    def batch_completed(self, batch_ms: int, succeeded: bool) -> None:
        """Job time ``batch_ms`` ended; the batches whose last job time it was (its own,
        and those before it that a window's output processes only now) count as
        processed only if every output's job of each succeeded."""
        completed = self.state.batch_completed(batch_ms, succeeded)
        if not completed.done:
            return  # a batch from before this receiver (recovery) or with no rounds
        for round_ in completed.expired:
            unpersist(round_)
        for shard_id in completed.blocked:
            log.warning(
                "stream %s batch %d failed: shard %s will not be checkpointed past its last "
                "checkpoint until the application restarts",
                self.settings.stream_name,
                batch_ms,
                shard_id,
            )
        parts = [part for _, time_parts in completed.done for part in time_parts]
        self.observer.batch_completed(batch_ms, completed.succeeded, parts, completed.shards_held)
        if completed.succeeded and self.state.shard_end_due():
            self._wake_checkpointer.set()

    # -- checkpoints ------------------------------------------------------------------------

    def checkpoint_now(self) -> int:
        """Write every position the ledger allows and finish ended shards. Returns writes."""
        return self.checkpointer.checkpoint_now()

    # -- metrics and progress ---------------------------------------------------------------

    def progress(self) -> dict:
        """A snapshot of what this stream is doing: lag, throughput, blocked shards."""
        return self.observer.progress(self.state.progress())

    def buffered_records(self) -> int:
        """User records fetched whose batches have not completed."""
        return self.state.buffered_records()
