"""The MultiLangDaemon: leases of ``applicationName``, one child per ready shard.

:class:`MultiLangDaemon` owns a :class:`~..leases.worker.LeaseWorker`'s coordinator (the
KCL's table format, shard sync, renew/take/steal, parents before children) and one
:class:`~.shard_consumer.ShardConsumer` per held READY lease. Its loop (every
``poll_s``) starts a worker for each ready lease without one and acts on each finished
worker's outcome, the way the Java daemon does:

- shard end checkpointed, lease lost, shutdown: the worker is gone; the coordinator
  already knows (a finished shard wakes its children's parent check);
- the shard ended without a SHARD_END checkpoint: a new child gets the shard again
  after a pause (the KCL retries its shutdown task);
- a child that exits or breaks the protocol: the Java daemon calls ``System.exit(1)``,
  whose shutdown hook stops gracefully; so this daemon stops gracefully (every other
  child gets ``shutdownRequested``, the leases are released) and :meth:`run` returns 1;
- a child past ``timeoutInSeconds``: the Java daemon halts the JVM (no hooks, leases
  expire); this daemon kills every child, stops without releasing, and returns 1;
- a read that fails (Kinesis down, answering 5xx, throttling) never ends a worker nor
  the daemon: the worker reads again for as long as it holds the lease.

Children start a few at a time (``max_starting``, by default the machine's cores): a
worker counts as starting from its child's launch until the child answers
``initialize``, and the next ready lease gets its worker when one of them is through
(or has been starting for ``start_slot_s``, :data:`START_SLOT_S` by default, so one
slow child never holds the others back). The Java daemon starts every shard's child at
once; on a small machine a worker given a thousand shards then spends minutes starting
interpreters, and its lease renewals, which share the cores, came so late that half
its leases self-fenced.

:meth:`run` returns when its ``stop`` event is set (SIGTERM in the CLI) after a graceful
stop: ``shutdownRequested`` to each child, then ``leaseLost``, children stopped, leases
released; no thread or child outlives it (each join is bounded; a child that does not
exit is killed).

The children's protocol version (:mod:`.protocol_version`) is chosen once, before
anything starts: ``multiLangProtocol`` if the file declares it, else what the child's own
amazon_kclpy decodes (:mod:`.child_probe`), else KCL 2.x's. A KCL 1.x child gets KCL 1.x's
messages (``shutdown`` TERMINATE / ZOMBIE; at a stop ``shutdownRequested`` only if it knows
it), and its file means what it meant to KCL 1.x (:func:`~.protocol_version.kcl1_config`).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from typing import Any, Optional

from ..aws import create_client
from ..leases.listeners import LeaseListeners
from ..leases.worker import LeaseWorker, LeaseWorkerConfig
from ..retrieval.consumers import ensure_consumer
from ..retrieval.events import SubscriptionPacer
from ..retrieval.read_pool import ReadPool
from .child_probe import choose_protocol_version
from .properties import MultiLangConfig
from .protocol_version import kcl1_config
from .shard_consumer import Outcome, ShardConsumer

log = logging.getLogger(__name__)

#: Pause before a shard whose child did not checkpoint its end gets a new child.
RETRY_PAUSE_S = 2.0
#: Threads reading for every polled shard (:class:`~..retrieval.read_pool.ReadPool`): a
#: read of an idle shard is ~1 ms of wall time, and a throttled one waits out its
#: backoff on its thread, so a few dozen serve thousands of shards.
READ_THREADS = 32
#: How long the stop waits for the read threads (each ends when its read returns).
READ_POOL_JOIN_S = 30.0
#: How long one starting child holds back the next ones at most: a child slower than
#: this to answer ``initialize`` no longer counts against ``max_starting``.
START_SLOT_S = 10.0


def default_max_starting() -> int:
    """Children starting at once by default: one per core, at least two."""
    return max(2, os.cpu_count() or 2)


class MultiLangDaemon:
    """Runs ``config.executable_name`` for every shard this worker holds."""

    def __init__(
        self,
        config: MultiLangConfig,
        *,
        env: Optional[dict] = None,
        poll_s: float = 0.2,
        max_starting: Optional[int] = None,
        start_slot_s: float = START_SLOT_S,
    ) -> None:
        self._env = env
        #: The messages every child of this daemon is sent (see the module).
        self.protocol_version = choose_protocol_version(config, env)
        config = kcl1_config(config, self.protocol_version)
        self.config = config
        self.poll_s = poll_s
        #: Children launched and not yet through ``initialize``, at most (see the module).
        self.max_starting = default_max_starting() if max_starting is None else max_starting
        if self.max_starting < 1:
            raise ValueError(f"max_starting must be >= 1, got {max_starting}")
        self.start_slot_s = start_slot_s
        self._lock = threading.Lock()
        self._workers: dict = {}  # shard id -> ShardConsumer, under _lock
        self._retry_at: dict = {}  # shard id -> monotonic time, under _lock
        self._finished: list = []  # workers done, not yet reaped, under _lock
        #: The held leases' version at the last look for ready ones, and whether some
        #: were left without a worker then (no slot, a retry pause): the loop's thread's.
        self._looked_at: Optional[int] = None
        self._left_waiting = False
        self._wake = threading.Event()
        self.exit_code = 0
        self._halt = False
        #: The fan-out consumer's ARN once :meth:`run` found or registered it (FANOUT).
        self.consumer_arn: Optional[str] = None
        self._pacer = SubscriptionPacer()
        #: The polled shards' reads (started by :meth:`run`, stopped after the workers).
        self.read_pool = ReadPool(f"kcl-reads-{config.application_name}", READ_THREADS)
        session = _session(config.credentials.profile)
        dynamo_session = (
            session
            if config.dynamodb_credentials is None
            else _session(config.dynamodb_credentials.profile)
        )
        self.kinesis = create_client(
            "kinesis",
            region_name=config.region_name,
            endpoint_url=config.kinesis_endpoint,
            session=session,
        )
        worker = LeaseWorker(
            LeaseWorkerConfig.of(config.application_name, config, config.table_name),
            self.kinesis,
            lambda read_timeout_s: create_client(
                "dynamodb",
                region_name=config.region_name,
                endpoint_url=config.dynamodb_endpoint,
                read_timeout_s=read_timeout_s,
                session=dynamo_session,
            ),
            LeaseListeners(on_lease_lost=self._lease_lost, on_lease_handoff=self._lease_handoff),
        )
        self.dynamodb = worker.dynamodb
        self.table, self.shard_sync = worker.table, worker.shard_sync
        self.coordinator = worker.coordinator

    @property
    def worker_id(self) -> str:
        return self.coordinator.worker_id

    def shards(self) -> list:
        """Shard ids with a running child."""
        with self._lock:
            return sorted(self._workers)

    def consumer(self, shard_id: str) -> Optional[ShardConsumer]:
        """The running consumer of ``shard_id``, None if there is none."""
        with self._lock:
            return self._workers.get(shard_id)

    def run(self, stop: threading.Event) -> int:
        """Hold leases and run children until ``stop`` is set or a child fails.

        Returns the exit code: 0 after a stop, 1 after a child failed or hung.
        """
        self.table.create_if_missing()
        if self.config.retrieval_mode == "FANOUT":
            self.consumer_arn = self._consumer()
        log.info(
            "worker %s of application %s on stream %s: running %r",
            self.worker_id,
            self.config.application_name,
            self.config.stream_name,
            self.config.executable_name,
        )
        self.coordinator.start()
        try:
            self.read_pool.start()
            while not stop.is_set() and self.exit_code == 0:
                self._reap()
                if self.exit_code:
                    break
                self._start_ready()
                self._wake.wait(self.poll_s)
                self._wake.clear()
        finally:
            self._stop_workers(stop)
            self.read_pool.stop(READ_POOL_JOIN_S)
            self.coordinator.stop(release=not self._halt)
            self._reap()
        return self.exit_code

    def _consumer(self) -> str:
        """The enhanced fan-out consumer: ``consumerArn``, else found or registered by
        ``consumerName`` (default: the application name, as the KCL's FanOutConfig)."""
        config = self.config
        name = None if config.consumer_arn else (config.consumer_name or config.application_name)
        consumer = ensure_consumer(
            self.kinesis, config.stream_name, consumer_name=name, consumer_arn=config.consumer_arn
        )
        log.info(
            "reading stream %s with enhanced fan-out consumer %s (%s)",
            config.stream_name,
            consumer.name,
            consumer.arn,
        )
        return consumer.arn

    # -- workers -------------------------------------------------------------------------

    def _start_ready(self) -> None:
        # Copying a thousand held leases five times a second is most of an idle daemon's
        # loop: look again only when they changed or some were left waiting.
        version = self.coordinator.held_version
        if version == self._looked_at and not self._left_waiting:
            return
        self._looked_at, self._left_waiting = version, False
        ready = self.coordinator.ready_leases()
        now = time.monotonic()
        with self._lock:
            slots = self.max_starting - sum(
                1 for w in self._workers.values() if w.starting_since(now, self.start_slot_s)
            )
        for key, lease in sorted(ready.items()):
            if slots <= 0:
                self._left_waiting = True  # a child gets through initialize: look again
                return
            with self._lock:
                if key in self._workers:
                    continue
                if self._retry_at.get(key, 0.0) > now:
                    self._left_waiting = True  # look again when the pause is over
                    continue
                worker = ShardConsumer(
                    lease,
                    self.config,
                    self.coordinator,
                    self.kinesis,
                    self._done,
                    self._env,
                    fan_out=(self.consumer_arn, self._pacer) if self.consumer_arn else None,
                    on_initialized=self._wake.set,
                    read_pool=self.read_pool,
                    protocol_version=self.protocol_version,
                )
                self._workers[key] = worker
            slots -= 1
            worker.start()

    def _done(self, worker: ShardConsumer) -> None:
        with self._lock:
            if self._workers.get(worker.shard_id) is worker:
                del self._workers[worker.shard_id]
            self._finished.append(worker)
        self._wake.set()

    def _reap(self) -> None:
        with self._lock:
            finished, self._finished = self._finished, []
        if finished:
            self._looked_at = None  # a shard may be ready again without a worker
        for worker in finished:
            worker.join(5.0)
            self.coordinator.hand_off(worker.shard_id)  # if the leader was moving it
            outcome = worker.outcome
            if outcome is Outcome.RETRY:
                with self._lock:
                    self._retry_at[worker.shard_id] = time.monotonic() + RETRY_PAUSE_S
            elif outcome is Outcome.FAILED and self.exit_code == 0:
                log.error(
                    "the child of shard %s failed: stopping the daemon (exit 1), as the "
                    "Java MultiLangDaemon does",
                    worker.shard_id,
                )
                self.exit_code = 1
            elif outcome is Outcome.HUNG and self.exit_code == 0:
                log.error(
                    "the child of shard %s did not answer within timeoutInSeconds=%g: "
                    "halting (exit 1, leases not released), as the Java MultiLangDaemon "
                    "does",
                    worker.shard_id,
                    self.config.timeout_s or 0,
                )
                self.exit_code = 1
                self._halt = True

    def _lease_handoff(self, key: str, new_owner: str) -> None:
        """A KCL 3.x leader moves the shard to ``new_owner``: its child gets
        ``shutdownRequested`` (it may checkpoint), then ``leaseLost``; the lease is
        transferred when the worker is done (:meth:`_reap`), or at once with no child."""
        with self._lock:
            worker = self._workers.get(key)
        if worker is None:
            self.coordinator.hand_off(key)
            return
        log.info("shard %s: handing off to %s: its child gets shutdownRequested", key, new_owner)
        worker.request_handoff()

    def _lease_lost(self, key: str, reason: str) -> None:
        with self._lock:
            worker = self._workers.get(key)
        if worker is not None:
            log.info("shard %s: lease lost (%s): its child gets leaseLost", key, reason)
            worker.lease_lost()

    def _stop_workers(self, stop: threading.Event) -> None:
        with self._lock:
            workers = list(self._workers.values())
        for worker in workers:
            if self._halt:
                worker.halt()
            else:
                worker.request_shutdown()
        grace = self.config.shutdown_grace_s
        deadline = time.monotonic() + 2 * grace + 1.0
        for worker in workers:
            if not worker.join(max(0.0, deadline - time.monotonic())):
                log.error(
                    "shard %s: its child did not finish within %.1fs of the stop: killing it",
                    worker.shard_id,
                    2 * grace + 1.0,
                )
                worker.halt()
        for worker in workers:
            if not worker.join(grace + 10.0):
                log.error("shard %s: worker thread still running after the stop", worker.shard_id)


def _session(profile: Optional[str]) -> Any:
    import boto3

    return boto3.session.Session(profile_name=profile) if profile else None
