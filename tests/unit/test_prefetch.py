"""Read-ahead (retrieval/prefetch.py) on scripted pages and an injected clock: bounds,
order, shard end, drop on a lease loss, errors in their place, idle time between calls.

The scripted transport stands for GetRecords (a transport is the library's own seam; the
real one is exercised against moto by the kcl daemon tests).
"""

import threading
import time
from datetime import datetime, timezone

import pytest

from kinesis_dstream.errors import StreamNotFoundError, ThrottledError
from kinesis_dstream.kpl import RecordAggregator
from kinesis_dstream.retrieval.prefetch import PrefetchBounds, PrefetchState, ShardPrefetch
from kinesis_dstream.retrieval.reader import ReaderConfig, ShardReader
from kinesis_dstream.retrieval.start import StartPosition
from kinesis_dstream.retrieval.transport import Page, ShardTransport

ARRIVAL = datetime(2026, 1, 1, tzinfo=timezone.utc)
BOUND_S = 10.0


class FakeClock:
    """Time that moves only when told: by a sleep, or by the test."""

    def __init__(self):
        self.now = 0.0
        self.lock = threading.Lock()

    def __call__(self):
        return self.now

    def advance(self, seconds):
        with self.lock:
            self.now += seconds

    def sleep_until(self, event, seconds):
        if event.is_set():
            return True
        self.advance(seconds)
        return False


class Scripted(ShardTransport):
    """Fixed pages (a page may be an exception to raise), then empty pages at the tip or
    the shard's end. Notes the clock at each call."""

    def __init__(self, pages, ends=False, clock=time.monotonic):
        self._pages = list(pages)
        self._ends = ends
        self._clock_at = clock
        self.calls_at = []

    def next_page(self, limit):
        self.calls_at.append(self._clock_at())
        if self._pages:
            page = self._pages.pop(0)
            if isinstance(page, BaseException):
                raise page
            if len(page) > limit:  # GetRecords honours Limit: the rest comes next
                self._pages.insert(0, page[limit:])
                page = page[:limit]
            last = not self._pages and self._ends
            return Page(page, 1000, False, last, () if last else None)
        return Page([], 0, True, self._ends, () if self._ends else None)


def raw(sequence, data=b"x" * 100):
    return {
        "SequenceNumber": str(sequence),
        "ApproximateArrivalTimestamp": ARRIVAL,
        "Data": data,
        "PartitionKey": "pk",
    }


def pages_of(count, per_page, first=1):
    n = first
    pages = []
    for _ in range(count):
        pages.append([raw(n + i) for i in range(per_page)])
        n += per_page
    return pages


def prefetch_on(transport, clock=None, pool=None, shard_id="shardId-000000000000", **bounds):
    reader = ShardReader(
        None,
        "s",
        shard_id,
        StartPosition.trim_horizon(),
        transport=transport,
        config=ReaderConfig(min_call_interval_s=0.0),
        clock=clock or time.monotonic,
    )
    options = {"idle_between_calls_s": 0.0, **bounds}
    if clock is None:
        return ShardPrefetch(reader, PrefetchBounds(**options), pool=pool)
    return ShardPrefetch(
        reader, PrefetchBounds(**options), clock=clock, sleep_until=clock.sleep_until, pool=pool
    )


def wait_for(condition):
    deadline = time.monotonic() + BOUND_S
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.002)


def sequences(batches):
    return [int(r.sequence_number) for batch in batches for r in batch.records]


def take_all(prefetch):
    batches = []
    while True:
        batch = prefetch.take(BOUND_S)
        assert batch is not None, "no batch in time"
        batches.append(batch)
        if batch.shard_ended:
            return batches


def test_order_is_kept_and_the_shard_end_is_the_last_batch():
    transport = Scripted(pages_of(12, 7), ends=True)
    with prefetch_on(transport) as prefetch:
        batches = take_all(prefetch)
        assert prefetch.take(0.01) is None  # nothing after the shard's end
        assert prefetch.state is PrefetchState.ENDED
    assert sequences(batches) == list(range(1, 12 * 7 + 1))
    assert batches[-1].shard_ended and batches[-1].child_shard_ids == []
    assert prefetch.pool.threads_alive() == 0


def aggregate(sequence, n):
    aggregator = RecordAggregator()
    for i in range(n):
        aggregator.add(b"%d-%d" % (sequence, i), "pk")
    (entry,) = aggregator.flush()
    return raw(sequence, entry["Data"])


