"""The driver side of the source: plans micro-batches from metadata only.

Lives in Spark's long-lived *source runner* process (one per query). It turns the last
offset into each shard's position (reading range ends back from the end store), finds
new shards every ``describeShardInterval``, peeks at the shards that may be read (see
:mod:`.peek`), and returns the next offset: a range for every shard with new records,
a position for the others. No record's data leaves the peek.

Under enhanced fan-out every range is a subscription, and Kinesis refuses a second one to
a shard within 5 s of the last: a shard is given a range again only 5 s after its last
range's subscription (the executor records when, in the range's end), so no batch waits
on the rule; the other shards and new children are read meanwhile. A shard's end is
still seen at once: the peek says drained.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections import deque
from datetime import datetime
from typing import Any, Callable, Optional

from ...errors import RecordsLostError, StreamNotFoundError, ThrottledError
from ...kpl.outside import (
    AGGREGATES_DROPPED,
    MALFORMED,
    OUTSIDE,
    RECORDS_DROPPED,
    OutsideShardTally,
)
from ...retrieval.streams import list_shards, require_stream
from ..config.options import OptionError, SourceOptions
from ..ends.store import EndStore
from ..executor.partition import RangePartition
from ..offsets import SPARK_OFFSET_LOG, Offset, RangeEnd, ShardRange, make_offset, range_key
from ..positions import SHARD_END, TRIM_HORIZON, describe, format_timestamp, now_utc
from .fan_out import StreamConsumers
from .lag import StreamLag, behind_latest_summary
from .peek import Peeker
from .planner import (
    ShardInfo,
    initial_positions,
    merge_shard_list,
    ready_shards,
    split_limit,
)
from .range_ends import RangeEnds

log = logging.getLogger(__name__)

#: Ranges of one shard that ended early on throttling, in a row, before the query fails.
MAX_THROTTLED_RANGES_IN_A_ROW = 3
#: At most one warning per shard about KPL records outside its range this often.
OUTSIDE_WARN_INTERVAL_S = 60.0
#: Added to Kinesis's 5 s between a shard's subscriptions: the executor's clock and ours.
CLOCK_MARGIN_S = 0.25


class SourceRunner:
    def __init__(
        self,
        options: SourceOptions,
        store: EndStore,
        client: Any,
        clock: Callable[[], float] = time.monotonic,
        stream_index: int = 0,
    ) -> None:
        self.options = options
        self.stream = options.connection.stream_name
        self.store = store
        self.client = client
        self._clock = clock
        # The peek counts every user record as data, also those the KCL's rule (if asked
        # for) drops: the executor's read then consumes them and records the counts.
        self.peeker = Peeker(
            client,
            self.stream,
            options.min_fetch_period_ms / 1000.0,
            clock,
            max_idle_wait_s=options.idle_shard_poll_ms / 1000.0,
        )
        #: KPL user records outside their shard's range, from the recorded range ends.
        self.outside_shard = OutsideShardTally(self.stream, options.drop_aggregates_outside_shard)
        self._outside_warned_at: Optional[float] = None
        self.lag = StreamLag(self.stream, options.connection, options.emit_consumer_lag_metrics)
        #: Enhanced fan-out: the stream's consumer (None: polling).
        self.consumers: Optional[StreamConsumers] = None
        if options.fan_out is not None:
            self.consumers = StreamConsumers(client, self.stream, stream_index, options.fan_out)
        self.shards: dict = {}
        self._listed_at: Optional[float] = None
        self.ends = RangeEnds(store, self.stream)
        self._throttled_in_a_row: dict = {}
        self.cutoff: Optional[datetime] = None
        self.records_lost_shards: list = []
        self._losses_seen: set = set()  # (shard id, position): warned and counted once
        self._committed: deque = deque()
        self._settled: set = set()  # (shard id, position, cutoff): nothing before cutoff
        #: Fan-out: when (this clock) each shard may have its next range: 5 s after its
        #: last subscription (a subscription within 5 s of the last one is refused).
        self._next_range_at: dict = {}
        #: Ranges whose task was refused the peek's iterator and made its own.
        self._start_iterators_refused = 0

    # -- shards --------------------------------------------------------------------

    def _list(self, force: bool = False) -> dict:
        now = self._clock()
        interval_s = self.options.describe_shard_interval_ms / 1000.0
        if force or self._listed_at is None or now - self._listed_at >= interval_s:
            try:
                listed = list_shards(
                    self.client, self.stream, max_results=self.options.max_shards_per_describe
                )
            except Exception as exc:
                if "ResourceNotFoundException" in str(exc):
                    raise StreamNotFoundError(
                        f"stream {self.stream!r} does not exist (any more) at "
                        f"{self.client.meta.endpoint_url}",
                        operation="ListShards",
                        stream_name=self.stream,
                        code="ResourceNotFoundException",
                    ) from exc
                raise
            self.shards = {s["ShardId"]: ShardInfo.from_list_shards(s) for s in listed}
            self._listed_at = now
        return self.shards

    # -- the DataSourceStreamReader calls ----------------------------------------------

    def initial_offset(self) -> dict:
        require_stream(self.client, self.stream)
        shards = self._list(force=True)
        query = uuid.uuid4().hex[:16]
        self.ends.mark(query, created=True)
        positions = initial_positions(shards, self.options.initial_position, now_utc())
        return make_offset(self.stream, query, 0, positions).to_json()

    def latest_offset(self, start_json: dict, max_rows: Optional[int]) -> dict:
        start = self._parse(start_json)
        self.ends.mark(start.query)
        if self.consumers is not None:
            self.consumers.arn(start.query)  # registered, or re-checked once an interval
        positions = self._resolve(start)
        positions = self._merge_listing(positions)
        data_from = self._find_data(positions)
        if self.consumers is not None:
            data_from = self._pace_subscriptions(data_from)
        if not data_from:
            return start_json  # nothing new: Spark runs no micro-batch
        gen = start.gen + 1
        limits = split_limit(
            sorted(data_from), self.options.max_fetch_records_per_shard, max_rows, gen
        )
        cutoff = None if self.cutoff is None else format_timestamp(self.cutoff)
        entries: dict = dict(positions)
        for shard_id, limit in limits.items():
            entries[shard_id] = ShardRange(data_from[shard_id], limit, cutoff)
        end = make_offset(self.stream, start.query, gen, entries)
        self.ends.planned(end)
        return end.to_json()

    def _pace_subscriptions(self, data_from: dict) -> dict:
        """The shards with new records that may be subscribed to now. During AvailableNow
        none is not an answer while some have records: Spark ends the run at the first
        offset equal to its start, so this waits (at most the 5 s) for the first due."""
        due = {s: self._next_range_at.get(s, 0.0) for s in data_from}
        now = self._clock()
        if self.cutoff is not None and due and min(due.values()) > now:
            time.sleep(min(due.values()) - now)
            now = self._clock()
        return {s: p for s, p in data_from.items() if due[s] <= now}

    def _note_subscription(self, shard_id: str, subscribed_at: float) -> None:
        """A range's subscription (the executor's wall-clock time): the shard's next one
        goes 5 s later, with a margin for the two machines' clocks."""
        assert self.options.fan_out is not None
        gap_s = self.options.fan_out.subscribe.resubscribe_interval_s + CLOCK_MARGIN_S
        wait_s = max(0.0, subscribed_at + gap_s - time.time())
        self._next_range_at[shard_id] = self._clock() + wait_s

    def partitions(self, end_json: dict) -> list:
        end = self._parse(end_json)
        ranges = end.ranges()
        if any(shard_id not in self.shards for shard_id in ranges):
            self._list(force=True)
        parts = []
        arn = None if self.consumers is None or not ranges else self.consumers.arn(end.query)
        for shard_id, shard_range in sorted(ranges.items()):
            info = self.shards.get(shard_id)
            hint = None if arn else self.peeker.start_iterator(shard_id, shard_range.start)
            parts.append(
                RangePartition(
                    self.stream,
                    shard_id,
                    range_key(end, shard_id, shard_range),
                    end.query,
                    shard_range,
                    info.hash_key_range if info else None,
                    consumer_arn=arn,
                    start_iterator=hint,
                )
            )
        return parts

    def stop(self) -> None:
        """A graceful stop: deregister the fan-out consumer when asked."""
        if self.consumers is not None:
            self.consumers.stop()

    def commit(self, end_json: dict) -> None:
        end = self._parse(end_json)
        self._committed.append([range_key(end, s, r) for s, r in end.ranges().items()])
        while len(self._committed) > self.options.min_batches_to_retain:
            self.ends.forget(self._committed.popleft())

    def set_cutoff(self, cutoff: Optional[datetime]) -> None:
        """AvailableNow: read only what arrived before ``cutoff``."""
        self.cutoff = cutoff

    def shard_lags(self) -> dict:
        """(stream, shard) -> MillisBehindLatest at the shard's last peek (None: unknown)."""
        return self.lag.shard_lags()

    def report(self) -> Optional[dict]:
        self._warn_outside_shard()
        by_shard = self.lag.by_shard
        if not by_shard and not self.records_lost_shards:
            return None
        lags = {s: by_shard[s] for s in sorted(by_shard)}
        known = [v for v in lags.values() if v is not None]
        outside = self.outside_shard.totals()
        return {
            "stream": self.stream,
            **behind_latest_summary(known, self.shards),
            "maxMillisBehindLatest": max(known) if known else None,
            "millisBehindLatest": lags,
            "dataLossEvents": len(self.records_lost_shards),
            "shardsWithDataLoss": sorted(set(self.records_lost_shards)),
            "userRecordsOutsideShard": outside[OUTSIDE],
            "aggregatesDroppedOutsideShard": outside[AGGREGATES_DROPPED],
            "userRecordsDroppedOutsideShard": outside[RECORDS_DROPPED],
            "malformedAggregates": outside[MALFORMED],  # passed through as plain records
            "peekCalls": self.peeker.calls,  # GetShardIterator and GetRecords, so far
            # iterators passed on as hints (docs/design/range-ends.md) that were refused
            "iteratorHintsRefused": self.peeker.hints_refused + self._start_iterators_refused,
        }

    def _warn_outside_shard(self) -> None:
        """One line per shard whose count grew, at most once per OUTSIDE_WARN_INTERVAL_S."""
        now = self._clock()
        last = self._outside_warned_at
        due = last is None or now - last >= OUTSIDE_WARN_INTERVAL_S
        if due and self.outside_shard.warn(log):
            self._outside_warned_at = now

    # -- steps of latest_offset ----------------------------------------------------------

    def _parse(self, value: dict) -> Offset:
        offset = Offset.from_json(value, f"{SPARK_OFFSET_LOG}, stream {self.stream!r}")
        if offset.stream != self.stream:
            raise OptionError(
                f"the checkpoint's offsets are for stream {offset.stream!r} but option "
                f"'streamName' is {self.stream!r}: use a new checkpointLocation for a new stream"
            )
        return offset

    def _resolve(self, start: Offset) -> dict:
        """Each shard's position after ``start``: ranges resolved via the end store."""
        positions = {}
        lags = []
        for shard_id, entry in start.shards:
            if not isinstance(entry, ShardRange):
                positions[shard_id] = entry
                continue
            end, fresh = self.ends.end_of(start, shard_id, entry)
            if fresh:
                self._note_end(shard_id, end)
                if end.next_iterator is not None and self.consumers is None:
                    self.peeker.go_on_from(shard_id, end.next, end.next_iterator)
                if end.max_consumer_lag_ms is not None:
                    lags.append(end.max_consumer_lag_ms)
            settled = end.stopped_at_cutoff or end.caught_up
            if entry.cutoff is not None and settled and not end.throttled:
                self._settled.add((shard_id, _key(end.next), entry.cutoff))
            positions[shard_id] = end.next
        if lags:
            self.lag.consumer_lag(max(lags))
        return positions

    def _note_end(self, shard_id: str, end: RangeEnd) -> None:
        self.lag.note(shard_id, end.millis_behind_latest)
        self._start_iterators_refused += end.start_iterator_refused
        if end.subscribed_at is not None and self.consumers is not None:
            self._note_subscription(shard_id, end.subscribed_at)
        self.outside_shard.add(
            shard_id,
            end.outside_shard,
            end.aggregates_dropped,
            end.user_records_dropped,
            end.malformed_aggregates,
        )
        streak = self._throttled_in_a_row.get(shard_id, 0) + 1 if end.throttled else 0
        self._throttled_in_a_row[shard_id] = streak
        if streak >= MAX_THROTTLED_RANGES_IN_A_ROW:
            raise ThrottledError(
                f"reads of shard {shard_id} of stream {self.stream!r} were throttled past the "
                f"retry budget in {streak} micro-batches in a row",
                operation="GetRecords",
                stream_name=self.stream,
                shard_id=shard_id,
                code="ProvisionedThroughputExceededException",
            )
        if end.shard_end and any(c not in self.shards for c in end.children):
            self._listed_at = None  # new children: list again now

    def _merge_listing(self, positions: dict) -> dict:
        merged, lost = merge_shard_list(positions, self._list())
        for shard_id in lost:
            self._data_loss(
                shard_id,
                positions[shard_id],
                f"shard {shard_id} of stream {self.stream!r} expired before it was read to its "
                f"end (position {describe(positions[shard_id])})",
            )
        return merged

    def _data_loss(self, shard_id: str, position: Any, message: str) -> None:
        if self.options.fail_on_data_loss:
            raise RecordsLostError(f"{message} (failOnDataLoss=true)")
        seen = (shard_id, _key(position))
        if seen in self._losses_seen:
            return  # an idle poll re-finds the same loss: warned and counted once
        self._losses_seen.add(seen)
        self.records_lost_shards.append(shard_id)
        log.warning("%s; going on from the oldest retained record (failOnDataLoss=false)", message)

    def _find_data(self, positions: dict) -> dict:
        """shard id -> the position its range starts from, for shards with new records.

        Drained shards become SHARD_END in ``positions`` (so their children get ready).
        """
        data_from: dict = {}
        checked: set = set()
        while True:
            ready = [s for s in ready_shards(positions, self.shards) if s not in checked]
            if not ready:
                return data_from
            checked.update(ready)
            for shard_id, result in zip(ready, self._peek_all(ready, positions)):
                position = positions[shard_id]
                if result.millis_behind_latest is not None:
                    self.lag.note(shard_id, result.millis_behind_latest)
                if result.lost_to is not None:
                    self._data_loss(
                        shard_id,
                        position,
                        f"records of stream {self.stream!r}, shard {shard_id} {describe(position)}"
                        f" are past the stream's retention: the oldest retained is "
                        f"{result.lost_to}",
                    )
                    data_from[shard_id] = TRIM_HORIZON
                elif result.has_data:
                    data_from[shard_id] = position
                elif result.drained:
                    positions[shard_id] = SHARD_END
                elif self._unsettled_before_cutoff(shard_id, position, result.settled):
                    data_from[shard_id] = position

    def _peek_all(self, shard_ids: list, positions: dict) -> list:
        """Peek at shards, ``checkNewRecordThreads`` at a time (the awslabs option)."""
        ranges = {s: info.hash_key_range for s, info in self.shards.items()}
        asks = [(s, positions[s], ranges.get(s)) for s in shard_ids]
        return self.peeker.peek_all(asks, self.cutoff, self.options.check_new_record_threads)

    def _unsettled_before_cutoff(self, shard_id: str, position: Any, settled: bool) -> bool:
        """During AvailableNow: a shard the peek could not settle is read to find out.

        A throttled or expired peek, or an empty page while MillisBehindLatest > 0, says
        nothing; returning ``start`` would end the run early. The executor's read of the
        range goes on to the cutoff or the tip, and its recorded end settles the shard.
        """
        if self.cutoff is None or settled:
            return False
        cutoff = format_timestamp(self.cutoff)
        return (shard_id, _key(position), cutoff) not in self._settled


def _key(position: Any) -> str:
    return json.dumps(position, separators=(",", ":"))
