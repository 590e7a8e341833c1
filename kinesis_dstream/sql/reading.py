"""What a read task needs from the source's options, and the columns its batches leave in.

Shared by the streaming source (:mod:`.source`) and batch reads (:mod:`.batch`): the same
reader settings from the same options, the same record columns or parsed payload columns,
the same count of records that did not parse.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from typing import Any, Optional

from ..retrieval.reader import ReaderConfig
from .config.options import SourceOptions
from .executor.partition import ReadSettings
from .parsing.payload import CORRUPT_RECORD_COLUMN, PayloadParser
from .schema import OutputColumns

log = logging.getLogger(__name__)

#: How many corrupt records a read task's log line names by sequence number.
NAMED_CORRUPT_RECORDS = 5


def read_settings(options: SourceOptions) -> ReadSettings:
    """What executors read with, from the source's options (streaming and batch reads)."""
    config = ReaderConfig(
        min_call_interval_s=options.min_fetch_period_ms / 1000.0,
        max_records_per_call=options.max_records_per_fetch,
        drop_outside_shard=options.drop_aggregates_outside_shard,
    )
    if options.client_backoff is not None:
        config = replace(config, backoff=options.client_backoff)
    rate = options.max_fetch_rate_mb_s
    time_ms = options.max_fetch_time_ms
    return ReadSettings(
        client_spec=options.connection.client_spec(),
        config=config,
        fail_on_data_loss=options.fail_on_data_loss,
        max_fetch_time_s=None if time_ms is None else time_ms / 1000.0,
        max_fetch_rate_bytes_s=None if rate is None else rate * 1024 * 1024,
    )


def shaped(
    batches: Iterator[Any], columns: OutputColumns, parser: Optional[PayloadParser], what: str
) -> Iterator[Any]:
    """A task's record batches in the source's columns: the record columns, or Glue's
    classification (payload columns; a record that does not parse is kept, raw, in
    ``_corrupt_record`` with its other columns null, and counted in the log with the
    first ones named: stream/shard#sequence number). ``what``: the task, for the log."""
    if parser is None:
        for batch in batches:
            yield columns.shape(batch)
        return
    reasons: Counter = Counter()
    named: list = []
    for batch in batches:
        parsed, bad = parser.parse_counted(batch)
        reasons.update(bad)
        if bad and len(named) < NAMED_CORRUPT_RECORDS:
            named += corrupt_records(batch, parsed, NAMED_CORRUPT_RECORDS - len(named))
        yield parsed
    if reasons:
        log.warning(
            "%d records of %s did not parse as %s: kept in column %s (%s; first: %s)",
            sum(reasons.values()),
            what,
            parser.fmt.classification,
            CORRUPT_RECORD_COLUMN,
            "; ".join(f"{n}: {reason}" for reason, n in reasons.most_common(5)),
            ", ".join(named),
        )


def corrupt_records(batch: Any, parsed: Any, limit: int) -> list:
    """``stream/shard#sequenceNumber`` of up to ``limit`` corrupt records of ``batch``."""
    corrupt = parsed.column(CORRUPT_RECORD_COLUMN).is_valid().to_pylist()
    rows = [i for i, bad in enumerate(corrupt) if bad][:limit]
    streams, shards, numbers = (
        batch.column(c).to_pylist() for c in ("stream", "shardId", "sequenceNumber")
    )
    return [f"{streams[i]}/{shards[i]}#{numbers[i]}" for i in rows]