def test_a_batch_is_one_pages_user_records_as_the_kcl_hands_them_over():
    transport = Scripted([[aggregate(s, 40), aggregate(s + 100, 40)] for s in range(1, 4)])
    with prefetch_on(transport, max_records=1000) as prefetch:
        batches = [prefetch.take(BOUND_S) for _ in range(3)]
    assert [len(batch.records) for batch in batches] == [80, 80, 80]


def test_aggregates_come_out_whole_and_in_order_under_the_record_bound():
    transport = Scripted([[aggregate(s, 40)] for s in range(1, 6)], ends=True)
    with prefetch_on(transport, max_records=30, max_pending_batches=10) as prefetch:
        wait_for(lambda: prefetch.state is PrefetchState.FULL)
        assert prefetch.queued_records == 30
        batches = take_all(prefetch)
    data = [r.data for batch in batches for r in batch.records]
    assert data == [b"%d-%d" % (s, i) for s in range(1, 6) for i in range(40)]
    assert all(len(batch.records) <= 30 for batch in batches)


def test_records_left_in_the_reader_are_served_without_waiting_the_idle_time():
    clock = FakeClock()
    transport = Scripted([[aggregate(1, 40)], [aggregate(2, 40)]], clock=clock)
    prefetch = prefetch_on(
        transport, clock, max_records=30, max_pending_batches=10, idle_between_calls_s=0.2
    )
    with prefetch:
        wait_for(lambda: prefetch.state is PrefetchState.FULL)
        first = prefetch.take(BOUND_S)  # room again: the 10 left of the aggregate, then a call
        wait_for(lambda: prefetch.state is PrefetchState.FULL and prefetch.queued_records == 30)
        second, third = prefetch.take(BOUND_S), prefetch.take(BOUND_S)
    assert transport.calls_at[:2] == pytest.approx([0.0, 0.2])  # not 0.4: no wait, no call
    assert [len(b.records) for b in (first, second, third)] == [30, 10, 20]


def test_at_most_max_pending_batches_are_read_ahead():
    transport = Scripted(pages_of(10, 5))
    with prefetch_on(transport, max_pending_batches=3) as prefetch:
        wait_for(lambda: prefetch.state is PrefetchState.FULL)
        assert prefetch.queued_batches == 3 and len(transport.calls_at) == 3
        first = prefetch.take(BOUND_S)
        wait_for(lambda: prefetch.state is PrefetchState.FULL and prefetch.queued_batches == 3)
        assert len(transport.calls_at) == 4
    assert sequences([first]) == [1, 2, 3, 4, 5]


def test_queued_records_never_pass_max_records_and_a_read_asks_only_for_the_room_left():
    transport = Scripted(pages_of(10, 10))
    with prefetch_on(transport, max_pending_batches=10, max_records=25) as prefetch:
        wait_for(lambda: prefetch.state is PrefetchState.FULL)
        assert prefetch.queued_records == 25
        batches = [prefetch.take(BOUND_S) for _ in range(3)]
        assert [len(b.records) for b in batches] == [10, 10, 5]
        wait_for(lambda: prefetch.state is PrefetchState.FULL)
        assert prefetch.queued_records == 25
        more = [prefetch.take(BOUND_S) for _ in range(3)]
    assert sequences(batches + more) == list(range(1, 51))


def test_bytes_stop_the_read_ahead_once_past_max_bytes_by_at_most_one_page():
    transport = Scripted(pages_of(10, 2))  # 200 bytes a page
    with prefetch_on(transport, max_pending_batches=10, max_bytes=450) as prefetch:
        wait_for(lambda: prefetch.state is PrefetchState.FULL)
        assert prefetch.queued_bytes == 600 and len(transport.calls_at) == 3
        prefetch.take(BOUND_S)
        wait_for(lambda: prefetch.state is PrefetchState.FULL and len(transport.calls_at) == 4)
        assert prefetch.queued_bytes == 600


def test_a_lease_loss_drops_what_was_read_ahead_counted_and_stops_the_thread(caplog):
    transport = Scripted(pages_of(10, 4))
    prefetch = prefetch_on(transport).start()
    taken = prefetch.take(BOUND_S)
    wait_for(lambda: prefetch.state is PrefetchState.FULL)
    queued = prefetch.queued_records
    assert queued == 12
    with caplog.at_level("INFO"):
        assert prefetch.close("lease lost") == queued
    assert prefetch.records_dropped == queued and prefetch.queued_records == 0
    assert prefetch.pool.threads_alive() == 0 and prefetch.state is PrefetchState.STOPPED
    assert prefetch.take(0.01) is None
    assert "12 records read ahead" in caplog.text and "lease lost" in caplog.text
    assert sequences([taken]) == [1, 2, 3, 4]


