"""What a receiver tells people: metrics at the KCL's levels, log lines, ``progress()``.

:class:`ReceiverObserver` turns receiver events (a round fetched, a batch completed, a
checkpoint written or refused, shards blocked) into metrics and log lines, and builds the
``progress()`` snapshot. A blocked shard is never silent: it is listed in ``progress()``,
counted in the ``BlockedShards`` metric, and warned about every checkpoint interval.
"""

from __future__ import annotations

import logging
from typing import Any, Optional

from ..aws import ClientSpec
from ..kpl.outside import OutsideShardTally
from ..leases.coordinator import LeaseCoordinator
from ..metrics import (
    DEFAULT_DIMENSIONS,
    NONE,
    CloudWatchMetrics,
    LogMetrics,
    Metrics,
    NullMetrics,
)
from .settings import StreamSettings

log = logging.getLogger(__name__)

#: A read paused this long at the buffer bound is warned about at every checkpoint pass.
PAUSE_WARNING_S = 60.0


class ReceiverObserver:
    """Metrics, log lines and progress of one receiver; thread-safe (Metrics is)."""

    def __init__(
        self, settings: StreamSettings, credentials: Any, coordinator: LeaseCoordinator
    ) -> None:
        self.settings = settings
        self.coordinator = coordinator
        self.metrics = _make_metrics(settings, credentials, coordinator)
        self.batches_completed = 0
        self.batches_failed = 0
        self.checkpoints_written = 0
        self.checkpoints_refused = 0
        self.checkpoint_passes = 0
        self.last_batch: dict = {}
        self._published_counts = {"taken": 0, "stolen": 0, "lost": 0}
        #: KPL user records outside their shard's hash range, per shard.
        self.outside_shard = OutsideShardTally(
            settings.stream_name, settings.drop_aggregates_outside_shard
        )

    def round_fetched(self, ranges: list) -> None:
        add = self.metrics.add
        for read in ranges:
            shard = read.shard_id
            if read.millis_behind_latest is not None:
                add(
                    "MillisBehindLatest",
                    read.millis_behind_latest,
                    "Milliseconds",
                    "ProcessTask",
                    shard,
                )
            add(
                "GetRecords.Success", read.get_records_calls, "Count", "KinesisDataFetcher", shard
            )
            add("GetRecords.Throttled", read.throttles, "Count", "KinesisDataFetcher", shard)
            add("AggregatesDropped", read.aggregates_dropped, "Count", "ProcessTask", shard)
            add(
                "UserRecordsOutsideShard",
                read.user_records_outside_shard,
                "Count",
                "ProcessTask",
                shard,
            )
            add("MalformedAggregates", read.malformed_aggregates, "Count", "ProcessTask", shard)
            self.outside_shard.add(
                shard,
                read.user_records_outside_shard,
                read.aggregates_dropped,
                read.user_records_dropped,
                read.malformed_aggregates,
            )
            if read.error_kind is not None:
                add("ReadFailures", 1, "Count", "KinesisDataFetcher", shard)

    def batch_completed(self, batch_ms: int, succeeded: bool, parts: list, held: int) -> None:
        ranges = [
            r.ranges[i] for r, included in parts for i in sorted(included) if r.ranges[i].records
        ]
        if succeeded:
            self.batches_completed += 1
            for read in ranges:
                shard = read.shard_id
                self.metrics.add("RecordsProcessed", read.records, "Count", "ProcessTask", shard)
                self.metrics.add(
                    "DataBytesProcessed", read.data_bytes, "Bytes", "ProcessTask", shard
                )
        else:
            self.batches_failed += 1
        lags = [h.millis_behind_latest for r, _ in parts for h in r.ranges]
        self.last_batch = {
            "batch_time_ms": batch_ms,
            "succeeded": succeeded,
            "records": sum(h.records for h in ranges),
            "bytes": sum(h.data_bytes for h in ranges),
            "shards_held": held,
            "max_millis_behind_latest": max((x for x in lags if x is not None), default=None),
        }
        last = self.last_batch
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

    def checkpoint_written(self, shard_id: str, seconds: float) -> None:
        self.checkpoints_written += 1
        self.metrics.add("Checkpoints", 1, "Count", "Checkpointer", shard_id)
        self.metrics.add(
            "Checkpoint.Time", seconds * 1000, "Milliseconds", "Checkpointer", shard_id
        )

    def checkpoint_refused(self, shard_id: str, position: Any, exc: Exception) -> None:
        self.checkpoints_refused += 1
        log.warning("checkpoint of shard %s at %s not written: %s", shard_id, position, exc)

    def checkpoint_pass(
        self, blocked: dict, stalled: list, paused_s: Optional[float] = None
    ) -> None:
        """After every checkpoint pass: count and name the blocked shards, the batches
        whose completion never came, and a read paused at the buffer bound for longer than
        :data:`PAUSE_WARNING_S` (every interval, not once: they must not go quiet)."""
        self.checkpoint_passes += 1
        if paused_s is not None and paused_s >= PAUSE_WARNING_S:
            log.warning(
                "stream %s: no shard has been read for %.0fs: what was fetched and is not "
                "yet in a completed batch is at the buffer bound (maxBufferedRecords / "
                "maxBufferedBytes); batches are completing slower than records arrive, or "
                "not at all",
                self.settings.stream_name,
                paused_s,
            )
        for batch_ms in stalled:
            log.warning(
                "stream %s batch %d never reported completion (a lost listener event?): its "
                "shards are not checkpointed past it until the application restarts",
                self.settings.stream_name,
                batch_ms,
            )
        self.outside_shard.warn(log)
        self.metrics.add("BlockedShards", len(blocked), "Count", "Checkpointer")
        for shard_id, reason in blocked.items():
            log.warning(
                "stream %s shard %s is blocked, its checkpoint does not move: %s",
                self.settings.stream_name,
                shard_id,
                reason,
            )

    def publish(self) -> int:
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

    def progress(self, state: dict) -> dict:
        """The ``progress()`` snapshot: the receiver state's part (shards, failures,
        fetch counters: :meth:`~.receiver_state.ReceiverState.progress`) and this
        observer's (batches, checkpoints, metrics)."""
        return {
            "stream": self.settings.stream_name,
            "application": self.settings.app_name,
            "worker_id": self.coordinator.worker_id,
            **state,
            # per shard: user_records_outside_shard, aggregates_dropped, user_records_dropped,
            # malformed_aggregates
            "kpl_outside_shard": self.outside_shard.snapshot(),
            "batches_completed": self.batches_completed,
            "batches_failed": self.batches_failed,
            "checkpoints_written": self.checkpoints_written,
            "checkpoints_refused": self.checkpoints_refused,
            "checkpoint_passes": self.checkpoint_passes,
            "last_batch": dict(self.last_batch),
            "metrics_level": self.settings.metrics_level,
            "metrics_calls": self.metrics.calls,
            "metrics_failures": self.metrics.failures,
        }


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
