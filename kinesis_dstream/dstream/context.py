"""How a stream is wired into a StreamingContext, and the per-process registry.

An always-empty directory watched by ``textFileStream`` gives a DStream with one (empty)
RDD per batch, checkpointable by Spark; ``transform`` turns each into the batch's Kinesis
records by asking the stream's :class:`~.receiver.KinesisReceiver` (one per
``createStream`` call, found in a per-process registry by the stream's id). The function
given to ``transform`` carries only :class:`~.settings.StreamSettings` and the batch
log, so after a restart from a Spark checkpoint it builds a new receiver that resumes
from the DynamoDB checkpoints. A streaming listener reports each batch's outcome;
``ssc.stop`` is wrapped (on that context only) to stop fetching first and, after Spark
stops, write the last checkpoints and release (graceful) or keep (not graceful) the
leases. One receiver's failure to stop never skips the others.
"""

from __future__ import annotations

import atexit
import functools
import logging
import os
import tempfile
import threading
from datetime import datetime
from typing import Any, Optional

from ..spark_internals import input_stream_ids, job_times_ms, remember_ms
from .input_info import report_batch, reporter_for
from .receiver import JOIN_TIMEOUT_S, KinesisReceiver
from .settings import StreamSettings

log = logging.getLogger(__name__)


_LOCK = threading.Lock()
_RECEIVERS: dict = {}  # stream id -> KinesisReceiver
_CREDENTIALS: dict = {}  # stream id -> {"kinesis": AWSCredentials, ...}; never pickled
_CONTEXT_STREAMS: dict = {}  # id(StreamingContext) -> [stream id]


def _tick_directory() -> str:
    """An always-empty directory: ``textFileStream`` on it ticks once per batch."""
    path = os.path.join(tempfile.gettempdir(), "kinesis_dstream_tick")
    os.makedirs(path, exist_ok=True)
    return path


def _receiver(settings: StreamSettings) -> KinesisReceiver:
    with _LOCK:
        receiver = _RECEIVERS.get(settings.stream_id)
        if receiver is None:
            credentials = _CREDENTIALS.get(settings.stream_id)
            if credentials is None and settings.explicit_credentials:
                log.warning(
                    "stream %s was created with explicit credentials, which Spark "
                    "checkpoints do not keep: using the default credential chain",
                    settings.stream_name,
                )
            receiver = KinesisReceiver(settings, credentials)
            _RECEIVERS[settings.stream_id] = receiver
        return receiver


def _attach(ssc: Any, stream_id: str) -> None:
    """Listen to ``ssc``'s batches and wrap its ``stop``, once per context."""
    with _LOCK:
        streams = _CONTEXT_STREAMS.get(id(ssc))
        if streams is not None:
            if stream_id not in streams:
                streams.append(stream_id)
            return
        _CONTEXT_STREAMS[id(ssc)] = [stream_id]
    from pyspark.streaming.listener import StreamingListener

    class BatchListener(StreamingListener):
        def onStreamingStarted(self, streamingStarted: Any) -> None:
            try:
                for receiver in _receivers_of(ssc):
                    receiver.start(ssc.sparkContext)
            except Exception:  # Spark swallows listener errors silently: log them
                log.exception("could not start the Kinesis receivers")

        def onBatchCompleted(self, batchCompleted: Any) -> None:
            try:
                info = batchCompleted.batchInfo()
                batch_ms = info.batchTime().milliseconds()
                outputs = info.outputOperationInfos()
                succeeded = all(o.failureReason() is None for o in outputs.values())
                for receiver in _receivers_of(ssc):
                    receiver.batch_completed(batch_ms, succeeded)
            except Exception:
                log.exception("could not record a completed batch")

    ssc.addStreamingListener(BatchListener())
    spark_stop = ssc.stop
    spark_await = ssc.awaitTermination
    spark_await_or_timeout = ssc.awaitTerminationOrTimeout
    stopping, stopped = threading.Event(), threading.Event()

    @functools.wraps(spark_stop)
    def stop(stopSparkContext: bool = True, stopGraceFully: bool = False) -> None:
        stopping.set()
        receivers = _receivers_of(ssc)
        for receiver in receivers:
            _each(receiver.stop_fetching)  # no fetch job may outlive the SparkContext
        try:
            spark_stop(stopSparkContext, stopGraceFully)
        finally:
            for receiver in receivers:
                _each(receiver.stop, release=stopGraceFully)
            _forget(ssc)
            stopped.set()

    def wait_for_our_stop() -> None:
        # Spark's wait ends when the JVM context stops, before the last checkpoints and
        # lease releases that follow it in stop(): wait for those too, bounded.
        if stopping.is_set():
            stopped.wait(timeout=_stop_bound_s(_receivers_of(ssc)))

    @functools.wraps(spark_await)
    def awaitTermination(timeout: Optional[int] = None) -> None:
        spark_await(timeout)
        wait_for_our_stop()

    @functools.wraps(spark_await_or_timeout)
    def awaitTerminationOrTimeout(timeout: int) -> bool:
        terminated = spark_await_or_timeout(timeout)
        if terminated:
            wait_for_our_stop()
        return terminated

    ssc.stop = stop
    ssc.awaitTermination = awaitTermination
    ssc.awaitTerminationOrTimeout = awaitTerminationOrTimeout


