"""The round thread: plans and runs a fetch round every ``fetch_interval_s``, timed by
its :class:`~.pacing.RoundPacer` to end just before each batch time.

A round reads every held shard that is ready, unblocked and past its backoff
(:meth:`~.receiver_state.ReceiverState.plan_round`), bounded by ``max_records_per_fetch``,
the buffer bounds and ``spark.streaming.receiver.maxRate`` (user records a second per
stream, after KPL de-aggregation, as kinesis-asl counts them), in one Spark job
(:func:`~.round_job.run_round`), and records it in the receiver's state; it takes no lock
of its own. The receiver owns the :class:`RoundThread`, which owns its thread: started by
:meth:`start_thread`, stopped and joined (its Spark job cancelled first) by :meth:`stop`.
It also owns the warm-up thread (:meth:`start_warm_up`): one small Spark job at start,
while the leases are being set up, that starts the executors' Python workers and loads
the reading code and the Kinesis client's service model there, so the first round does
not pay for them (about 2 s on a cold local[2], against 0.4 s for a warm round).
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, Optional, Protocol

from ..aws import ClientSpec
from ..retrieval.reader import ReaderConfig, StartPosition
from ..spark_internals import context_alive
from .batch_cut import BATCH_CUTS, RoundInFlight, cut_wait_s
from .executor_read import FetchPlan, RangeList, warm_up
from .pacing import RoundPacer
from .receiver_state import ReceiverState
from .round_job import run_round, unpersist
from .settings import StreamSettings, shards_per_task

log = logging.getLogger(__name__)


class ReadyLeases(Protocol):
    """Which held leases may be read now (the lease coordinator)."""

    def ready_leases(self) -> dict: ...


class RoundObserver(Protocol):
    """Hears of each round's ranges (metrics)."""

    def round_fetched(self, ranges: list) -> None: ...


