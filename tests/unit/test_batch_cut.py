"""Where a batch is cut: a round running at its time is waited for, bounded (pure)."""

import threading
import time

from kinesis_dstream.dstream.batch_cut import BatchCuts, RoundInFlight, cut_wait_s


def waiter(in_flight, cut_s, timeout_s):
    """Run ``wait_before`` in a thread; returns (thread, result holder)."""
    result: dict = {}

    def run():
        started = time.monotonic()
        result["ok"] = in_flight.wait_before(cut_s, timeout_s)
        result["waited_s"] = time.monotonic() - started

    thread = threading.Thread(target=run, daemon=True)  # a wrong wait must not hang the run
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


def frozen(wall_s):
    """A RoundInFlight whose wall clock reads ``wall_s`` (a list: the test moves it) and
    whose monotonic clock stands still, so a wait it begins never runs out by itself:
    whether it waits at all is the decision under test, not the machine's speed."""
    return RoundInFlight(clock=lambda: 0.0, wall_clock=lambda: wall_s[0])


def assert_waits_for_the_round(in_flight, cut_s, timeout_s):
    thread, result = waiter(in_flight, cut_s, timeout_s)
    time.sleep(0.1)
    assert thread.is_alive()  # waiting for the round
    in_flight.ended()
    thread.join(5)
    assert result["ok"]


def assert_cut_without_waiting(in_flight, cut_s, timeout_s):
    thread, result = waiter(in_flight, cut_s, timeout_s)
    thread.join(5)
    assert not thread.is_alive() and result["ok"] is False
    in_flight.ended()


def test_a_round_expected_to_run_past_the_bound_is_not_waited_for():
    """Rounds as long as the interval (an overloaded machine): a wait for each would hold
    every batch back the whole bound for nothing. The edge, a 0.5 s bound from a cut at
    its time (100.0): a round expected to end at 100.55 is not waited for, one expected
    at 100.45 is."""
    in_flight = frozen([100.0])
    in_flight.started(99.7, 0.85)
    assert_cut_without_waiting(in_flight, 100.0, 0.5)
    in_flight.started(99.7, 0.75)
    assert_waits_for_the_round(in_flight, 100.0, 0.5)


def test_the_deadline_and_the_expected_end_are_measured_from_one_moment():
    """The wait lasts ``timeout_s`` from when the cut is asked for; the round's expected
    end is compared with that same deadline, not with the batch time plus the bound."""
    now = [100.3]  # batch 100.0 cut 0.3 s late (Spark's job generator behind): until 100.8
    in_flight = frozen(now)
    in_flight.started(99.7, 1.05)  # expected at 100.75: inside the wait
    assert_waits_for_the_round(in_flight, 100.0, 0.5)
    in_flight.started(99.7, 1.15)  # expected at 100.85: past it
    assert_cut_without_waiting(in_flight, 100.0, 0.5)
    now[0] = 99.8  # a cut asked 0.2 s before its time: until 100.3
    in_flight.started(99.7, 0.65)  # expected at 100.35: a wait would run out first
    assert_cut_without_waiting(in_flight, 100.0, 0.5)


def test_the_streams_of_one_process_share_one_deadline_per_batch_time():
    """Spark cuts batch t of every stream in turn on one thread: measured from the first
    cut of t, the waits end together (N streams: one bound a batch, not N). The
    monotonic clock is the test's: it moves only when the test says so."""
    clock = [0.0]
    cuts = BatchCuts(clock=lambda: clock[0])
    first, second = RoundInFlight(clock=lambda: clock[0]), RoundInFlight(clock=lambda: clock[0])
    first.started(99.7)
    second.started(99.8)
    result: dict = {}
    thread = threading.Thread(
        target=lambda: result.update(ok=cuts.wait(first, 100_000, 0.5)), daemon=True
    )
    thread.start()
    time.sleep(0.05)
    assert thread.is_alive()  # the first stream waits for its round
    clock[0] = 0.5  # ... the whole bound: its round runs on, and the batch goes without it
    first.ended()
    thread.join(5)
    assert result == {"ok": True}
    late: dict = {}
    thread = threading.Thread(
        target=lambda: late.update(ok=cuts.wait(second, 100_000, 0.5)), daemon=True
    )
    thread.start()
    thread.join(2)
    assert late == {"ok": False}, "the second stream's cut of the same batch waited again"
    # the next batch time has a wait of its own
    thread = threading.Thread(
        target=lambda: late.update(ok=cuts.wait(second, 101_000, 0.5)), daemon=True
    )
    thread.start()
    time.sleep(0.05)
    assert thread.is_alive()
    second.ended()
    thread.join(5)
    assert late == {"ok": True}


def test_the_bound_is_half_a_batch_interval_at_most_a_fetch_interval():
    assert cut_wait_s(1.0, 1.0) == 0.5
    assert cut_wait_s(10.0, 1.0) == 1.0  # several rounds a batch: theirs wait too
    assert cut_wait_s(0.5, 0.5) == 0.25
    assert cut_wait_s(None, 0.5) == 0.25  # rounds by hand: no batch interval known
