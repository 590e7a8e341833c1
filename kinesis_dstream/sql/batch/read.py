"""Reading one shard's slice of a batch read, in an executor task.

The slice's records go out page by page as Arrow batches: nothing is recorded anywhere
(no end store, no lease, no checkpoint), because both ends are fixed before any task
runs. A retried task reads the same records: from the same start to the same end
(a sequence number, or an arrival time; ``latest`` was pinned to one when planned).

The read stops at the first of: a record at or past the end (arrival time at or after
``before_ts``, or sequence number at or after ``before_seq``), a closed shard's end, and
an open shard's tip (a short page with MillisBehindLatest 0). The shard reader does the
rest as it does for the streaming source: de-aggregation of KPL records with the
shard's hash range, pacing (minFetchPeriod), retries (numRetries...).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

from ...errors import RecordsLostError
from ...retrieval.reader import ReadPhase, ShardReader
from ...retrieval.start import WHOLE_RECORD
from ..executor.partition import ReadSettings, at_tip, cut_at_arrival, shard_reader
from ..positions import parse_utc, start_position
from ..schema import records_to_arrow
from .plan import ShardSlice

log = logging.getLogger(__name__)


def read_slice(part: ShardSlice, settings: ReadSettings) -> Iterator[Any]:
    """The slice's records as Arrow batches (the streaming source's record columns)."""
    start = start_position(part.start)
    assert start is not None
    end = part.end
    before_ts = parse_utc(end.before_ts) if end.before_ts is not None else None
    # an exclusive sequence number end: every extended sequence number below (seq, 0)
    until = None if end.before_seq is None else (int(end.before_seq) - 1, WHOLE_RECORD)
    per_call = settings.config.max_records_per_call
    reader = shard_reader(part, part.start, settings)
    count = 0
    try:
        while True:
            chunk = reader.read(max_records=per_call, max_calls=1, until=until)
            if count == 0 and start.iterator_type == "AT_SEQUENCE_NUMBER":
                _check_start(part, reader, settings.fail_on_data_loss)
            records = chunk.records
            cut = False
            if before_ts is not None:
                records, cut = cut_at_arrival(records, before_ts, inclusive=False)
            if records:
                count += len(records)
                yield records_to_arrow(records, part.stream_name, part.shard_id)
            done = reader.phase is ReadPhase.RANGE_DONE and not reader.has_pending
            if cut or done or reader.shard_ended or at_tip(chunk, per_call):
                break
    finally:
        reader.close()
    log.info("batch read of %s: %d records", part.describe(), count)


def _check_start(part: ShardSlice, reader: ShardReader, fail: bool) -> None:
    """A start at a sequence number that is no longer there (trimmed): say so."""
    first = reader.first_raw_sequence
    wanted = start_position(part.start)
    if first is None or wanted is None or wanted.sequence_number is None:
        return
    if int(first) > int(wanted.sequence_number):
        message = (
            f"stream {part.stream_name!r}, shard {part.shard_id}: the start sequence number "
            f"{wanted.sequence_number} is no longer in the shard (its first record is "
            f"{first}): records before it expired past the retention"
        )
        if fail:
            raise RecordsLostError(message + " (failOnDataLoss=true)")
        log.warning("%s; reading from %s (failOnDataLoss=false)", message, first)
