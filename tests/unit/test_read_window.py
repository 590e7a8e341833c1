"""The bounded window of reads a round task and a lost block's re-read share (pure)."""

import threading
import time
from types import SimpleNamespace

import pytest

from kinesis_dstream.dstream import batch_read
from kinesis_dstream.dstream.executor_read import MAX_READ_THREADS, ShardRange
from kinesis_dstream.dstream.read_window import read_window


class Pages:
    """Counts reads started against pages the caller is done with: their difference, at
    any moment the caller holds a page, is what the task holds (in flight, read and not
    yet yielded, and the page in use)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.started = 0
        self.released = 0
        self.held: list = []

    def read(self, item):
        with self.lock:
            self.started += 1
        time.sleep(0.001 * (item % 3))  # reads finish out of order
        return item

    def using(self):
        with self.lock:
            self.held.append(self.started - self.released)
        time.sleep(0.002)  # the caller works on the page; reads finish meanwhile
        with self.lock:
            self.held.append(self.started - self.released)
            self.released += 1


@pytest.mark.parametrize("in_order", [True, False])
def test_at_most_the_limit_of_reads_are_in_flight_or_held(in_order):
    pages = Pages()
    got = []
    for item, result in read_window(pages.read, range(100), 16, in_order, "test-read"):
        assert item == result
        got.append(item)
        pages.using()
    assert max(pages.held) == 16
    assert got == list(range(100)) if in_order else sorted(got) == list(range(100))


def test_a_lost_blocks_reread_holds_at_most_max_read_threads_ranges(monkeypatch):
    """The re-read of a lost 64-shard block: at most MAX_READ_THREADS ranges in flight or
    held, as a round task's reads (it once started the next read before yielding: 17)."""
    pages = Pages()
    monkeypatch.setattr(batch_read, "read_range", lambda plan, expected: [pages.read(0)])
    plans = [
        SimpleNamespace(shard_id=f"s{n}", stream_name="s", transform=lambda r: r) for n in range(64)
    ]
    ranges = [
        ShardRange(0, p.shard_id, 1, (1, 0), (1, 0), 0, None, False, (), None, 1, 0.0)
        for p in plans
    ]
    for _ in batch_read._reread(plans, ranges, list(range(64))):
        pages.using()
    assert max(pages.held) == MAX_READ_THREADS


def test_a_failed_read_raises_when_its_turn_comes_and_leaving_early_waits_for_reads():
    def read(item):
        if item == 3:
            raise ValueError("read 3 failed")
        return item

    got = []
    with pytest.raises(ValueError, match="read 3 failed"):
        for item, _ in read_window(read, range(10), 4, True, "test-read"):
            got.append(item)
    assert got == [0, 1, 2]
    finished = threading.Event()

    def slow(item):
        time.sleep(0.2)
        if item == 1:
            finished.set()
        return item

    reads = read_window(slow, range(10), 4, True, "test-read")
    next(reads)
    reads.close()  # the task is killed: the reads in flight end before the close returns
    assert finished.is_set()
    assert list(read_window(slow, [], 4, False, "test-read")) == []
