"""``glueContext.forEachBatch`` with Glue's semantics.

The query is ``frame.writeStream.foreachBatch(...).trigger(processingTime=windowSize)``
on ``checkpointLocation``. Each batch is persisted (``persistDataFrame``, at
``storageLevel``, MEMORY_AND_DISK by default) and counted; the batch function is called
only for a batch with records. A failed query is started again from its checkpoint (the
failed batch runs again: nothing is lost, a record may be written twice) up to
``batchMaxRetries`` times (default 3), waiting 1 s, 2 s, then 5 s as Glue does; the
count starts over once a batch after a retry succeeds. An error whose text starts with
``CheckpointMetadataNotFound`` is raised at once, and so is an error of this layer raised
by the batch function (an option it cannot take, a call it does not provide): no restart
heals those, and the script's error is the one line reported.

Where Glue's loop starts a query that stopped cleanly again, this one returns: a clean
stop is a Ctrl-C or SIGTERM (the query is stopped gracefully; its checkpoint keeps where
it was, the next run resumes there) or a query stopped from elsewhere. The graceful stop
is bounded: the batch in progress may take STOP_WAIT_S, the query's stop
QUERY_STOP_TIMEOUT_S; a second Ctrl-C or SIGTERM ends the process at once.

A ``checkpointLocation`` on S3 where Spark has no S3 filesystem is kept in a local
directory restored from S3 at start and mirrored to S3 after each committed batch
(:mod:`.checkpoint_mirror`). The sources' range ends go inside the checkpoint
(:mod:`.checkpoint_ends`), so the checkpoint is all a restart needs.
"""

from __future__ import annotations

import enum
import logging
import pathlib
import re
import threading
import time
from typing import TYPE_CHECKING, Any, Callable, Optional

from ...errors import KinesisServiceError
from ...spark_internals import hadoop_can_write, hadoop_mkdirs
from ...stop_signals import stop_signals
from ..errors import GlueError, NotProvidedError
from ..options import ForEachBatchOptions

if TYPE_CHECKING:
    from .checkpoint_mirror import CheckpointMirror

log = logging.getLogger(__name__)

#: Glue's waits before the first, second, and every later restart (seconds).
RESTART_WAITS_S = (1.0, 2.0, 5.0)
#: The longest one wait for the query's end blocks a stop request.
POLL_S = 1.0
#: On a stop request, how long the batch in progress may take to finish first.
STOP_WAIT_S = 120.0
#: Then how long ``query.stop()`` may take (Spark's ``spark.sql.streaming.stopTimeout``,
#: set when the session leaves it at 0, "wait forever": a batch stuck in a call that
#: never returns would keep the job from ending).
QUERY_STOP_TIMEOUT_S = 30.0
STOP_TIMEOUT_CONF = "spark.sql.streaming.stopTimeout"


class LoopEnd(enum.Enum):
    STOPPED = "stopped"  # a stop request (Ctrl-C, SIGTERM, the caller's event)
    TERMINATED = "terminated"  # the query ended without error (stopped elsewhere)


def restart_wait_s(attempt: int) -> float:
    """Glue's wait before restart ``attempt`` (1, 2, ...): 1 s, 2 s, then 5 s."""
    return RESTART_WAITS_S[min(attempt, len(RESTART_WAITS_S)) - 1]


def no_restart_heals(exc: BaseException) -> bool:
    """A script error: a call this layer does not provide, or an option or argument it
    cannot take. A failing service (a throttled catalog: :class:`GlueServiceError`, any
    AWS call past its retries) is not: the query restarts as Glue's does."""
    if isinstance(exc, NotProvidedError):
        return True
    return isinstance(exc, GlueError) and not isinstance(exc, KinesisServiceError)


def check_checkpoint_location(sc: Any, location: str) -> None:
    """A checkpoint Spark cannot write fails here, before the query reads a record: one
    whose scheme has no Hadoop FileSystem it can load (but S3: :func:`needs_mirror`), or
    a directory it cannot make."""
    instead = (
        "pass a local or mounted directory instead (e.g. --TempDir /tmp/glue-temp, which "
        "Glue Studio's scripts build the checkpoint from)"
    )
    if not hadoop_can_write(sc, location):
        scheme = location.split("://", 1)[0] if "://" in location else location
        raise GlueError(
            f"forEachBatch: checkpointLocation {location!r}: this Spark has no Hadoop "
            f"FileSystem it can load for {scheme}://, so it cannot keep the query's "
            f"checkpoint there; {instead}, or an s3:// path (mirrored from a local copy "
            "where Spark has no S3 filesystem)"
        )
    failure = hadoop_mkdirs(sc, location)
    if failure is not None:
        raise GlueError(
            f"forEachBatch: checkpointLocation {location!r} cannot be created ({failure}); "
            f"{instead}, or one this job may write"
        )


