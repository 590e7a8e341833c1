"""One held shard: its child, its reader and its conversation, on one thread.

A :class:`ShardConsumer` moves through :class:`ConsumerState`::

    STARTING ─initialize answered─► PROCESSING ─shard end read─► SHARD_ENDING ─► DONE
        │                               ├─lease lost─► (leaseLost) ──────────────► DONE
        │                               └─stop────► (shutdownRequested, leaseLost) ► DONE
        └──────── child exits, breaks the protocol or hangs ────────────────────► DONE

(the messages of a KCL 2.x child; a KCL 1.x child's are in :mod:`.protocol_version`)

and ends with one :class:`Outcome` the daemon acts on. Records are read with the
library's :class:`~..retrieval.reader.ShardReader`: by polling, read ahead while the
child works (:class:`~..retrieval.prefetch.ShardPrefetch`, bounded by
``maxPendingProcessRecordsInput``, ``maxCacheByteSize`` and ``maxRecordsCount``, with
``idleTimeBetweenReadsInMillis`` between GetRecords calls, as the KCL's prefetching
publisher), or, with ``retrievalMode`` FANOUT, over the daemon's consumer's subscription
(each event's records as they arrive); a lease lost while a batch is with the child lets
the batch finish (its checkpoints answer ``ShutdownException``) and the child gets
``leaseLost`` and no later records; what was read ahead is dropped (counted, logged).
"""

from __future__ import annotations

import enum
import logging
import threading
import time
from typing import Any, Callable, Optional

from ..backoff import RetryLog
from ..errors import KinesisDStreamError
from ..leases.lease import Lease
from ..retrieval.fanout import FanOutShardReader
from ..retrieval.prefetch import PrefetchBounds, ShardPrefetch
from ..retrieval.read_pool import ReadPool
from ..retrieval.reader import ReadBatch, ReaderConfig, ShardReader, StartPosition
from .checkpointer import ChildCheckpointer
from .child import ChildProcess
from .messages import ChildGone, ProtocolError
from .properties import MultiLangConfig
from .protocol import ChildHung, ShardProtocol
from .protocol_version import ProtocolVersion

log = logging.getLogger(__name__)

#: Waits between reads after a read failure: doubling, capped.
_READ_RETRY_S = (0.5, 1.0, 2.0, 5.0, 10.0)
#: Longest wait for a read-ahead batch before a look at the lease. A lost lease (taken,
#: or self-fenced by the renewal loop), a stop or a halt interrupts the wait
#: (:meth:`ShardPrefetch.interrupt`), and every batch is looked at before it is given, so
#: this only bounds how late an idle shard's child hears of a loss nobody told this
#: worker of. An idle shard's consumer wakes this often: each wake costs the daemon's one
#: interpreter ~30 us and a turn of the GIL (at 1 s, 1,024 idle shards woke it 1,024
#: times a second, as often as their reads).
_TAKE_WAIT_S = 10.0


class ConsumerState(enum.Enum):
    STARTING = "starting"
    PROCESSING = "processing"
    SHARD_ENDING = "shard ending"
    SHUTTING_DOWN = "shutting down"
    DONE = "done"


class Outcome(enum.Enum):
    SHARD_END = "shard end checkpointed"
    LEASE_LOST = "lease lost"
    SHUTDOWN = "shutdown requested"
    #: The shard ended but the child did not checkpoint SHARD_END: start it again later.
    RETRY = "retry"
    #: The child exited or broke the protocol: the Java daemon exits (status 1).
    FAILED = "child failed"
    #: The child passed timeoutInSeconds: the Java daemon halts (status 1, no release).
    HUNG = "child hung"


