"""Pure lease logic with an injected clock: ESN order, expiry by observation, taking,
timings, the held-lease state table, and the bounded worker pool."""

import random
import threading
import time
from dataclasses import replace

import pytest

from kinesis_dstream.esn import (
    ESN_AT_TIMESTAMP,
    ESN_LATEST,
    ESN_SHARD_END,
    ESN_TRIM_HORIZON,
    ExtendedSequenceNumber,
)
from kinesis_dstream.leases.dynamodb import DEFAULT_RENEW_BACKOFF
from kinesis_dstream.leases.held import HeldLease, HeldLeases, LeaseState
from kinesis_dstream.leases.lease import Lease
from kinesis_dstream.leases.take_rules import LeaseObserver, lease_counts, leases_to_take
from kinesis_dstream.leases.thread_pool import ThreadPool
from kinesis_dstream.leases.timing import LeaseManagementConfig, LeaseTimings

ESN = ExtendedSequenceNumber
KINESALITE_SEQ = "49680425625131456410559944140152037382098193786771341314"  # 56 digits


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def test_sentinels_order_below_numbers_and_shard_end_above():
    ordered = [
        ESN_AT_TIMESTAMP,
        ESN_TRIM_HORIZON,
        ESN_LATEST,
        ESN("0"),
        ESN("9"),
        ESN("10"),
        ESN(KINESALITE_SEQ),
        ESN(KINESALITE_SEQ, 1),
        ESN(KINESALITE_SEQ, 12),
        ESN(str(int(KINESALITE_SEQ) + 1)),
        ESN("9" * 60),
        ESN_SHARD_END,
    ]
    assert sorted(reversed(ordered)) == ordered
    assert ESN("10") > ESN("9")  # as integers; as strings "10" < "9"
    assert ESN("100000000000000000000000000000000000000000000000000000000") > ESN(KINESALITE_SEQ)
    assert ESN(KINESALITE_SEQ, 3) == ESN(KINESALITE_SEQ, 3)
    assert len({ESN("5", 1), ESN("5", 1), ESN("5", 2)}) == 2
    assert str(ESN("5", 2)) == "5/2" and str(ESN_SHARD_END) == "SHARD_END"
    assert ESN(KINESALITE_SEQ, 2).numeric_key() == (int(KINESALITE_SEQ), 2)
    assert ESN_LATEST.numeric_key() is None


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "12a",
        "latest",
        "-1",
        "SHARD END",
        "\u0661\u0662\u0663",  # Arabic-Indic 123: str.isdigit and int() take it
        "\uff11\uff12\uff13",  # fullwidth 123
        "\u00b2",  # superscript two: isdigit, not a decimal
        "0123",  # not Kinesis's spelling: equal to 123 as a number
        "00",
        "1" * 130,  # Kinesis's pattern allows 129 digits
        " 123",
    ],
)
def test_bad_sequence_numbers_are_refused_by_name(bad):
    with pytest.raises(ValueError, match="not a sequence number"):
        ESN(bad)


def test_a_sequence_number_is_kinesiss_ascii_digits_so_one_number_has_one_spelling():
    assert ESN("0") < ESN("1" * 129)
    with pytest.raises(ValueError):
        ESN("\u0661\u0662\u0663")  # once equal to ESN("123"), and written as it was
    for bad_sub in (-1, 2**63):
        with pytest.raises(ValueError, match="sub-sequence number"):
            ESN("123", bad_sub)
    for not_int in ("1", 1.0, True, None):
        with pytest.raises(TypeError, match="sub-sequence number"):
            ESN("123", not_int)
    assert ESN("123", 2**63 - 1).sub_sequence_number == 2**63 - 1  # a Java long


def owned(key, owner, counter=1):
    return Lease(key, lease_counter=counter, lease_owner=owner)