def test_records_the_reader_holds_past_the_last_batch_are_counted_when_dropped():
    transport = Scripted([[aggregate(1, 40)]])
    with prefetch_on(transport, max_pending_batches=10, max_records=30) as prefetch:
        wait_for(lambda: prefetch.state is PrefetchState.FULL)
        assert prefetch.queued_records == 30  # the aggregate cut at the room left
        assert prefetch.close("lease lost") == 40  # and the 10 the reader still holds
    assert prefetch.records_dropped == 40


def test_a_retriable_error_comes_in_its_place_and_the_read_waits_until_it_is_taken():
    throttled = ThrottledError("rate exceeded", operation="GetRecords", shard_id="s-0")
    pages = [*pages_of(1, 3), throttled, *pages_of(2, 3, first=4)]
    transport = Scripted(pages)
    with prefetch_on(transport) as prefetch:
        wait_for(lambda: prefetch.state is PrefetchState.FAILED_WAITING)
        assert len(transport.calls_at) == 2  # parked: the consumer paces the retries
        first = prefetch.take(BOUND_S)
        with pytest.raises(ThrottledError):
            prefetch.take(BOUND_S)
        rest = [prefetch.take(BOUND_S), prefetch.take(BOUND_S)]
    assert sequences([first, *rest]) == list(range(1, 10))


def test_an_error_for_good_reaches_the_consumer_which_decides_whether_to_read_on():
    gone = StreamNotFoundError("no stream", operation="GetRecords", stream_name="s")
    transport = Scripted([*pages_of(1, 2), gone, *pages_of(1, 2, first=3)])
    with prefetch_on(transport) as prefetch:
        wait_for(lambda: prefetch.state is PrefetchState.FAILED_WAITING)
        assert len(transport.calls_at) == 2  # parked until the consumer has seen it
        assert sequences([prefetch.take(BOUND_S)]) == [1, 2]
        with pytest.raises(StreamNotFoundError):
            prefetch.take(BOUND_S)
        # The kcl daemon reads on while it holds the lease: the next page comes.
        assert sequences([prefetch.take(BOUND_S)]) == [3, 4]


def test_idle_time_is_counted_between_calls_not_from_the_end_of_processing():
    clock = FakeClock()
    transport = Scripted(pages_of(10, 1), clock=clock)
    prefetch = prefetch_on(transport, clock, max_pending_batches=2, idle_between_calls_s=0.2)
    with prefetch:
        wait_for(lambda: prefetch.state is PrefetchState.FULL)
        assert transport.calls_at == pytest.approx([0.0, 0.2])
        clock.advance(5.0)  # the application works for 5 s on the first batch
        prefetch.take(BOUND_S)
        wait_for(lambda: len(transport.calls_at) == 3)
        # The idle time passed during processing: the next call goes at once.
        assert transport.calls_at[2] == pytest.approx(5.2)
        prefetch.take(BOUND_S)
        wait_for(lambda: len(transport.calls_at) == 4)
        assert transport.calls_at[3] == pytest.approx(5.4)  # back to back: 0.2 s apart


def test_an_interrupt_ends_the_wait_for_an_idle_shards_next_batch_at_once():
    prefetch = prefetch_on(Scripted([]), idle_between_calls_s=60.0)  # an idle shard
    with prefetch:
        taken = []
        taker = threading.Thread(target=lambda: taken.append(prefetch.take(BOUND_S)))
        started = time.monotonic()
        taker.start()
        prefetch.interrupt()  # before or during the wait: the take returns at once
        taker.join(BOUND_S)
        assert taken == [None] and time.monotonic() - started < BOUND_S / 2
        started = time.monotonic()
        assert prefetch.take(0.2) is None  # the interrupt is spent: a take waits again
        assert time.monotonic() - started >= 0.2


@pytest.mark.parametrize(
    "field, value",
    [
        ("max_pending_batches", 0),
        ("max_bytes", 0),
        ("max_records", 0),
        ("idle_between_calls_s", -1),
    ],
)
def test_bounds_refuse_values_that_cannot_work(field, value):
    with pytest.raises(ValueError, match=field):
        PrefetchBounds(**{field: value})