class BatchLoop:
    """One forEachBatch call: start the query, wait, restart on failure as Glue does."""

    def __init__(
        self,
        frame: Any,
        batch_function: Callable[[Any, int], Any],
        options: ForEachBatchOptions,
        stop: Optional[threading.Event] = None,
    ) -> None:
        self.frame = frame
        self.batch_function = batch_function
        self.options = options
        #: Set to stop (the caller's); by default Ctrl-C and SIGTERM in the main thread.
        self._stop = stop
        #: Glue's counters: batch calls since the last success, and the retry attempt.
        self._run = 0
        self.retry_attempt = 0
        #: Batches Spark ran, and those the batch function was called for (with records).
        self.batches_seen = 0
        self.batches_called = 0
        self._fatal: Optional[BaseException] = None
        #: The S3 mirror of the checkpoint, while a query runs on a local copy of it.
        self.mirror: Optional[CheckpointMirror] = None

    def _batch(self, data_frame: Any, batch_id: int) -> None:
        if self._run > self.retry_attempt:  # the previous batch succeeded
            self._run = 0
            if self.retry_attempt > 0:
                self.retry_attempt = 0
                log.info("The previous batch succeeded; the retry count is 0 again")
        self._run += 1
        self.batches_seen += 1
        self._check_mirror()  # no batch runs ahead of a mirror that cannot upload
        if not self.options.persist:
            if data_frame.take(1):
                self._call(data_frame, batch_id)
            return
        from pyspark import StorageLevel

        data_frame.persist(getattr(StorageLevel, self.options.storage_level))
        try:
            records = data_frame.count()
            log.debug("batch %d: %d records", batch_id, records)
            if records > 0:
                self._call(data_frame, batch_id)
        finally:
            data_frame.unpersist()

    def _call(self, data_frame: Any, batch_id: int) -> None:
        self.batches_called += 1
        try:
            self.batch_function(data_frame, batch_id)
        except Exception as exc:
            if no_restart_heals(exc):
                self._fatal = exc
            raise

    def _writer(self, checkpoint: str) -> Any:
        opts = self.options
        writer = self.frame.writeStream.foreachBatch(self._batch)
        try:
            writer = writer.trigger(processingTime=opts.window_size)
        except Exception as exc:  # Spark's IllegalArgumentException: one line of ours
            raise GlueError(
                f"forEachBatch: option 'windowSize'={opts.window_size!r} is not a Spark "
                f'interval (e.g. "100 seconds"): {str(exc).splitlines()[0]}'
            ) from None
        if self.mirror is not None:
            # a file: URI, not a bare path: Spark resolves a bare one against
            # fs.defaultFS (hdfs:// on YARN), where the mirror would never see it
            checkpoint = pathlib.Path(checkpoint).resolve().as_uri()
        return writer.option("checkpointLocation", checkpoint)

    def run(self) -> LoopEnd:
        """Until a stop request, a clean end of the query, or a failure past the retries."""
        # here, not at the top: the runner imports this module where pyspark may be absent
        from .checkpoint_ends import checkpoint_started, clear_ends, place_ends
        from .checkpoint_mirror import CheckpointMirror, needs_mirror

        location = self.options.checkpoint_location
        sc = self.frame.sparkSession.sparkContext
        if needs_mirror(sc, location):
            self.mirror = CheckpointMirror(location)
            try:
                self.mirror.restore()
            except BaseException:
                self.mirror.discard()
                self.mirror = None
                raise
            checkpoint = self.mirror.local_dir
            started = checkpoint_started(checkpoint)
        else:
            check_checkpoint_location(sc, location)
            checkpoint = location
            started = checkpoint_started(location)
        ended = False
        try:
            place_ends(location, started)
            writer = self._writer(checkpoint)
            bound_query_stop(self.frame.sparkSession)
            if self.mirror is not None:
                self.mirror.start()
            result = self._run_loop(writer)
            ended = True
            return result
        finally:
            clear_ends()
            self._close_mirror(raise_errors=ended)

    def _close_mirror(self, raise_errors: bool) -> None:
        """Upload what is committed and end the mirror; its failure is the job's error
        unless the job is failing already (then it is logged beside it)."""
        if self.mirror is None:
            return
        mirror, self.mirror = self.mirror, None
        try:
            mirror.close()
        except GlueError as exc:
            if raise_errors:
                raise
            log.error("%s", exc)

    def _check_mirror(self) -> None:
        if self.mirror is not None and self.mirror.error is not None:
            try:
                self.mirror.check()
            except GlueError as exc:
                self._fatal = exc  # no restart heals it: the job fails with its line
                raise

    def _run_loop(self, writer: Any) -> LoopEnd:
        if self._stop is not None:
            return self._loop(writer, self._stop)
        if threading.current_thread() is threading.main_thread():
            with stop_signals(force_on_second=True) as stop:  # a second one: exit at once
                return self._loop(writer, stop)
        return self._loop(writer, threading.Event())

    def _loop(self, writer: Any, stop: threading.Event) -> LoopEnd:
        limit = self.options.batch_max_retries
        while True:
            try:
                if self.retry_attempt > 0:
                    log.warning(
                        "Retrying micro batch processing, attempt %d out of %d",
                        self.retry_attempt,
                        limit,
                    )
                return self._await(writer.start(), stop)
            except Exception as exc:
                if str(exc).startswith("CheckpointMetadataNotFound"):
                    raise
                if self._fatal is not None:
                    raise self._fatal from exc  # its own one line, without restarts
                if stop.is_set():  # a stop interrupted the batch: it runs again next time
                    log.warning("the query ended on the stop: %s", first_line(exc))
                    return LoopEnd.STOPPED
                self.retry_attempt += 1
                if self.retry_attempt > limit:
                    log.error(
                        "Exceeded the maximum number of batch retries (%d): %s",
                        limit,
                        first_line(exc),
                    )
                    raise
                wait = restart_wait_s(self.retry_attempt)
                log.warning(
                    "the query failed (%s); starting it again in %g s", first_line(exc), wait
                )
                if stop.wait(wait):
                    return LoopEnd.STOPPED

    def _await(self, query: Any, stop: threading.Event) -> LoopEnd:
        while not stop.is_set():
            if query.awaitTermination(POLL_S):  # raises the query's error
                return LoopEnd.TERMINATED
            if self.mirror is not None and self.mirror.error is not None:
                query.stop()
                self._check_mirror()
        self._stop_between_batches(query)
        return LoopEnd.STOPPED

    def _stop_between_batches(self, query: Any) -> None:
        """Stop ``query`` once the batch in progress (if any) has finished and committed,
        so a graceful stop leaves no batch half written (bounded by STOP_WAIT_S)."""
        log.warning(
            "stopping the query after the batch in progress, if any (Ctrl-C again to stop at "
            "once); its checkpoint %s keeps where it is: run the job again to resume",
            self.options.checkpoint_location,
        )
        started = time.monotonic()
        while query.isActive and query.status.get("isTriggerActive"):
            if time.monotonic() - started > STOP_WAIT_S:
                log.warning("the batch in progress ran past %g s; stopping it", STOP_WAIT_S)
                break
            time.sleep(0.1)
        try:
            query.stop()  # bounded by the session's stop timeout (bound_query_stop)
        except Exception as exc:  # Spark's TimeoutException: the batch is stuck in a call
            log.error(
                "the query did not stop within its stop timeout (%s): its batch is stuck; the "
                "job ends without it, and the batch runs again at the next start: %s",
                self.frame.sparkSession.conf.get(STOP_TIMEOUT_CONF),
                first_line(exc),
            )
            return
        log.info("query stopped in %.1f s", time.monotonic() - started)