def test_an_owned_lease_expires_only_after_its_counter_stands_still_for_the_failover_time():
    clock = Clock()
    observer = LeaseObserver(10.0, clock)
    lease = owned("s0", "a", counter=5)
    observer.observe([lease])
    assert not observer.is_expired(lease)  # first seen owned: counts as just renewed
    clock.now += 9.9
    observer.observe([lease])
    assert not observer.is_expired(lease)
    clock.now += 0.2
    assert observer.is_expired(lease)  # 10.1 s without a change
    renewed = owned("s0", "a", counter=6)
    observer.observe([renewed])
    assert not observer.is_expired(renewed)  # a change resets the clock
    clock.now += 10.1
    observer.observe([renewed])
    assert observer.is_expired(renewed)


def test_unowned_leases_are_available_at_once_and_vanished_ones_are_forgotten():
    clock = Clock()
    observer = LeaseObserver(10.0, clock)
    free = Lease("s1", lease_counter=3)
    observer.observe([free, owned("s2", "b")])
    assert observer.is_expired(free)
    clock.now += 11
    observer.observe([free])  # s2 deleted
    clock.now += 11
    observer.observe([owned("s2", "b")])  # back, seen anew: not expired yet
    assert not observer.is_expired(owned("s2", "b"))


def test_a_lease_with_a_counter_we_did_not_observe_is_not_judged_expired():
    clock = Clock()
    observer = LeaseObserver(1.0, clock)
    observer.observe([owned("s0", "a", 1)])
    clock.now += 5
    assert not observer.is_expired(owned("s0", "a", 2))


def test_a_lone_worker_takes_every_lease():
    leases = [Lease(f"s{i}") for i in range(8)]
    taken = leases_to_take(leases, {lease.lease_key for lease in leases}, "me")
    assert sorted(lease.lease_key for lease in taken) == [f"s{i}" for i in range(8)]


def test_a_new_worker_steals_one_a_pass_from_the_most_loaded():
    leases = [owned(f"s{i}", "a") for i in range(8)]
    taken = leases_to_take(leases, set(), "b", rng=random.Random(1))
    assert len(taken) == 1 and taken[0].lease_owner == "a"
    # more at a time when allowed, but never past what the victim holds over target
    assert len(leases_to_take(leases, set(), "b", max_leases_to_steal=10)) == 4


def test_expired_leases_are_taken_before_anything_is_stolen():
    leases = [owned(f"s{i}", "a") for i in range(6)] + [owned("s6", "dead"), owned("s7", "dead")]
    taken = leases_to_take(leases, {"s6", "s7"}, "b", max_leases_to_steal=5)
    assert sorted(lease.lease_key for lease in taken) == ["s6", "s7"]
    counts = lease_counts(leases, {"s6", "s7"}, "b")
    assert counts == {"a": 6, "b": 0}  # owners of expired leases are not live workers


@pytest.mark.parametrize(
    "held, me, expected",
    [
        ({"a": 4, "b": 4}, 0, 1),  # 8 leases, 3 workers: target 3, most-loaded 4: min(3, 1)
        ({"a": 3, "b": 3}, 2, 0),  # target 3, need 1, most-loaded at target: no steal
        ({"a": 5, "b": 1}, 0, 1),  # target 2, need 2, most-loaded over by 3: steal 1 (cap)
    ],
)
def test_steal_arithmetic(held, me, expected):
    leases = [owned(f"{w}{i}", w) for w, n in held.items() for i in range(n)]
    leases += [owned(f"me{i}", "me") for i in range(me)]
    assert len(leases_to_take(leases, set(), "me")) == expected


def test_need_more_than_one_and_most_loaded_at_target_steals_one():
    leases = [owned(f"a{i}", "a") for i in range(3)] + [owned(f"b{i}", "b") for i in range(3)]
    leases += [owned("me0", "me")]  # 7 leases, 3 workers: target 3, I need 2
    taken = leases_to_take(leases, set(), "me", max_leases_to_steal=5)
    assert len(taken) == 1  # rule b: most-loaded has exactly target, I need > 1: steal 1