class RoundThread:
    """Plans and runs rounds for one receiver, recording them in its ``state``."""

    def __init__(
        self,
        settings: StreamSettings,
        kinesis_spec: ClientSpec,
        state: ReceiverState,
        leases: ReadyLeases,
        observer: RoundObserver,
        join_timeout_s: float,
    ) -> None:
        self.settings = settings
        self.kinesis_spec = kinesis_spec
        self.sc: Any = None
        #: spark.streaming.receiver.maxRate: user records a second per stream (0: none).
        self.max_rate = 0
        self._state = state
        self._leases = leases
        self._observer = observer
        self._join_timeout_s = join_timeout_s
        self._ranges: Any = None  # Spark accumulator of the rounds' ShardRanges
        self._reader_config = ReaderConfig(
            drop_outside_shard=settings.drop_aggregates_outside_shard
        )
        self._job_group = f"kinesis-dstream-{settings.stream_id}"
        #: retrievalMode FANOUT: the consumer rounds subscribe with (set at start).
        self.consumer_arn: Optional[str] = None
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._warm_up_thread: Optional[threading.Thread] = None
        #: When rounds start; the round thread's own.
        self.pacer = RoundPacer(settings.fetch_interval_s)
        if settings.batch_interval_s is not None:  # in the settings: survives a restart
            self.pacer.align(settings.batch_interval_s)
        self._max_wait_s = settings.fetch_interval_s + (settings.batch_interval_s or 0.0)
        #: The round running now, which a batch cut at its time waits for (batch_cut).
        self.in_flight = RoundInFlight()
        #: The longest a batch waits for it.
        self.cut_wait_s = cut_wait_s(settings.batch_interval_s, settings.fetch_interval_s)
        #: Every stream's cut of a batch time shares one deadline (batch_cut).
        self.batch_cuts = BATCH_CUTS

    def configure(self, sc: Any) -> None:
        """Read Spark's settings (retries, maxRate) and make the range accumulator."""
        self.sc = sc
        self._ranges = sc.accumulator([], RangeList())
        conf = sc.getConf()
        self._reader_config = ReaderConfig.from_spark_conf(
            conf, drop_outside_shard=self.settings.drop_aggregates_outside_shard
        )
        self.max_rate = int(conf.get("spark.streaming.receiver.maxRate", "0") or 0)

    def start_warm_up(self) -> None:
        """Warm the executors' Python workers in the background (see the module doc);
        once, also when a failed start is tried again."""
        if self._warm_up_thread is not None or self._stop.is_set():
            return
        self._warm_up_thread = threading.Thread(
            target=self._warm_up, name=f"kinesis-warmup-{self.settings.stream_id}", daemon=True
        )
        self._warm_up_thread.start()

    def _warm_up(self) -> None:
        started = time.monotonic()
        try:
            self.sc.setJobGroup(self._job_group, "kinesis_dstream warm-up", False)
            if self._stop.is_set():  # a stop that came first: its cancel has happened
                return
            tasks = max(1, int(self.sc.defaultParallelism))
            spec = self.kinesis_spec
            self.sc.parallelize(range(tasks), tasks).foreachPartition(
                lambda _: warm_up(spec)  # a lambda: a module-level function pickles by name
            )
        except Exception:  # a faster start only: the first round does the same work
            if not self._stop.is_set():
                log.info("warming the Python workers up failed", exc_info=True)
            return
        log.debug("Python workers warmed up in %.2fs", time.monotonic() - started)

    def start_thread(self) -> None:
        self._thread = threading.Thread(
            target=self._loop, name=f"kinesis-fetcher-{self.settings.stream_id}", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        """Start no more rounds, cancel the one in flight and join the thread (bounded)."""
        self._stop.set()
        self.in_flight.close()  # no batch waits for a round any more
        if context_alive(self.sc):
            try:
                self.sc.cancelJobGroup(self._job_group)
            except Exception:  # the context may be stopping under us
                log.debug("could not cancel fetch jobs", exc_info=True)
        deadline = time.monotonic() + self._join_timeout_s  # one bound for both threads
        for thread in (self._thread, self._warm_up_thread):
            if thread is None:
                continue
            thread.join(timeout=max(0.0, deadline - time.monotonic()))
            if thread.is_alive():
                log.error("thread %s did not stop in %.0fs", thread.name, self._join_timeout_s)

    def _loop(self) -> None:
        self.sc.setJobGroup(self._job_group, "kinesis_dstream fetch rounds", False)
        while not self._stop.is_set():
            start = self.pacer.next_start(time.time())
            # Bounded: a wall clock stepping forward or back never stalls the rounds.
            wait = min(start - time.time(), self._max_wait_s)
            if self._stop.wait(max(0.0, wait)):
                break
            try:
                self.fetch_round()
            except Exception:
                if self._stop.is_set():
                    break
                if not context_alive(self.sc):
                    # Stopped under us (sc.stop(), Spark's shutdown hook), not by ssc.stop:
                    # say so, the leases are still renewed until the process exits.
                    log.error(
                        "stream %s: the SparkContext was stopped: no more fetch rounds",
                        self.settings.stream_name,
                    )
                    break
                log.exception("fetch round failed for stream %s", self.settings.stream_name)

    def fetch_round(self) -> int:
        """Plan and run one round; returns the user records fetched."""
        ready = self._leases.ready_leases()
        settings = self.settings
        planned = self._state.plan_round(
            ready, settings.max_buffer_records, settings.max_buffer_bytes
        )
        if planned is None:
            return 0
        round_id, shards = planned.round_id, planned.shards
        per_shard = settings.max_records_per_fetch
        if self.max_rate > 0:  # user records per second per stream, as kinesis-asl
            # by the time since the last round started, when paced (a closing round
            # may come early), at most one interval's worth
            since = min(self.pacer.gap_s or settings.fetch_interval_s, settings.fetch_interval_s)
            budget = self.max_rate * since
            per_shard = max(1, min(per_shard, int(budget / len(shards))))
        plans = [
            self.plan(round_id, shard_id, c.position, c.iterator, c.hash_key_range, per_shard)
            for shard_id, c in shards
        ]
        generations = [c.generation for _, c in shards]
        per_task = shards_per_task(settings, len(plans), self.sc.defaultParallelism)
        started = time.monotonic()
        self.in_flight.started(time.time(), self.pacer.round_length_s())
        try:
            round_ = run_round(
                self.sc,
                round_id,
                plans,
                generations,
                self._ranges,
                settings.storage_level,
                per_task,
            )
            self.pacer.round_took(time.monotonic() - started)
            # A shard that filled its read has more now: read again as soon as Kinesis
            # allows, unless maxRate is what bounded it (then the next round keeps the
            # interval).
            full = any(r.records >= per_shard for r in round_.ranges)
            self.pacer.backlog = full and self.max_rate <= 0
            round_.planned_at = planned.planned_at
            keep = self._state.round_recorded(round_)
        finally:
            self.in_flight.ended()  # a batch waiting for this round takes it now
        log.debug(
            "stream %s round %d: %d shards in %d tasks, %d records",
            settings.stream_name,
            round_id,
            len(plans),
            len(round_.groups or plans),
            round_.records,
        )
        self._observer.round_fetched(round_.ranges)
        if not keep:
            unpersist(round_)
        return round_.records

    def wait_for_round_at(self, batch_ms: int) -> None:
        """Batch time ``batch_ms`` is being cut: wait, at most :attr:`cut_wait_s` from its
        first cut in this process (any stream's), for a round that started before it to
        be recorded, so the batch holds its records (see :mod:`.batch_cut`)."""
        batch_s = batch_ms / 1000
        started = time.monotonic()
        if not self.batch_cuts.wait(self.in_flight, batch_ms, self.cut_wait_s):
            log.debug(
                "stream %s: batch %.3f cut without the round still running after %.2fs",
                self.settings.stream_name,
                batch_s,
                self.cut_wait_s,
            )
        elif time.monotonic() - started > 0.001:
            log.debug(
                "stream %s: batch %.3f waited %.3fs for the round running at its time",
                self.settings.stream_name,
                batch_s,
                time.monotonic() - started,
            )

    def plan(
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
            consumer_arn=self.consumer_arn,
        )
