"""Pure lease logic with an injected clock: ESN order, expiry by observation, taking."""

import random

import pytest

from kinesis_dstream.esn import (
    ESN_AT_TIMESTAMP,
    ESN_LATEST,
    ESN_SHARD_END,
    ESN_TRIM_HORIZON,
    ExtendedSequenceNumber,
)
from kinesis_dstream.leases.lease import Lease
from kinesis_dstream.leases.taker import LeaseObserver, lease_counts, leases_to_take

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


@pytest.mark.parametrize("bad", ["", "12a", "latest", "-1", "SHARD END"])
def test_bad_sequence_numbers_are_refused_by_name(bad):
    with pytest.raises(ValueError, match="not a sequence number"):
        ESN(bad)


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
