"""The benchmark server's answers that the library's plans depend on (no HTTP: its store).

The source plans the ranges of shards behind their tip apart from those near it, from the
MillisBehindLatest its peeks get, so a benchmark of a backlog measures the path a backlog
takes on Kinesis only if the server reports a backlog's age as Kinesis does.
"""

from __future__ import annotations

from benchmarks.kinesis_server import Store


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def _shard_with_records_at(clock: Clock, arrivals: list) -> Store:
    store = Store(clock)
    store.create_stream({"StreamName": "s", "ShardCount": 1})
    for index, arrival in enumerate(arrivals):
        clock.now = arrival
        store.put_record({"StreamName": "s", "Data": "eA==", "PartitionKey": f"k{index}"})
    return store


def _pages(store: Store, limit: int) -> list:
    """MillisBehindLatest of each page from TRIM_HORIZON, ``limit`` records a page, to the
    first page at the tip."""
    iterator = store.get_shard_iterator(
        {"StreamName": "s", "ShardId": "shardId-000000000000", "ShardIteratorType": "TRIM_HORIZON"}
    )["ShardIterator"]
    lags = []
    while True:
        page = store.get_records({"ShardIterator": iterator, "Limit": limit})
        lags.append(page["MillisBehindLatest"])
        if not page["Records"]:
            return lags
        iterator = page["NextShardIterator"]


def test_a_page_short_of_the_tip_reports_the_age_of_the_oldest_record_left_to_read():
    clock = Clock(100.0)
    store = _shard_with_records_at(clock, [100.0, 101.0, 102.5])
    clock.now = 105.0
    # after r0: r1 is 4 s old; after r1: r2 is 2.5 s old; then the tip
    assert _pages(store, 1) == [4000, 2500, 0, 0]
    assert _pages(store, 3) == [0, 0]


def test_a_backlog_reads_as_behind_even_when_its_next_record_arrived_this_millisecond():
    clock = Clock(200.0)
    store = _shard_with_records_at(clock, [200.0, 200.0])
    assert _pages(store, 1) == [1, 0, 0]  # behind is never 0: 0 means caught up
