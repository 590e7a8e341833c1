"""The driver side of one input stream: leases, fetch rounds, batches, checkpoints.

One :class:`KinesisReceiver` per ``createStream`` call is one KCL-style worker. It owns:

- a :class:`~.lease_coordinator.LeaseCoordinator` (renewer and taker threads, shard sync);
- the fetcher thread: every ``fetch_interval_s`` it plans a round (one task per ready
  shard, bounded by ``max_records_per_fetch``, the buffer bounds and
  ``spark.streaming.receiver.maxRate``) and runs it as a Spark job whose RDD is persisted
  at the stream's storage level. Only the per-shard range headers reach the driver;
- the checkpointer thread: every ``checkpoint_interval_s`` it writes, per shard, the
  highest position whose batch completed with every output operation successful.

Batch ``t`` gets the rounds completed before ``t`` (:meth:`batch_rdd`); the streaming
listener reports each batch's outcome (:meth:`batch_completed`). A failed batch blocks its
shards' checkpoints until the application restarts, so its records are delivered again.

Locking: ``_lock`` guards every structure below; no Spark call or AWS call is made while
holding it. Threads: the fetcher and checkpointer, each with a stop event and a join.
"""

from __future__ import annotations

import functools
import itertools
import logging
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Optional

from ..aws import ClientSpec
from ..errors import CheckpointError, LeaseLostError
from ..esn import ExtendedSequenceNumber
from ..leases.coordinator import LeaseCoordinator
from ..leases.dynamodb import LeaseTable
from ..leases.lease import Lease
from ..leases.shard_sync import ShardSync
from ..metrics import (
    DEFAULT_DIMENSIONS,
    NONE,
    CloudWatchMetrics,
    LogMetrics,
    Metrics,
    NullMetrics,
)
from ..retrieval.reader import ReaderConfig, StartPosition
from ..retrieval.streams import require_stream
from ..settings import StreamSettings
from .compat import context_alive, count_in_jvm
from .fetch import FetchPlan, HeaderList, RangeHeader, deliver, fetch

log = logging.getLogger(__name__)

_JOIN_TIMEOUT_S = 60.0
#: How long batches' ranges are kept for recomputation after a restart (Spark may
#: recompute windows and state from batches this old).
BATCH_LOG_S = 900


@dataclass(eq=False)
class _Shard:
    """What the receiver knows of one leased shard (replaced if the lease is regained)."""

    lease: Lease
    position: StartPosition
    iterator: Optional[str] = None
    checkpointed: Optional[ExtendedSequenceNumber] = None
    processed_through: Optional[ExtendedSequenceNumber] = None
    pending_rounds: int = 0  # rounds with records (or the end) whose batch has not completed
    ended: bool = False
    children: tuple = ()
    blocked: bool = False  # a batch holding its records failed: no checkpoint past it


class BatchRange(NamedTuple):
    """One shard's records in one batch: enough to read them again exactly."""

    shard_id: str
    hash_key_range: Optional[tuple]
    first_esn: tuple
    last_esn: tuple
    records: int


@dataclass(eq=False)
class _Round:
    round_id: int
    rdd: Any
    plans: list
    headers: list
    shards: list  # the _Shard each plan was made from
    records: int
    data_bytes: int
    completed_at: Optional[float] = None


@dataclass
class ReceiverStats:
    """Counters for logs, metrics and tests."""

    rounds: int = 0
    records: int = 0
    data_bytes: int = 0
    batches_completed: int = 0
    batches_failed: int = 0
    checkpoints_written: int = 0
    checkpoints_refused: int = 0
    rounds_skipped_full_buffer: int = 0
    last_millis_behind: dict = field(default_factory=dict)