class ShardConsumer:
    """Runs one shard's child from the lease's checkpoint until an :class:`Outcome`."""

    def __init__(
        self,
        lease: Lease,
        config: MultiLangConfig,
        coordinator: Any,
        kinesis: Any,
        on_done: Callable[[ShardConsumer], None],
        env: Optional[dict] = None,
        *,
        fan_out: Optional[tuple] = None,
        on_initialized: Optional[Callable[[], None]] = None,
        read_pool: Optional[ReadPool] = None,
        protocol_version: ProtocolVersion = ProtocolVersion.KCL_2X,
    ) -> None:
        self.lease = lease
        #: The messages the child knows (chosen once by the daemon for its children).
        self.protocol_version = protocol_version
        #: Where the read-ahead's reads run (the daemon's pool; None: a pool of its own).
        self._read_pool = read_pool
        #: Told once the child answered ``initialize`` (or the worker ended before).
        self._on_initialized = on_initialized
        #: (consumer ARN, SubscriptionPacer) to read with SubscribeToShard; None: polling.
        self._fan_out = fan_out
        self.shard_id = lease.lease_key
        self.config = config
        self._coordinator = coordinator
        self._kinesis = kinesis
        self._on_done = on_done
        self._env = env
        self._lost = threading.Event()
        self._shutdown = threading.Event()
        self._handoff = threading.Event()  # the shutdown is a KCL 3.x handoff, not a stop
        self._wake = threading.Event()
        self.abort = threading.Event()  # a halt or a stop with a hung child
        self.state = ConsumerState.STARTING
        #: When (monotonic) the worker started, None before :meth:`start`.
        self.started_at: Optional[float] = None
        self.outcome: Optional[Outcome] = None
        self.records_delivered = 0
        #: Read failures, counted and logged at a bounded rate (see :meth:`_read_failed`).
        self.read_failures = RetryLog(log, f"reading {config.stream_name}/{self.shard_id}")
        #: The polled shard's read-ahead while it reads (None before, and with fan-out).
        self.prefetch: Optional[ShardPrefetch] = None
        self._children: list = []
        self._thread = threading.Thread(
            target=self._run, name=f"multilang-shard-{self.shard_id}", daemon=True
        )

    # -- control (any thread) ---------------------------------------------------------------

    def start(self) -> ShardConsumer:
        self.started_at = time.monotonic()
        self._thread.start()
        return self

    def starting_since(self, now: float, bound_s: float) -> bool:
        """Started, still STARTING (its child not through ``initialize``), and for less
        than ``bound_s`` seconds at ``now``."""
        started = self.started_at
        return (
            started is not None
            and self.state is ConsumerState.STARTING
            and now - started < bound_s
        )

    def _set_state(self, state: ConsumerState) -> None:
        """Every transition goes through here: leaving STARTING is told (once)."""
        was = self.state
        self.state = state
        if was is ConsumerState.STARTING and self._on_initialized is not None:
            self._on_initialized()

    def lease_lost(self) -> None:
        self._lost.set()
        self._wake_up()

    def request_shutdown(self) -> None:
        self._shutdown.set()
        self._wake_up()

    def request_handoff(self) -> None:
        """A KCL 3.x leader moves the shard: ``shutdownRequested`` as for a stop, but the
        child may take as long as the KCL gives it (see :meth:`_hand_off`)."""
        self._handoff.set()
        self.request_shutdown()

    def halt(self) -> None:
        """Stop at once: no more messages; the child is killed."""
        self.abort.set()
        self._wake_up()

    def _wake_up(self) -> None:
        """The worker thread looks at its signals now: out of a wait after a failed read,
        or of a wait for the read-ahead's next batch."""
        self._wake.set()
        prefetch = self.prefetch
        if prefetch is not None:
            prefetch.interrupt()

    def join(self, timeout_s: float) -> bool:
        self._thread.join(timeout_s)
        return not self._thread.is_alive()

    # -- the worker thread ------------------------------------------------------------------

    def _run(self) -> None:
        child = ChildProcess(self.config.executable_name, self.shard_id, self._env)
        grace = self.config.shutdown_grace_s
        try:
            child.start()
            checkpointer = ChildCheckpointer(
                self.shard_id,
                self.lease.checkpoint,
                write=lambda esn: self._coordinator.checkpoint(self.shard_id, esn),
                finish=lambda: self._coordinator.shard_ended(self.shard_id, self._children),
            )
            protocol = ShardProtocol(
                self.shard_id,
                child.send,
                child.receive,
                checkpointer,
                timeout_s=self.config.timeout_s,
                abort=self.abort,
                version=self.protocol_version,
            )
            self.outcome = self._converse(protocol, checkpointer)
        except (ChildGone, ProtocolError, OSError) as exc:
            log.error("shard %s: %s (exit code %s)", self.shard_id, exc, child.exit_code())
            self.outcome = Outcome.FAILED
        except ChildHung as exc:
            log.error("shard %s: %s", self.shard_id, exc)
            self.outcome = Outcome.HUNG
        except KinesisDStreamError as exc:  # not a read: reads are retried (_read_failed)
            log.error("shard %s: failed (a lease write or the start): %s", self.shard_id, exc)
            self.outcome = Outcome.FAILED
        except Exception:
            log.exception("shard %s: unexpected failure", self.shard_id)
            self.outcome = Outcome.FAILED
        finally:
            self._set_state(ConsumerState.DONE)
            if self.outcome is Outcome.HUNG or self.abort.is_set():
                child.kill()
            try:
                child.stop(grace)
            finally:
                log.info(
                    "shard %s worker done: %s, %d records delivered, %d lines of the "
                    "child's stdout skipped (not messages)",
                    self.shard_id,
                    self.outcome.value if self.outcome else "?",
                    self.records_delivered,
                    child.reader.skipped_lines if child.reader is not None else 0,
                )
                self._on_done(self)

    def _converse(self, protocol: ShardProtocol, checkpointer: ChildCheckpointer) -> Outcome:
        checkpoint = self.lease.checkpoint
        start = StartPosition.from_checkpoint(checkpoint, self.config.initial_timestamp)
        if start is None or self._fan_out is not None:
            protocol.initialize(checkpoint.sequence_number, checkpoint.sub_sequence_number)
            self._set_state(ConsumerState.PROCESSING)
            if start is None:  # already finished: nothing to read
                return self._end_shard(protocol, checkpointer)
            with self._reader(start) as reader:
                return self._deliver(
                    protocol,
                    checkpointer,
                    lambda: reader.read(max_records=self.config.max_records, max_calls=1),
                )
        with self._reader(start) as reader:
            # Reading starts while the child initializes, as the KCL's InitializeTask
            # starts its records publisher before it initializes the record processor.
            prefetch = self.prefetch = ShardPrefetch(
                reader, self._prefetch_bounds(), pool=self._read_pool
            ).start()
            outcome: Optional[Outcome] = None
            try:
                protocol.initialize(checkpoint.sequence_number, checkpoint.sub_sequence_number)
                self._set_state(ConsumerState.PROCESSING)
                outcome = self._deliver(protocol, checkpointer, lambda: prefetch.take(_TAKE_WAIT_S))
                return outcome
            finally:
                prefetch.close(outcome.value if outcome else "the shard's consumer failed")

    def _prefetch_bounds(self) -> PrefetchBounds:
        config = self.config
        return PrefetchBounds(
            max_pending_batches=config.max_pending_process_records_input,
            max_bytes=config.max_cache_byte_size,
            max_records=config.max_records_count,
            idle_between_calls_s=config.idle_time_between_reads_s,
        )

    def _reader(self, start: StartPosition) -> ShardReader:
        shard = (self._kinesis, self.config.stream_name, self.shard_id, start)
        options: dict = {
            "hash_key_range": self.lease.hash_key_range,
            "config": ReaderConfig(max_records_per_call=self.config.max_records),
        }
        if self._fan_out is None:
            return ShardReader(*shard, **options)
        consumer_arn, pacer = self._fan_out
        return FanOutShardReader(*shard, consumer_arn=consumer_arn, pacer=pacer, **options)

    def _deliver(
        self,
        protocol: ShardProtocol,
        checkpointer: ChildCheckpointer,
        next_batch: Callable[[], Optional[ReadBatch]],
    ) -> Outcome:
        """Give the child records until the shard ends or the worker stops.

        ``next_batch`` is the next batch read (None: none yet; a subscription's and the
        read-ahead's own pace: no wait here but after a failure)."""
        while True:
            ended = self._stopping(protocol)
            if ended is not None:
                return ended
            try:
                batch = next_batch()
            except KinesisDStreamError as exc:
                self._read_failed(exc)
                continue
            if batch is None:
                continue
            self.read_failures.succeeded()
            ended = self._stopping(protocol)  # records read after a loss are not given
            if ended is not None:
                if batch.records:
                    log.info(
                        "stream %s, shard %s: %d records read and not given to the child "
                        "(%s); the next owner reads them from the last checkpoint",
                        self.config.stream_name,
                        self.shard_id,
                        len(batch.records),
                        ended.value,
                    )
                return ended
            if batch.records:
                protocol.process_records(batch.records, batch.millis_behind_latest)
                self.records_delivered += len(batch.records)
                self._coordinator.membership.throughput.note(
                    self.shard_id, sum(len(r.data) for r in batch.records)
                )
            if batch.shard_ended:
                self._children = list(batch.child_shard_ids)
                return self._end_shard(protocol, checkpointer)

    def _read_failed(self, exc: KinesisDStreamError) -> None:
        """A read failed, for whatever reason: read again after a wait (doubling, capped)
        for as long as the lease is held. The daemon exits for a child that fails, never
        for a read that fails (as the Java daemon); the failures are counted and logged
        at a bounded rate."""
        wait = _READ_RETRY_S[min(self.read_failures.in_a_row, len(_READ_RETRY_S) - 1)]
        self.read_failures.failed(exc, wait)
        self._wake.wait(wait)

    def _stopping(self, protocol: ShardProtocol) -> Optional[Outcome]:
        if self.abort.is_set():
            return Outcome.SHUTDOWN
        if self._lost.is_set() or not self._coordinator.holds(self.shard_id):
            # (the second: lost before this worker was registered for the listener)
            protocol.lease_lost()
            return Outcome.LEASE_LOST
        if self._shutdown.is_set():
            self._set_state(ConsumerState.SHUTTING_DOWN)
            grace = self.config.shutdown_grace_s
            if self._handoff.is_set():
                if not self._hand_off(protocol):
                    return Outcome.LEASE_LOST
            else:
                protocol.shutdown_requested(timeout_s=grace)
            # Then the lease goes, as the KCL's graceful shutdown ends with leaseLost.
            protocol.lease_lost(timeout_s=grace)
            return Outcome.SHUTDOWN
        return None

    def _hand_off(self, protocol: ShardProtocol) -> bool:
        """``shutdownRequested`` for a handoff; False if the child never answered.

        Not bounded by ``shutdownGraceMillis`` (a stop's budget), as in the KCL: with
        ``timeoutInSeconds`` the child has that long (past it :class:`ChildHung`, and the
        daemon halts, as Java's does); without, until the leader's handoff timeout
        (``gracefulLeaseHandoffTimeoutMillis``), when the lease moves anyway and the child
        is stopped as for a lost lease.
        """
        if self.config.timeout_s is not None:
            protocol.shutdown_requested()
            return True
        bound = self._coordinator.membership.handoff_timeout_s
        try:
            protocol.shutdown_requested(timeout_s=bound)
        except ChildHung as exc:
            log.warning(
                "shard %s of stream %s: %s, the handoff's timeout; the lease moves without "
                "its last checkpoint and the child is stopped",
                self.shard_id,
                self.config.stream_name,
                exc,
            )
            return False
        return True

    def _end_shard(self, protocol: ShardProtocol, checkpointer: ChildCheckpointer) -> Outcome:
        self._set_state(ConsumerState.SHARD_ENDING)
        protocol.shard_ended()
        if checkpointer.finished:
            return Outcome.SHARD_END
        log.error(
            "shard %s: the child answered %s without checkpointing the shard's end; "
            "the shard stays unfinished (its children wait) and a new child gets it again",
            self.shard_id,
            protocol.dialect.shard_end_name,
        )
        return Outcome.RETRY
