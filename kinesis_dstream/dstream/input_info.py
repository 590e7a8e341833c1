"""Each batch's records in Spark's Streaming tab, as kinesis-asl's receivers show them.

A batch's input size is the sum of the ``StreamInputInfo`` reported to the scheduler's
``InputInfoTracker`` for its time before ``JobGenerator`` reads them; the ``transform``
function for a time runs inside ``graph.generateJobs`` for it, so reporting from there is
in time. Each ``createStream`` reports under its tick stream, replacing the 0 that
stream reports for itself (a second, never-read input stream would be lost from a graph
restored by ``getOrCreate``), once per job time: a window's transforms for the times
between job times add to the next job time, reported when the transform for the job
time itself runs (the last a window asks for). The row is named for the stream through a
receiver-started event (:func:`~kinesis_dstream.spark_internals.name_input_stream`).
Reporting never fails a batch: a failure is logged once and the batch goes on.
"""

from __future__ import annotations

import logging
import threading
from typing import Any, Callable

from ..spark_internals import name_input_stream, report_input_info

log = logging.getLogger(__name__)

#: Job times remembered as reported (a repeated transform call must not report twice).
_REMEMBERED = 1000


class InputInfoReporter:
    """One ``createStream``'s reports; thread-safe (transforms run on Spark's threads)."""

    def __init__(self, stream_name: str, application: str) -> None:
        self.stream_name = stream_name
        self.application = application
        self._lock = threading.Lock()
        self._seen: dict = {}  # batch time -> True: its records are counted once
        self._pending: dict = {}  # job time -> [BatchRange, ...] not reported yet
        self._failed = False
        self.reported: dict = {}  # job time -> records reported (for tests)
        self.named = False  # the input stream's row got its name

    def batch(
        self,
        batch_ms: int,
        owner_ms: int,
        ranges: tuple,
        lags: dict,
        report: Callable[[int, int, str], None],
    ) -> None:
        """Batch ``batch_ms`` (reported under job time ``owner_ms``) holds ``ranges``."""
        with self._lock:
            if batch_ms in self._seen:
                return  # asked again for the same time: already counted
            self._seen[batch_ms] = True
            pending = self._pending.setdefault(owner_ms, [])
            pending.extend(ranges)
            if batch_ms != owner_ms or owner_ms in self.reported:
                return
            del self._pending[owner_ms]
            count = sum(r.records for r in pending)
            self.reported[owner_ms] = count
            _trim(self._seen)
            _trim(self.reported)
        try:
            report(owner_ms, count, self.describe(pending, lags))
        except Exception as exc:
            self.failed(exc)

    def failed(self, exc: Exception) -> None:
        """Log the first failure to report; the batches go on."""
        if not self._failed:
            self._failed = True
            log.warning(
                "could not show stream %s's batches in Spark's Streaming tab (%s: %s); "
                "the batches go on, this is not logged again",
                self.stream_name,
                type(exc).__name__,
                exc,
            )

    def row_name(self, input_stream_id: int) -> str:
        """The Streaming tab's row: the stream and application, as a receiver's name."""
        return f"Kinesis stream {self.stream_name} ({self.application}) [{input_stream_id}]"

    def describe(self, ranges: list, lags: dict) -> str:
        """The batch page's description: per shard, first and last sequence number,
        the records and how far behind the shard's last read was."""
        lines = [f"Kinesis stream {self.stream_name} (application {self.application})"]
        by_shard: dict = {}
        for r in ranges:
            first, last, count = by_shard.get(r.shard_id, (r.first_esn, r.last_esn, 0))
            by_shard[r.shard_id] = (
                min(first, r.first_esn),
                max(last, r.last_esn),
                count + r.records,
            )
        for shard_id, (first, last, count) in sorted(by_shard.items()):
            lag = lags.get(shard_id)
            behind = "" if lag is None else f", {lag} ms behind latest"
            lines.append(
                f"{shard_id}: {count} records, {first[0]}/{first[1]} to {last[0]}/{last[1]}"
                f"{behind}"
            )
        return "\n".join(lines)


def _trim(entries: dict) -> None:
    while len(entries) > _REMEMBERED:
        del entries[min(entries)]


_REPORTERS: dict = {}
_REPORTERS_LOCK = threading.Lock()


def reporter_for(stream_id: str, stream_name: str, application: str) -> InputInfoReporter:
    with _REPORTERS_LOCK:
        reporter = _REPORTERS.get(stream_id)
        if reporter is None:
            reporter = _REPORTERS[stream_id] = InputInfoReporter(stream_name, application)
        return reporter


def report_batch(
    ssc: Any,
    input_stream_id: int,
    reporter: InputInfoReporter,
    batch_ms: int,
    owner_ms: int,
    ranges: tuple,
    lags: dict,
) -> None:
    """Report through Spark's InputInfoTracker (:mod:`~kinesis_dstream.spark_internals`); never
    raises."""
    if not reporter.named:
        reporter.named = True
        try:
            name_input_stream(ssc, input_stream_id, reporter.row_name(input_stream_id))
        except Exception as exc:
            reporter.failed(exc)

    reporter.batch(
        batch_ms,
        owner_ms,
        ranges,
        lags,
        lambda time_ms, count, text: report_input_info(
            ssc, input_stream_id, time_ms, count, text
        ),
    )