def _each(step: Any, **kwargs: Any) -> None:
    """Run one receiver's stop step; its failure is logged, never skips the others."""
    try:
        step(**kwargs)
    except Exception:
        log.exception("stopping a Kinesis receiver failed")


def _stop_bound_s(receivers: list) -> float:
    """How long a stop may take: the joins, then the lease coordinator's own bound."""
    failover = max((r.settings.failover_time_s for r in receivers), default=10.0)
    return failover + 4 * JOIN_TIMEOUT_S


def _receivers_of(ssc: Any) -> list:
    with _LOCK:
        return [_RECEIVERS[s] for s in _CONTEXT_STREAMS.get(id(ssc), []) if s in _RECEIVERS]


def _forget(ssc: Any) -> None:
    with _LOCK:
        for stream_id in _CONTEXT_STREAMS.pop(id(ssc), []):
            _RECEIVERS.pop(stream_id, None)


def progress() -> list:
    """A snapshot dict per running stream in this process: lag, throughput, leases, batches."""
    with _LOCK:
        receivers = list(_RECEIVERS.values())
    return [receiver.progress() for receiver in receivers]


@atexit.register
def _stop_all() -> None:
    """At interpreter exit, stop receivers still running (leases left to expire)."""
    with _LOCK:
        receivers = list(_RECEIVERS.values())
        _RECEIVERS.clear()
    for receiver in receivers:
        try:
            receiver.stop(release=False)
        except Exception:
            log.debug("receiver stop at exit failed", exc_info=True)


class _BatchLog:
    """Rides inside the ``transform`` function, so Spark's checkpoint carries it.

    Pickled (each time Spark writes a checkpoint), it holds the settings and the recent
    batches' ranges (plain data: shard, first and last position, count). After a restart
    the batches Spark recomputes read exactly those ranges again, as kinesis-asl's
    checkpointed block ranges do; batches whose records were checkpointed to DynamoDB
    are therefore never lost from restored state.
    """

    def __init__(self, settings: StreamSettings, input_stream_id: Optional[int] = None) -> None:
        self.settings = settings
        self.restored: dict = {}
        #: The input stream its batches are reported under (the Streaming tab).
        self.input_stream_id = input_stream_id

    def __getstate__(self) -> dict:
        with _LOCK:
            receiver = _RECEIVERS.get(self.settings.stream_id)
        ranges = receiver.batch_log() if receiver is not None else self.restored
        return {
            "settings": self.settings,
            "restored": ranges,
            "input_stream_id": self.input_stream_id,
        }

    def __setstate__(self, state: dict) -> None:
        self.settings = state["settings"]
        self.restored = state["restored"]
        self.input_stream_id = state.get("input_stream_id")


def _batch(log_: _BatchLog, time: datetime, rdd: Any) -> Any:
    """The ``transform`` function's body: batch ``time``'s Kinesis records."""
    receiver = _receiver(log_.settings)
    if log_.restored:  # unpickled from a checkpoint: the batches before the restart
        receiver.restore_batch_log(log_.restored)
        log_.restored = {}
    from pyspark.streaming import StreamingContext

    ssc = StreamingContext.getActive()
    if ssc is not None:  # after a restart from a checkpoint, createStream did not run
        _attach(ssc, log_.settings.stream_id)
    receiver.start(rdd.context)
    batch_ms = round(time.timestamp() * 1000)
    owners_ms: tuple = (batch_ms,)
    if ssc is not None:
        receiver.remember(remember_ms(ssc))
        owners_ms = job_times_ms(ssc, batch_ms)
    # The Streaming tab shows a batch's records under its first job time.
    owner_ms = owners_ms[0]
    batch = receiver.batch_rdd(batch_ms, rdd.context, owners_ms)
    if ssc is not None and log_.input_stream_id is not None:  # a Streaming tab to show it in
        settings = log_.settings
        reporter = reporter_for(settings.stream_id, settings.stream_name, settings.app_name)
        ranges, lags = receiver.batch_ranges(batch_ms)
        report_batch(ssc, log_.input_stream_id, reporter, batch_ms, owner_ms, ranges, lags)
    return batch


def create(ssc: Any, settings: StreamSettings, credentials: Optional[dict]) -> Any:
    """The DStream of one ``createStream`` call: a tick stream transformed by its receiver."""
    if credentials:
        _CREDENTIALS[settings.stream_id] = credentials
    _receiver(settings)
    _attach(ssc, settings.stream_id)
    # The batches' records are reported under the tick stream's id (the Streaming tab).
    before = input_stream_ids(ssc)
    tick = ssc.textFileStream(_tick_directory())
    created = input_stream_ids(ssc) - before
    log_ = _BatchLog(settings, max(created) if created else None)

    def batch(time: datetime, rdd: Any) -> Any:
        return _batch(log_, time, rdd)

    return tick.transform(batch)