def test_max_leases_for_worker_caps_the_target():
    leases = [Lease(f"s{i}") for i in range(8)]
    taken = leases_to_take(leases, {x.lease_key for x in leases}, "me", max_leases_for_worker=3)
    assert len(taken) == 3
    mine = [owned(f"s{i}", "me") for i in range(3)] + [Lease(f"t{i}") for i in range(5)]
    assert leases_to_take(mine, {f"t{i}" for i in range(5)}, "me", max_leases_for_worker=3) == []


# -- timings: one number, and a renewal call always fits half a renewal interval ----------


def test_every_timing_is_derived_from_the_failover_time():
    t = LeaseTimings.from_failover(10.0)
    assert (t.renewal_interval_s, t.renewal_timeout_s) == pytest.approx((10 / 3, 10 / 6))
    assert t.taker_interval_s == pytest.approx(20.05)
    assert (t.client_read_timeout_s, t.join_timeout_s, t.release_timeout_s) == (0.5, 5.0, 10.0)
    assert t.renew_backoff.max_elapsed_s == pytest.approx(0.35)
    assert t.renew_backoff == DEFAULT_RENEW_BACKOFF  # the table's default fits 10 s


@pytest.mark.parametrize("failover_s", [10.0, 20.0, 60.0, 300.0])
def test_a_renewal_call_fits_well_inside_a_renewal_interval(failover_s):
    t = LeaseTimings.from_failover(failover_s)
    # the renewal retry budget + the write + the read-back after a retried write
    assert t.renewal_call_bound_s <= t.renewal_timeout_s <= t.renewal_interval_s / 2 + 1e-9


def test_nonsense_timings_are_refused_by_name():
    with pytest.raises(ValueError, match="failover_time_s"):
        LeaseTimings.from_failover(0)
    with pytest.raises(ValueError, match="renewal_interval_s"):
        replace(LeaseTimings.from_failover(3.0), renewal_interval_s=3.0)


def test_the_lease_management_config_has_the_kcls_defaults_and_one_failover_time():
    config = LeaseManagementConfig()
    assert config.timings == LeaseTimings.from_failover(10.0)
    assert (config.max_leases_for_worker, config.max_leases_to_steal) == (None, 1)
    assert (config.shard_sync_interval_s, config.handoff_timeout_s) == (60.0, 30.0)
    assert config.renewal_threads is None  # 20, fewer than the client's connections
    quick = LeaseManagementConfig.from_failover(3.0, max_leases_to_steal=2)
    assert quick.failover_time_s == quick.timings.failover_time_s == 3.0
    assert quick.timings.renewal_interval_s == pytest.approx(1.0)
    assert quick.max_leases_to_steal == 2


@pytest.mark.parametrize(
    "field, value",
    [("max_leases_for_worker", 0), ("max_leases_to_steal", -1), ("renewal_threads", 0)],
)
def test_nonsense_limits_are_refused_by_name(field, value):
    with pytest.raises(ValueError, match=f"{field} must be >= .*, got {value}"):
        LeaseManagementConfig(**{field: value})


# -- the held-lease state table -------------------------------------------------------------


def test_held_leases_move_only_along_the_state_table_and_fence_beyond_the_failover_time():
    clock = Clock()
    held = HeldLeases(10.0, clock)
    entry = HeldLease(owned("s0", "me"), renewed_at=clock.now)
    assert held.add(entry, stolen=False)
    assert not held.move(entry, LeaseState.GAINING)
    assert held.move(entry, LeaseState.WAITING_ON_PARENTS)
    assert not held.move(entry, LeaseState.GAINING)
    assert held.move(entry, LeaseState.READY)
    assert not held.move(entry, LeaseState.WAITING_ON_PARENTS)
    clock.now += 10.0
    assert held.fence() == [] and held.holds("s0") and not held.holds("s1")
    assert held.written(entry, owned("s0", "me", 2), sent_at=clock.now - 1)
    clock.now += 9.0 + 1e-6
    assert not held.holds("s0")  # one lease's look judges as the fence does
    assert held.fence() == [entry] and held.counts()["lost"] == 1
    assert not held.written(entry, owned("s0", "me", 3), sent_at=clock.now)  # gone
    assert held.close() == [] and not held.add(entry, stolen=False)  # closed at stop