def bound_query_stop(session: Any) -> None:
    """Bound ``query.stop()`` by :data:`QUERY_STOP_TIMEOUT_S` where the session leaves
    Spark's stop timeout at 0 (wait forever). Read by a query when it starts."""
    current = str(session.conf.get(STOP_TIMEOUT_CONF, "0")).strip().lower()
    if re.fullmatch(r"0+\s*[a-z]*", current):
        session.conf.set(STOP_TIMEOUT_CONF, f"{int(QUERY_STOP_TIMEOUT_S * 1000)}ms")


def first_line(exc: BaseException) -> str:
    """An error's first line, and the error inside it when it has one: the Python error
    inside a Spark error, or the Java exception inside a Py4J error (its line
    ``: org.apache...Exception: message``; ``An error occurred while calling o54.start.``
    alone says nothing)."""
    text = str(exc).strip()
    head = text.splitlines()[0] if text else type(exc).__name__
    inner = []
    for line in text.splitlines()[1:]:
        line = line.strip()
        line = line[1:].strip() if line.startswith(":") else line  # Py4J's ": <class>: msg"
        name = line.split(":", 1)[0]
        if ":" in line and name.endswith(("Error", "Exception")) and " " not in name:
            inner.append(line)
    if inner and inner[-1] not in head:
        return f"{head[:300]} ... {inner[-1][:300]}"
    return head[:600]
