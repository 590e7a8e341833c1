"""Where a batch is cut: a round running at its time is waited for, bounded (pure)."""

import threading
import time

from kinesis_dstream.dstream.batch_cut import RoundInFlight, cut_wait_s


def waiter(in_flight, cut_s, timeout_s):
    """Run ``wait_before`` in a thread; returns (thread, result holder)."""
    result: dict = {}

    def run():
        started = time.monotonic()
        result["ok"] = in_flight.wait_before(cut_s, timeout_s)
        result["waited_s"] = time.monotonic() - started

    thread = threading.Thread(target=run)
    thread.start()
    return thread, result


def test_a_batch_waits_for_the_round_that_started_before_its_time():
    in_flight = RoundInFlight()
    in_flight.started(99.5)
    thread, result = waiter(in_flight, 100.0, 10.0)
    time.sleep(0.1)
    assert thread.is_alive()  # still waiting for the round
    in_flight.ended()
    thread.join(5)
    assert result["ok"] and 0.05 < result["waited_s"] < 5


def test_a_round_started_at_or_after_the_batch_time_or_none_is_not_waited_for():
    in_flight = RoundInFlight()
    assert in_flight.wait_before(100.0, 10.0)  # no round running
    in_flight.started(100.0)
    started = time.monotonic()
    assert in_flight.wait_before(100.0, 10.0)  # it belongs to the next batch
    assert time.monotonic() - started < 1


def test_the_wait_is_bounded_and_a_stop_ends_it():
    in_flight = RoundInFlight()
    in_flight.started(99.0)
    started = time.monotonic()
    assert not in_flight.wait_before(100.0, 0.2)  # the round runs on: cut without it
    assert 0.15 < time.monotonic() - started < 5
    thread, result = waiter(in_flight, 100.0, 30.0)
    time.sleep(0.05)
    in_flight.close()  # the receiver stops
    thread.join(5)
    assert result["ok"] and result["waited_s"] < 5
    assert in_flight.wait_before(100.0, 30.0)  # and later cuts do not wait


def test_a_round_expected_to_run_past_the_bound_is_not_waited_for():
    """Rounds as long as the interval (an overloaded machine): a wait for each would hold
    every batch back the whole bound for nothing."""
    in_flight = RoundInFlight()
    in_flight.started(99.7, 1.0)  # expected to end at 100.7, past 100.0 + 0.5
    started = time.monotonic()
    assert not in_flight.wait_before(100.0, 0.5)
    assert time.monotonic() - started < 0.1
    in_flight.started(99.7, 0.6)  # expected at 100.3: waited for (it ends at once here)
    thread, result = waiter(in_flight, 100.0, 10.0)
    time.sleep(0.1)
    assert thread.is_alive()
    in_flight.ended()
    thread.join(5)
    assert result["ok"]


def test_the_bound_is_half_a_batch_interval_at_most_a_fetch_interval():
    assert cut_wait_s(1.0, 1.0) == 0.5
    assert cut_wait_s(10.0, 1.0) == 1.0  # several rounds a batch: theirs wait too
    assert cut_wait_s(0.5, 0.5) == 0.25
    assert cut_wait_s(None, 0.5) == 0.25  # rounds by hand: no batch interval known