def test_the_held_version_changes_with_every_lease_and_state_change_and_only_then():
    clock = Clock()
    held = HeldLeases(10.0, clock)
    seen = [held.version]

    def changed():
        seen.append(held.version)
        return seen[-1] != seen[-2]

    entry = HeldLease(owned("s0", "me"), renewed_at=clock.now)
    assert held.add(entry, stolen=False) and changed()
    assert held.move(entry, LeaseState.READY) and changed()
    assert held.written(entry, owned("s0", "me", 2), sent_at=clock.now) and not changed()
    assert held.leases(LeaseState.READY) and held.holds("s0") and not changed()
    assert held.fence() == [] and not changed()
    clock.now += 10.0 + 1e-6
    assert held.fence() == [entry] and changed()
    other = HeldLease(owned("s1", "me"), renewed_at=clock.now)
    assert held.add(other, stolen=True) and changed()
    assert held.remove(other, lost=True) and changed()
    assert not held.remove(other, lost=True) and not changed()


def test_a_waiting_lease_reads_its_parents_often_at_first_then_every_renewal_interval():
    clock = Clock()
    timings = LeaseTimings.from_failover(10.0)
    held = HeldLeases(10.0, clock)
    entry = HeldLease(owned("child", "me"), renewed_at=clock.now)
    ready = HeldLease(owned("other", "me"), renewed_at=clock.now)
    assert held.add(entry, stolen=False) and held.add(ready, stolen=False)
    assert held.move(ready, LeaseState.READY)
    due = held.parent_reads_due  # the parent checker's question, each pass
    assert due(timings.parent_read_interval_s) == []  # nothing waits yet
    assert held.move(entry, LeaseState.WAITING_ON_PARENTS)
    assert due(timings.parent_read_interval_s) == [entry]  # at once
    assert due(timings.parent_read_interval_s) == []  # read just now
    clock.now += timings.parent_poll_interval_s
    assert timings.parent_poll_interval_s == 0.5
    assert due(timings.parent_read_interval_s) == [entry]  # half a second on
    assert due() == [entry]  # a parent finished here: every waiting lease, at once
    clock.now += timings.parent_poll_fast_for_s  # waited a minute: as slow as before
    assert due(timings.parent_read_interval_s) == [entry]
    clock.now += timings.renewal_interval_s - 0.01
    assert due(timings.parent_read_interval_s) == []
    clock.now += 0.02
    assert due(timings.parent_read_interval_s) == [entry]
    short = LeaseTimings.from_failover(0.9)  # a test's failover: never slower than renewals
    assert short.parent_poll_interval_s == pytest.approx(0.3)


# -- the worker pool: bounded threads, bounded shutdown ----------------------------------


def test_the_pool_runs_calls_and_hands_back_results_and_errors():
    pool = ThreadPool("test-pool", 2).start()
    try:
        assert pool.submit(lambda x: x * 2, 21).result(timeout=10) == 42
        with pytest.raises(ZeroDivisionError):
            pool.submit(lambda: 1 / 0).result(timeout=10)
    finally:
        assert pool.shutdown(10) == []
    with pytest.raises(RuntimeError, match="not running"):
        pool.submit(print)


def test_shutdown_cancels_queued_calls_and_reports_a_thread_still_in_a_call():
    pool = ThreadPool("test-hung", 1).start()
    entered, release = threading.Event(), threading.Event()

    def hang():
        entered.set()
        release.wait(30)

    running = pool.submit(hang)
    queued = pool.submit(print, "never")
    assert entered.wait(10)
    assert pool.shutdown(0.05) == ["test-hung-0"]
    assert queued.cancelled() and not running.done()
    release.set()
    assert running.result(timeout=10) is None
    deadline = time.monotonic() + 10
    while any(t.name == "test-hung-0" for t in threading.enumerate()):
        assert time.monotonic() < deadline, "the pool's thread did not end after its call"
        time.sleep(0.005)