class KinesisReceiver:
    """One worker of an application reading one stream; lives in the driver."""

    def __init__(self, settings: StreamSettings, credentials: Optional[dict] = None) -> None:
        credentials = credentials or {}
        self.settings = settings
        self.kinesis_spec = ClientSpec(
            "kinesis", settings.region_name, settings.endpoint_url, credentials.get("kinesis")
        )
        self.dynamodb_spec = ClientSpec(
            "dynamodb",
            settings.region_name,
            settings.dynamodb_endpoint_url,
            credentials.get("dynamodb"),
        )
        self.table = LeaseTable(self.dynamodb_spec.client(), settings.app_name)
        self.shard_sync = ShardSync(
            self.kinesis_spec.client(),
            settings.stream_name,
            self.table,
            settings.initial_position,
        )
        self.coordinator = LeaseCoordinator(
            self.table,
            settings.worker_id,
            failover_time_s=settings.failover_time_s,
            max_leases_for_worker=settings.max_leases_for_worker,
            max_leases_to_steal=settings.max_leases_to_steal,
            shard_sync=self.shard_sync,
            shard_sync_interval_s=settings.shard_sync_interval_s,
            on_lease_gained=self._lease_gained,
            on_lease_lost=self._lease_lost,
        )
        self.stats = ReceiverStats()
        self.metrics = _make_metrics(settings, credentials.get("cloudwatch"), self.coordinator)
        self._published_counts = {"taken": 0, "stolen": 0, "lost": 0}
        self._last_batch: dict = {}
        self._lock = threading.Lock()
        self._shards: dict = {}  # shard id -> _Shard
        self._rounds: dict = {}  # round id -> _Round, until unpersisted
        self._unassigned: list = []  # rounds not yet given to a batch
        self._batches: dict = {}  # batch time (ms) -> [_Round], until it completes
        #: batch time (ms) -> (BatchRange, ...): what each recent batch holds, oldest first.
        #: It rides in Spark's checkpoint, so a restarted driver recomputes old batches.
        self._batch_log: OrderedDict = OrderedDict()
        self._round_ids = itertools.count(1)
        self._sc: Any = None
        self._headers: Any = None  # Spark accumulator of the rounds' range headers
        self._reader_config = ReaderConfig()
        self._max_rate = 0
        self._job_group = f"kinesis-dstream-{settings.stream_id}"
        self._stop_fetching = threading.Event()
        self._stop_background = threading.Event()
        self._threads: list = []
        self._started = False
        self._stopped = False

    # -- lifecycle ------------------------------------------------------------------------

    def start(self, sc: Any) -> None:
        """Take leases and start fetching; idempotent. A failure (a missing stream, say)
        is raised, and the next call tries again, so batches fail loudly, not empty."""
        with self._lock:
            if self._started or self._stopped:
                return
            self._started = True
        try:
            self._start(sc)
        except BaseException:
            with self._lock:
                self._started = False
            raise

    def _start(self, sc: Any) -> None:
        self._sc = sc
        self._headers = sc.accumulator([], HeaderList())
        conf = sc.getConf()
        self._reader_config = ReaderConfig.from_spark_conf(conf)
        self._max_rate = int(conf.get("spark.streaming.receiver.maxRate", "0") or 0)
        require_stream(self.kinesis_spec.client(), self.settings.stream_name)
        self.table.create_if_missing()
        self.coordinator.start()
        log.info(
            "receiver %s started for stream %s (application %s)",
            self.coordinator.worker_id,
            self.settings.stream_name,
            self.settings.app_name,
        )
        for name, target in (
            ("fetcher", self._fetch_loop),
            ("checkpointer", self._checkpoint_loop),
            ("metrics", self._metrics_loop),
        ):
            thread = threading.Thread(
                target=target, name=f"kinesis-{name}-{self.settings.stream_id}", daemon=True
            )
            thread.start()
            self._threads.append(thread)

    def stop_fetching(self) -> None:
        """Stop starting rounds and wait for the one in flight (before Spark stops)."""
        self._stop_fetching.set()
        if context_alive(self._sc):
            try:
                self._sc.cancelJobGroup(self._job_group)
            except Exception:  # the context may be stopping under us
                log.debug("could not cancel fetch jobs", exc_info=True)
        for thread in self._threads:
            if thread.name.startswith("kinesis-fetcher"):
                thread.join(timeout=_JOIN_TIMEOUT_S)

    def stop(self, release: bool) -> None:
        """Stop fetching, write the last checkpoints, stop the worker; idempotent.

        ``release`` gives the leases back at once (a graceful stop); otherwise they expire
        after the failover time and other workers take them then.
        """
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
        self.stop_fetching()
        self._stop_background.set()
        for thread in self._threads:
            thread.join(timeout=_JOIN_TIMEOUT_S)
            if thread.is_alive():
                log.error("receiver thread %s did not stop", thread.name)
        self._threads = []
        if self._started:
            self.checkpoint_now()
            self.coordinator.stop(release=release)
            self.publish_metrics()
        with self._lock:
            rounds, self._rounds = list(self._rounds.values()), {}
            self._unassigned, self._batches = [], {}
        if context_alive(self._sc):
            for round_ in rounds:
                _unpersist(round_)
        log.info(
            "receiver %s stopped (leases %s)",
            self.coordinator.worker_id,
            "released" if release else "left to expire",
        )

    # -- leases -----------------------------------------------------------------------------

    def _lease_gained(self, lease: Lease) -> None:
        position = StartPosition.from_checkpoint(lease.checkpoint, self.settings.initial_timestamp)
        if position is None:
            return  # finished: nothing to read
        iterator = None
        if position.iterator_type == "LATEST":
            # Pin "latest" to now, when the lease is gained, not to the first round.
            iterator = self._latest_iterator(lease.lease_key)
        with self._lock:
            self._shards[lease.lease_key] = _Shard(
                lease, position, iterator=iterator, checkpointed=lease.checkpoint
            )

    def _latest_iterator(self, shard_id: str) -> Optional[str]:
        try:
            response = self.kinesis_spec.client().get_shard_iterator(
                StreamName=self.settings.stream_name,
                ShardId=shard_id,
                ShardIteratorType="LATEST",
            )
        except Exception as exc:  # the first round will ask again
            log.warning("could not get a LATEST iterator for shard %s: %s", shard_id, exc)
            return None
        return response["ShardIterator"]

    def _lease_lost(self, shard_id: str, reason: str) -> None:
        with self._lock:
            self._shards.pop(shard_id, None)
        log.info("stopped reading shard %s: lease lost (%s)", shard_id, reason)

    # -- fetching ---------------------------------------------------------------------------

    def _fetch_loop(self) -> None:
        self._sc.setJobGroup(self._job_group, "kinesis_dstream fetch rounds", False)
        interval = self.settings.fetch_interval_s
        while not self._stop_fetching.is_set():
            started = time.monotonic()
            try:
                self.fetch_round()
            except Exception:
                if self._stop_fetching.is_set() or not context_alive(self._sc):
                    break
                log.exception("fetch round failed for stream %s", self.settings.stream_name)
            self._stop_fetching.wait(max(0.0, interval - (time.monotonic() - started)))

    def _buffer_full(self) -> bool:
        waiting = [r for r in self._rounds.values() if r.completed_at is None]
        records = sum(r.records for r in waiting)
        data_bytes = sum(r.data_bytes for r in waiting)
        return (
            records >= self.settings.max_buffer_records
            or data_bytes >= self.settings.max_buffer_bytes
        )

    def fetch_round(self) -> int:
        """Plan and run one round; returns the records fetched (the fetcher calls this)."""
        ready = self.coordinator.ready_leases()
        with self._lock:
            if self._buffer_full():
                self.stats.rounds_skipped_full_buffer += 1
                return 0
            shards = [
                (shard_id, state)
                for shard_id, state in sorted(self._shards.items())
                if shard_id in ready and not state.ended
            ]
            if not shards:
                return 0
            round_id = next(self._round_ids)
            per_shard = self.settings.max_records_per_fetch
            if self._max_rate > 0:
                budget = self._max_rate * self.settings.fetch_interval_s
                per_shard = max(1, min(per_shard, int(budget / len(shards))))
            plans = [
                self._plan(
                    round_id,
                    shard_id,
                    state.position,
                    state.iterator,
                    state.lease.hash_key_range,
                    per_shard,
                )
                for shard_id, state in shards
            ]
        accumulator = self._headers
        rdd = self._sc.parallelize(plans, len(plans)).mapPartitions(
            functools.partial(fetch, headers=accumulator)
        )
        rdd.persist(self.settings.storage_level)
        count_in_jvm(rdd)  # computes and caches the round in the JVM; no Python pass over it
        by_shard = {h.shard_id: h for h in accumulator.value if h.round_id == round_id}
        accumulator.value = []  # a recomputed old round may add headers: they are ignored
        missing = [p.shard_id for p in plans if p.shard_id not in by_shard]
        if missing:
            raise RuntimeError(f"round {round_id}: no range reported for shards {missing}")
        headers = [by_shard[p.shard_id] for p in plans]
        return self._record_round(round_id, rdd, plans, [s for _, s in shards], headers)

    def _plan(
        self,
        round_id: int,
        shard_id: str,
        start: StartPosition,
        iterator: Optional[str],
        hash_key_range: Optional[tuple],
        max_records: int,
    ) -> FetchPlan:
        """One shard's read, for a fetch round or for re-reading a recovered batch."""
        return FetchPlan(
            round_id=round_id,
            stream_name=self.settings.stream_name,
            shard_id=shard_id,
            client=self.kinesis_spec,
            start=start,
            iterator=iterator,
            hash_key_range=hash_key_range,
            max_records=max_records,
            max_bytes=self.settings.max_buffer_bytes,
            max_time_s=self.settings.fetch_interval_s,
            config=self._reader_config,
            transform=self.settings.transform,
        )

    def _record_round(
        self, round_id: int, rdd: Any, plans: list, states: list, headers: list
    ) -> int:
        round_ = _Round(
            round_id,
            rdd,
            plans,
            headers,
            states,
            records=sum(h.records for h in headers),
            data_bytes=sum(h.data_bytes for h in headers),
        )
        keep = False
        with self._lock:
            for state, header in zip(states, headers):
                self.stats.last_millis_behind[header.shard_id] = header.millis_behind_latest
                if header.records:
                    seq, sub = header.last_esn
                    state.position = StartPosition.after_checkpoint(str(seq), sub)
                state.iterator = header.next_iterator
                if header.shard_ended:
                    state.ended, state.children = True, header.child_shard_ids
                if header.records or header.shard_ended:
                    state.pending_rounds += 1
                    keep = True
            self.stats.rounds += 1
            self.stats.records += round_.records
            self.stats.data_bytes += round_.data_bytes
            if keep:
                self._rounds[round_id] = round_
                self._unassigned.append(round_)
        for header in headers:
            shard = header.shard_id
            if header.millis_behind_latest is not None:
                self.metrics.add(
                    "MillisBehindLatest",
                    header.millis_behind_latest,
                    "Milliseconds",
                    "ProcessTask",
                    shard,
                )
            self.metrics.add(
                "GetRecords.Success", header.get_records_calls, "Count", "KinesisDataFetcher", shard
            )
            self.metrics.add(
                "GetRecords.Throttled", header.throttles, "Count", "KinesisDataFetcher", shard
            )
            self.metrics.add(
                "AggregatesDropped", header.aggregates_dropped, "Count", "ProcessTask", shard
            )
        if not keep:
            rdd.unpersist()
        return round_.records

    # -- batches ----------------------------------------------------------------------------

    def batch_rdd(self, batch_ms: int, sc: Any) -> Any:
        """The RDD of batch ``batch_ms``: the rounds completed since the previous batch.

        Asked again for the same time, it returns the same records; for a time known only
        from a restored batch log (after a restart), it re-reads exactly those ranges.
        """
        with self._lock:
            rounds = self._batches.get(batch_ms)
            logged = self._batch_log.get(batch_ms)
            if rounds is None and logged is None:
                rounds, self._unassigned = self._unassigned, []
                self._batches[batch_ms] = rounds
                self._batch_log[batch_ms] = tuple(
                    BatchRange(h.shard_id, p.hash_key_range, h.first_esn, h.last_esn, h.records)
                    for r in rounds
                    for p, h in zip(r.plans, r.headers)
                    if h.records
                )
                self._trim_batch_log(batch_ms)
        if rounds is None:
            return self._range_rdd(sc, logged or ())
        parts = [
            r.rdd.mapPartitionsWithIndex(deliver(r.plans, r.headers), preservesPartitioning=True)
            for r in rounds
        ]
        if not parts:
            return sc.parallelize([], 1)
        return parts[0] if len(parts) == 1 else sc.union(parts)

    def _range_rdd(self, sc: Any, ranges: tuple) -> Any:
        """Exactly the records of ``ranges``, read from Kinesis (a recovered batch)."""
        if not ranges:
            return sc.parallelize([], 1)
        plans = [
            self._plan(
                0,
                r.shard_id,
                StartPosition.at_esn(str(r.first_esn[0]), r.first_esn[1]),
                None,
                r.hash_key_range,
                r.records,
            )
            for r in ranges
        ]
        headers = [
            RangeHeader(
                0, r.shard_id, r.records, r.first_esn, r.last_esn, 0, None, False, (), None, 0, 0.0
            )
            for r in ranges
        ]
        # Empty partitions: deliver() finds no header and reads each recorded range.
        return sc.parallelize([], len(plans)).mapPartitionsWithIndex(deliver(plans, headers))

    def _trim_batch_log(self, newest_ms: int) -> None:
        horizon = newest_ms - BATCH_LOG_S * 1000
        while self._batch_log and next(iter(self._batch_log)) < horizon:
            self._batch_log.popitem(last=False)

    def batch_log(self) -> dict:
        """Recent batches' ranges (plain data) for Spark's checkpoint."""
        with self._lock:
            return dict(self._batch_log)

    def restore_batch_log(self, log_: dict) -> None:
        """After a restart: remember what the batches before it held, to recompute them."""
        with self._lock:
            for batch_ms, ranges in sorted(log_.items()):
                self._batch_log.setdefault(batch_ms, ranges)

    def batch_completed(self, batch_ms: int, succeeded: bool) -> None:
        """A batch ended; its records count as processed only if every output succeeded."""
        now = time.monotonic()
        with self._lock:
            rounds = self._batches.pop(batch_ms, None)
            if rounds is None:
                return  # a batch from before this receiver (recovery) or with no rounds
            if succeeded:
                self.stats.batches_completed += 1
            else:
                self.stats.batches_failed += 1
            for round_ in rounds:
                round_.completed_at = now
                for state, header in zip(round_.shards, round_.headers):
                    if not (header.records or header.shard_ended):
                        continue
                    if not self._is_current(header.shard_id, state):
                        continue  # the lease was lost (and maybe regained) meanwhile
                    state.pending_rounds -= 1
                    if not succeeded:
                        if not state.blocked:
                            log.warning(
                                "batch %d failed: shard %s will not be checkpointed past %s "
                                "until the application restarts",
                                batch_ms,
                                header.shard_id,
                                state.processed_through or state.checkpointed,
                            )
                        state.blocked = True
                    elif header.records and not state.blocked:
                        seq, sub = header.last_esn
                        state.processed_through = ExtendedSequenceNumber(str(seq), sub)
            headers = [h for r in rounds for h in r.headers if h.records]
            lags = [h.millis_behind_latest for r in rounds for h in r.headers]
            self._last_batch = {
                "batch_time_ms": batch_ms,
                "succeeded": succeeded,
                "records": sum(h.records for h in headers),
                "bytes": sum(h.data_bytes for h in headers),
                "shards_held": len(self._shards),
                "max_millis_behind_latest": max((x for x in lags if x is not None), default=None),
            }
            last = dict(self._last_batch)
            expired = [
                r
                for r in self._rounds.values()
                if r.completed_at is not None and now - r.completed_at >= self.settings.retain_s
            ]
            for round_ in expired:
                del self._rounds[round_.round_id]
        for round_ in expired:
            _unpersist(round_)
        if succeeded:
            for header in headers:
                shard = header.shard_id
                self.metrics.add("RecordsProcessed", header.records, "Count", "ProcessTask", shard)
                self.metrics.add(
                    "DataBytesProcessed", header.data_bytes, "Bytes", "ProcessTask", shard
                )
        log.info(
            "stream %s batch %d %s: %d records, %d bytes, %d shards held, max lag %s ms",
            self.settings.stream_name,
            batch_ms,
            "done" if succeeded else "FAILED",
            last["records"],
            last["bytes"],
            last["shards_held"],
            last["max_millis_behind_latest"],
        )

    def _is_current(self, shard_id: str, state: _Shard) -> bool:
        return self._shards.get(shard_id) is state

    # -- checkpoints ------------------------------------------------------------------------

    def _checkpoint_loop(self) -> None:
        while not self._stop_background.wait(self.settings.checkpoint_interval_s):
            try:
                self.checkpoint_now()
            except Exception:
                log.exception("checkpointing failed for stream %s", self.settings.stream_name)

    def checkpoint_now(self) -> int:
        """Write every processed position not yet written; finish ended shards. Returns writes."""
        with self._lock:
            advance = [
                (shard_id, state, state.processed_through)
                for shard_id, state in self._shards.items()
                if state.processed_through is not None
                and (state.checkpointed is None or state.processed_through > state.checkpointed)
            ]
            finished = [
                (shard_id, state)
                for shard_id, state in self._shards.items()
                if state.ended and state.pending_rounds == 0 and not state.blocked
            ]
        written = 0
        for shard_id, state, esn in advance:
            started = time.monotonic()
            try:
                self.coordinator.checkpoint(shard_id, esn)
            except (LeaseLostError, CheckpointError) as exc:
                self.stats.checkpoints_refused += 1
                log.warning("checkpoint of shard %s at %s not written: %s", shard_id, esn, exc)
                continue
            written += 1
            self.metrics.add("Checkpoints", 1, "Count", "Checkpointer", shard_id)
            self.metrics.add(
                "Checkpoint.Time",
                (time.monotonic() - started) * 1000,
                "Milliseconds",
                "Checkpointer",
                shard_id,
            )
            with self._lock:
                state.checkpointed = esn
                self.stats.checkpoints_written += 1
        for shard_id, state in finished:
            try:
                self.coordinator.shard_ended(shard_id, list(state.children))
            except (LeaseLostError, CheckpointError) as exc:
                log.warning("shard end of %s not recorded: %s", shard_id, exc)
                continue
            written += 1
            log.info("shard %s finished; children %s", shard_id, list(state.children))
            with self._lock:
                if self._shards.get(shard_id) is state:
                    del self._shards[shard_id]
        return written

    # -- metrics and progress ---------------------------------------------------------------

    def _metrics_loop(self) -> None:
        while not self._stop_background.wait(self.settings.metrics_interval_s):
            try:
                self.publish_metrics()
            except Exception:
                log.exception("metrics pass failed for stream %s", self.settings.stream_name)

    def publish_metrics(self) -> int:
        """Add the lease gauges and counters, then publish (one call at most)."""
        counts = self.coordinator.counts()
        for name, metric in (
            ("taken", "TakenLeases"),
            ("stolen", "StolenLeases"),
            ("lost", "LostLeases"),
        ):
            delta = counts[name] - self._published_counts[name]
            self.metrics.add(metric, delta, "Count", "LeaseCoordinator")
        self._published_counts = counts
        held = len(self.coordinator.held_leases())
        self.metrics.add("CurrentLeases", held, "Count", "LeaseCoordinator")
        return self.metrics.publish()

    def progress(self) -> dict:
        """A snapshot of what this stream is doing: lag and throughput without CloudWatch."""
        with self._lock:
            lags = [x for x in self.stats.last_millis_behind.values() if x is not None]
            waiting = [r for r in self._rounds.values() if r.completed_at is None]
            return {
                "stream": self.settings.stream_name,
                "application": self.settings.app_name,
                "worker_id": self.coordinator.worker_id,
                "shards_held": sorted(self._shards),
                "max_millis_behind_latest": max(lags, default=None),
                "millis_behind_latest": dict(self.stats.last_millis_behind),
                "records_fetched": self.stats.records,
                "bytes_fetched": self.stats.data_bytes,
                "rounds": self.stats.rounds,
                "buffered_records": sum(r.records for r in waiting),
                "batches_completed": self.stats.batches_completed,
                "batches_failed": self.stats.batches_failed,
                "checkpoints_written": self.stats.checkpoints_written,
                "last_batch": dict(self._last_batch),
                "metrics_level": self.settings.metrics_level,
                "metrics_calls": self.metrics.calls,
                "metrics_failures": self.metrics.failures,
            }

    # -- introspection ----------------------------------------------------------------------

    def held_shards(self) -> list:
        with self._lock:
            return sorted(self._shards)

    def buffered_records(self) -> int:
        with self._lock:
            return sum(r.records for r in self._rounds.values() if r.completed_at is None)


def _make_metrics(
    settings: StreamSettings, credentials: Any, coordinator: LeaseCoordinator
) -> Metrics:
    if settings.metrics_level == NONE:
        return NullMetrics()
    dimensions = settings.metrics_dimensions or DEFAULT_DIMENSIONS
    if settings.metrics_sink == "log":
        return LogMetrics(settings.metrics_level, dimensions, worker_id=coordinator.worker_id)
    client = ClientSpec(
        "cloudwatch", settings.region_name, settings.cloudwatch_endpoint_url, credentials
    ).client()
    return CloudWatchMetrics(
        client,
        settings.app_name,
        level=settings.metrics_level,
        dimensions=dimensions,
        worker_id=coordinator.worker_id,
    )


def _unpersist(round_: _Round) -> None:
    try:
        round_.rdd.unpersist()
    except Exception:  # the SparkContext may already be gone
        log.debug("could not unpersist round %d", round_.round_id, exc_info=True)
