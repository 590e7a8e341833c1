"""Several streams in one source (Databricks' comma-separated ``streamName``).

Each stream keeps its own :class:`~.runner.SourceRunner`, unchanged: its own shards,
offsets, range ends, peeks, throttling streaks and data-loss rules. A query's offset is
then the list of its streams' offsets, in the order the option names them::

    {"v": 1, "streams": [<offset of stream 1>, <offset of stream 2>, ...]}

A single-stream query keeps the single-stream offset as it always was, so checkpoints
written before this module existed resume unchanged. One stream's deletion fails the
query (as it does alone); one stream's throttling delays only that stream's ranges.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Optional

from ...errors import shown
from ..config.options import OptionError, SourceOptions
from ..ends.store import EndStore
from ..offsets import SPARK_OFFSET_LOG, VERSION, CorruptOffsetError
from .lag import behind_latest_summary


def build_runner(options: SourceOptions, store: EndStore) -> Any:
    """The driver side of a query: one stream's runner, or a runner of several."""
    from .runner import SourceRunner

    def one(index: int, stream_name: str) -> SourceRunner:
        stream_options = options.for_stream(stream_name)
        client = stream_options.connection.client_spec().client()
        return SourceRunner(stream_options, store, client, stream_index=index)

    names = options.connection.stream_names
    if len(names) == 1:
        return one(0, names[0])
    return MultiStreamRunner([one(i, name) for i, name in enumerate(names)])


def split_offset(value: Any, where: str) -> list:
    """The per-stream parts (JSON objects) of a query's offset of several streams, read
    from ``where``; :class:`CorruptOffsetError` naming ``where`` when it is not one."""
    parts = value.get("streams") if isinstance(value, dict) else None
    ok = isinstance(parts, list) and all(isinstance(part, dict) for part in parts)
    if not isinstance(parts, list) or not ok or value.get("v") != VERSION:
        raise CorruptOffsetError(
            f"{where}: not a kinesis_dstream offset of several streams (version {VERSION}, "
            f"a list of streams' offsets); read {shown(json.dumps(value))}"
        )
    return parts


class MultiStreamRunner:
    """The five DataSourceStreamReader calls, spread over one runner per stream."""

    def __init__(self, runners: list) -> None:
        self.runners = runners
        self.streams = [r.stream for r in runners]
        self._turn = 0  # which stream gets the remainder of a row limit next
        self._committed: list = [None] * len(runners)  # each stream's last committed part

    def _split(self, value: dict) -> list:
        parts = split_offset(value, SPARK_OFFSET_LOG)
        seen = [p.get("stream") for p in parts]
        if seen != self.streams:
            raise OptionError(
                f"the checkpoint's offsets are for streams {seen} but option 'streamName' "
                f"names {self.streams}: use a new checkpointLocation for other streams"
            )
        return parts

    @staticmethod
    def _join(parts: list) -> dict:
        return {"v": VERSION, "streams": parts}

    def initial_offset(self) -> dict:
        return self._join([r.initial_offset() for r in self.runners])

    def latest_offset(self, start: dict, max_rows: Optional[int]) -> dict:
        parts = self._split(start)
        limits = self._row_limits(max_rows)
        ends = [
            part if limit == 0 else runner.latest_offset(part, limit)
            for runner, part, limit in zip(self.runners, parts, limits)
        ]
        return start if ends == parts else self._join(ends)

    def _row_limits(self, max_rows: Optional[int]) -> list:
        """Spark's ReadMaxRows shared by the streams; the remainder rotates."""
        count = len(self.runners)
        if max_rows is None:
            return [None] * count
        base, extra = divmod(max_rows, count)
        order = [(self._turn + i) % count for i in range(count)]
        self._turn = (self._turn + 1) % count
        limits = [base] * count
        for index in order[:extra]:
            limits[index] += 1
        return limits

    def shard_lags(self) -> dict:
        """(stream, shard) -> MillisBehindLatest at the shard's last peek, every stream."""
        return {key: lag for runner in self.runners for key, lag in runner.shard_lags().items()}

    def partitions(self, end: dict, start: Optional[dict] = None) -> list:
        """The ranges of the streams whose part of the offset moved since ``start``.

        A stream without new records keeps its part as it was, ranges of an earlier batch
        included: those were delivered by that batch and must not be read again.
        """
        before = self._split(start) if start is not None else [None] * len(self.runners)
        parts = []
        for runner, part, old in zip(self.runners, self._split(end), before):
            if part != old:
                parts.extend(runner.partitions(part))
        return parts

    def commit(self, end: dict) -> None:
        """Commit each stream's part once: an unchanged part was committed already (its
        range ends must stay until later batches of that stream replace it)."""
        for index, (runner, part) in enumerate(zip(self.runners, self._split(end))):
            if self._committed[index] != part:
                runner.commit(part)
                self._committed[index] = part

    def stop(self) -> None:
        failures = []
        for runner in self.runners:  # every stream's stop runs, whatever another's did
            try:
                runner.stop()
            except Exception as exc:
                failures.append(exc)
        if failures:
            raise failures[0]

    def set_cutoff(self, cutoff: Optional[datetime]) -> None:
        for runner in self.runners:
            runner.set_cutoff(cutoff)

    def report(self) -> Optional[dict]:
        reports = {r.stream: r.report() for r in self.runners}
        if not any(reports.values()):
            return None
        lags = [
            lag
            for runner in self.runners
            for lag in runner.lag.by_shard.values()
            if lag is not None
        ]
        shards = {(r.stream, k): v for r in self.runners for k, v in r.shards.items()}
        return {
            **behind_latest_summary(lags, shards),  # over every stream, as Databricks's
            "streams": {name: report for name, report in reports.items() if report},
        }
