"""When fetch rounds start: a round ends just before every batch time (pure, no Spark)."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kinesis_dstream.dstream.pacing import (
    FIRST_ROUND_ESTIMATE_S,
    HISTORY,
    MARGIN_S,
    RoundPacer,
)
from kinesis_dstream.dstream.settings import MIN_FETCH_INTERVAL_S


def simulate(pacer: RoundPacer, start: float, lengths: list) -> list:
    """Run rounds of the given lengths back to back as the round thread does: (start, end)."""
    now, out = start, []
    for length in lengths:
        begin = pacer.next_start(now)
        assert begin >= now
        end = begin + length
        pacer.round_took(length)
        out.append((begin, end))
        now = end
    return out


def batch_times(rounds: list, batch_s: float) -> list:
    first = math.ceil(rounds[0][1] / batch_s) * batch_s
    last = rounds[-1][0]
    return [first + k * batch_s for k in range(int((last - first) / batch_s))]


def test_without_a_batch_interval_rounds_run_one_fetch_interval_apart_from_each_start():
    pacer = RoundPacer(0.5)
    assert pacer.next_start(100.0) == 100.0  # the first round starts at once
    assert pacer.next_start(100.2) == pytest.approx(100.5)
    assert pacer.next_start(101.3) == pytest.approx(101.3)  # a slow round: at once


def test_a_round_ends_just_before_every_batch_time():
    pacer = RoundPacer(0.5)
    pacer.align(1.0)
    rounds = simulate(pacer, 1000.123, [0.2] * 40)
    for batch_time in batch_times(rounds, 1.0):
        before = [end for _, end in rounds if end <= batch_time]
        # the last round before the batch time ended within the margin of it
        assert batch_time - max(before) == pytest.approx(MARGIN_S, abs=1e-6)


def test_the_first_round_starts_at_once_unless_it_can_close_the_coming_batch():
    pacer = RoundPacer(0.5)
    pacer.align(1.0)
    assert pacer.next_start(1000.0) == 1000.0
    pacer = RoundPacer(0.5)
    pacer.align(1.0)
    start = pacer.next_start(1000.5)  # a round now would end at about 1000.8
    assert start + FIRST_ROUND_ESTIMATE_S + MARGIN_S == pytest.approx(1001.0)


def test_one_slow_round_does_not_move_the_plan():
    pacer = RoundPacer(0.5)
    pacer.align(1.0)
    for length in [0.2] * 7 + [1.5]:
        pacer.round_took(length)
    assert pacer.round_length_s() == 0.2
    pacer.round_took(1.4)
    pacer.round_took(1.3)  # three slow ones of eight: the plan follows them
    assert pacer.round_length_s() == 1.3


def test_a_round_that_overran_its_batch_time_makes_the_next_close_the_following_batch():
    pacer = RoundPacer(0.5)
    pacer.align(1.0)
    for _ in range(8):
        pacer.round_took(0.2)
    first = pacer.next_start(1000.6)  # a free round would still run at 1000.75
    assert first == pytest.approx(1000.75)  # so it closes batch 1001.0
    second = pacer.next_start(first + 0.9)  # it ran 0.9 s, past 1001.0
    assert second == pytest.approx(1001.75)  # closes 1002.0, 0.1 s after the overrun
    third = pacer.next_start(second + 0.2)
    assert third == pytest.approx(second + 0.5)  # then free again, an interval later


@settings(max_examples=300, deadline=None)
@given(
    fetch_s=st.sampled_from([0.2, 0.25, 0.3, 0.5, 0.7, 1.0, 2.0]),
    batch_s=st.sampled_from([0.5, 1.0, 2.0, 5.0]),
    start=st.floats(min_value=0, max_value=1e6),
    lengths=st.lists(st.floats(min_value=0.0, max_value=3.0), min_size=2, max_size=40),
)
def test_rounds_never_start_closer_than_kinesis_allows_nor_overlap_nor_lag_an_interval(
    fetch_s, batch_s, start, lengths
):
    pacer = RoundPacer(fetch_s)
    pacer.align(batch_s)
    rounds = simulate(pacer, start, lengths)
    for (begin, end), (next_begin, _) in zip(rounds, rounds[1:]):
        assert next_begin >= end
        assert next_begin - begin >= MIN_FETCH_INTERVAL_S - 1e-6  # Kinesis: 5 reads/s
        # at most one fetch interval later than free-running rounds would start
        assert next_begin <= max(end, begin + fetch_s) + fetch_s + 1e-6


def test_a_wall_clock_stepping_back_an_hour_never_makes_a_round_wait_for_it():
    pacer = RoundPacer(1.0)
    pacer.align(1.0)
    pacer.round_took(0.2)
    first = pacer.next_start(5000.0)
    now = first - 3600.0  # NTP stepped the clock back an hour
    assert 0 <= pacer.next_start(now) - now <= 1.0


def test_rounds_as_long_as_the_interval_run_back_to_back():
    pacer = RoundPacer(1.0)
    pacer.align(1.0)
    rounds = simulate(pacer, 1000.3, [1.3] * 12)
    gaps = [b - end for (_, end), (b, _) in zip(rounds, rounds[1:])]
    assert max(gaps[HISTORY:]) == pytest.approx(0.0, abs=1e-6)


@settings(max_examples=300, deadline=None)
@given(
    fetch_s=st.sampled_from([0.2, 0.25, 0.5, 1.0]),  # intervals that divide the batch's
    batch_s=st.sampled_from([1.0, 2.0, 5.0]),
    start=st.floats(min_value=0, max_value=1e6),
    length=st.floats(min_value=0.0, max_value=0.15),
)
def test_steady_rounds_close_every_batch_and_keep_the_fetch_interval(
    fetch_s, batch_s, start, length
):
    pacer = RoundPacer(fetch_s)
    pacer.align(batch_s)
    settled = HISTORY + math.ceil(batch_s / fetch_s)  # locked on within a batch interval
    rounds = simulate(pacer, start, [length] * (settled + 60))[settled:]
    for batch_time in batch_times(rounds, batch_s):
        last_end = max(end for _, end in rounds if end <= batch_time + 1e-6)
        assert batch_time - last_end == pytest.approx(MARGIN_S, abs=1e-6)
    gaps = [b - a for (a, _), (b, _) in zip(rounds, rounds[1:])]
    assert max(gaps) <= fetch_s + max(length, MIN_FETCH_INTERVAL_S) + 1e-6
    assert min(gaps) >= MIN_FETCH_INTERVAL_S - 1e-6
    # about batch / fetch interval rounds per batch, one more at most
    span = rounds[-1][0] - rounds[0][0]
    assert len(rounds) <= span / fetch_s + len(batch_times(rounds, batch_s)) + 2


def test_after_a_round_that_filled_a_shard_the_next_starts_as_soon_as_kinesis_allows():
    pacer = RoundPacer(1.0)
    pacer.align(1.0)
    pacer.round_took(0.1)
    first = pacer.next_start(1000.0)
    pacer.backlog = True
    assert pacer.next_start(first + 0.1) == pytest.approx(first + MIN_FETCH_INTERVAL_S)
    pacer.backlog = False  # caught up: aligned again, closing the next batch
    third = pacer.next_start(first + 0.3)
    assert third + 0.1 + MARGIN_S == pytest.approx(1001.0)


def test_the_gap_since_the_last_start_is_what_max_rate_budgets_by():
    pacer = RoundPacer(0.5)
    pacer.align(1.0)
    pacer.round_took(0.2)
    first = pacer.next_start(1000.0)
    assert pacer.gap_s is None
    second = pacer.next_start(first + 0.2)
    assert pacer.gap_s == pytest.approx(second - first)


def test_a_bad_batch_interval_is_refused_with_its_value():
    with pytest.raises(ValueError, match="batch interval must be > 0 s, got 0"):
        RoundPacer(0.5).align(0)
