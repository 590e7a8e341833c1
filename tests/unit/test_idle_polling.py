"""Idle shards are read less often, busy ones every round: the pure logic with an injected
clock (the source's peeks against moto's server are in ``integration/test_idle_peeks.py``)."""

from typing import Optional

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kinesis_dstream.dstream.executor_read import ShardRange
from kinesis_dstream.dstream.ledger import Ledger
from kinesis_dstream.dstream.round_book import Cursor, FetchBook, Round
from kinesis_dstream.esn import ESN_TRIM_HORIZON
from kinesis_dstream.retrieval.idle import IdlePolling, is_idle_read
from kinesis_dstream.retrieval.reader import StartPosition


def test_the_wait_doubles_from_the_second_idle_read_up_to_the_cap():
    idle = IdlePolling(period_s=0.5, max_wait_s=2.0)
    assert [idle.wait_s(k) for k in range(6)] == [0.5, 0.5, 1.0, 2.0, 2.0, 2.0]
    # from the read's plan time, less a quarter period of slack for the loop's jitter
    assert idle.next_read_at(10.0, 3) == 10.0 + 2.0 - 0.125


def test_a_cap_at_or_below_the_period_turns_it_off():
    for cap in (0.0, 0.5):
        idle = IdlePolling(period_s=0.5, max_wait_s=cap)
        assert {idle.wait_s(k) for k in range(50)} == {0.5}


def test_idle_polling_is_off_unless_asked_for():
    """Like the KCL (an idle shard read every idleTimeBetweenReadsInMillis), every path
    reads an idle shard every period by default: a waking shard is never delayed."""
    import inspect

    from kinesis_dstream.dstream.api import KinesisUtils
    from kinesis_dstream.sql import SourceOptions

    assert {IdlePolling(period_s=0.5).wait_s(k) for k in range(50)} == {0.5}
    create = inspect.signature(KinesisUtils.createStream).parameters
    assert create["idleShardPollMs"].default == 0
    options = SourceOptions.parse({"streamName": "s", "region": "us-east-1"})
    assert options.idle_shard_poll_ms == 0


def test_bad_settings_name_the_value():
    for cap in (-1, 61):
        with pytest.raises(ValueError, match=str(cap)):
            IdlePolling(period_s=1.0, max_wait_s=cap)
    with pytest.raises(ValueError, match="period"):
        IdlePolling(period_s=0)


def test_only_an_empty_read_at_the_tip_is_idle():
    assert is_idle_read(0, 0, False)
    assert not is_idle_read(1, 0, False)  # records
    assert not is_idle_read(0, 5_000, False)  # behind: more to read
    assert not is_idle_read(0, None, False)  # lag unknown
    assert not is_idle_read(0, 0, True)  # the shard's end must be seen at once


@given(st.floats(0.2, 5.0), st.floats(0.0, 60.0), st.integers(0, 200))
def test_the_wait_is_never_below_a_period_nor_above_the_cap(period, cap, reads):
    idle = IdlePolling(period_s=period, max_wait_s=cap)
    wait = idle.wait_s(reads)
    assert period <= wait <= max(period, cap)
    assert idle.next_read_at(0.0, reads) < wait  # the round one wait later reads it


class Book:
    """A FetchBook of two shards, driven round by round as the round thread drives it."""

    def __init__(self, idle, spacing_s=0.5):
        self.ledger = Ledger()
        self.now = 0.0
        self.spacing_s = spacing_s  # time between two rounds' plans
        self.book = FetchBook("s", self.ledger, lambda: self.now, idle)
        for shard in ("quiet", "busy"):
            generation = self.ledger.open_shard(shard, ESN_TRIM_HORIZON, ready=True)
            self.book.open(shard, Cursor(generation, StartPosition.latest(), None, "it"))
        self.round_id = 0
        self.next_seq = {"quiet": 1, "busy": 1}

    def round(self, records: dict, behind: Optional[dict] = None) -> list:
        """Plan a round, give each planned shard ``records[shard]``; returns the shards read."""
        behind = behind or {}
        planned = [s for s, _ in self.book.readable({"quiet", "busy"})]  # both held, ready
        self.round_id += 1
        headers, plans, generations = [], [], []
        for shard in planned:
            n = records.get(shard, 0)
            first = (self.next_seq[shard], 0) if n else None
            last = (self.next_seq[shard] + n - 1, 0) if n else None
            self.next_seq[shard] += n
            headers.append(
                ShardRange(
                    self.round_id,
                    shard,
                    n,
                    first,
                    last,
                    n,
                    behind.get(shard, 0),
                    False,
                    (),
                    "it",
                    1,
                    0.0,
                )
            )
            plans.append(type("Plan", (), {"shard_id": shard})())
            generations.append(self.ledger.generation(shard))
        round_ = Round(self.round_id, None, plans, headers, generations, 0, 0)
        round_.planned_at = self.now
        self.now += self.spacing_s / 2  # the round runs
        self.book.record(round_)
        self.now += self.spacing_s / 2
        return planned


def test_a_quiet_shard_is_read_less_often_and_a_busy_one_every_round():
    book = Book(IdlePolling(period_s=0.5, max_wait_s=2.0))
    read = [book.round({"busy": 3}) for _ in range(12)]
    assert all("busy" in shards for shards in read)
    quiet_reads = [i for i, shards in enumerate(read) if "quiet" in shards]
    # read, read (2nd idle), skip 1, read (3rd idle), skip 3, read, skip 3, read
    assert quiet_reads == [0, 1, 3, 7, 11]
    assert book.book.stats.idle_reads_skipped == 12 - len(quiet_reads)


def test_a_record_on_a_quiet_shard_brings_it_back_to_every_round():
    book = Book(IdlePolling(period_s=0.5, max_wait_s=2.0))
    for _ in range(8):
        book.round({})
    assert book.book.cursors["quiet"].idle_until > book.now
    # the shard wakes up: its next read comes within the cap (4 rounds of 0.5 s)
    woke = [book.round({"quiet": 1}) for _ in range(4)]
    first = next(i for i, shards in enumerate(woke) if "quiet" in shards)
    assert all("quiet" in shards for shards in woke[first:])  # not idle once it had data
    read = [book.round({"quiet": 1}) for _ in range(5)]
    assert all("quiet" in shards for shards in read)


def test_a_shard_behind_its_tip_is_never_idle():
    book = Book(IdlePolling(period_s=0.5, max_wait_s=2.0))
    read = [book.round({}, behind={"quiet": 10_000}) for _ in range(6)]
    assert all("quiet" in shards for shards in read)


def test_the_wait_is_time_not_rounds_when_rounds_run_slow():
    # rounds 2 s apart (many shards, busy cores): a quiet shard waits at most the 2 s cap,
    # so it is read every round, not every fourth
    book = Book(IdlePolling(period_s=0.5, max_wait_s=2.0), spacing_s=2.0)
    read = [book.round({"busy": 3}) for _ in range(8)]
    assert all("quiet" in shards for shards in read)


def test_without_idle_polling_every_round_reads_every_shard():
    book = Book(None)
    assert all(book.round({}) == ["busy", "quiet"] for _ in range(10))
