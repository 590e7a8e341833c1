"""The lease protocol against the in-memory store, with an injected clock.

Deterministic: passes are driven by hand (``start(background=False)``), time moves only
when a test moves it, faults come from wrapping the store (:mod:`.lease_faults`). Where
real threads are involved (the renewal pool, a hung call) a test waits for a positive
event with a bound, never sleeps and then asserts that something did not happen.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import replace

import pytest

from kinesis_dstream.errors import DependencyError, LeaseLostError, LeaseTableError
from kinesis_dstream.esn import ESN_SHARD_END, ExtendedSequenceNumber
from kinesis_dstream.leases import (
    InMemoryLeaseRefresher,
    Lease,
    LeaseCoordinator,
    LeaseListeners,
    LeaseManagementConfig,
    LeaseTimings,
)
from kinesis_dstream.leases.refresher import LeaseRefresher

from ..support.lease_faults import FaultyRefresher
from ..support.waiting import wait_until

F = 10.0  # failover time, in clock seconds
TIMINGS = LeaseTimings.from_failover(F)
SEQ = "49590338271490256608559692538361571095921575989136588898"
KEYS = [f"shardId-{i:012d}" for i in range(8)]
BOUND_S = 10.0  # real seconds to wait for an event on a loaded 2-core machine
POLL_S = 0.002  # the in-memory world changes fast: look often enough to see each step


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def writer_threads(worker: str) -> list:
    return [t for t in threading.enumerate() if t.name.startswith(f"lease-writer-{worker}")]


class World:
    """One store, one clock, workers driven by hand; every listener call recorded."""

    def __init__(self, keys=KEYS) -> None:
        self.clock = Clock()
        self.memory = InMemoryLeaseRefresher("app")
        for key in keys:
            assert self.memory.create_lease(Lease(key))
        self.store = FaultyRefresher(self.memory)
        self.events: list = []
        self.workers: list = []

    def worker(
        self, name: str, *, gained=None, timings=TIMINGS, on_lease_handoff=None, **limits
    ) -> LeaseCoordinator:
        def on_gained(lease: Lease) -> None:
            self.events.append(("gained", name, lease.lease_key, None))
            if gained is not None:
                gained(lease)

        coordinator = LeaseCoordinator(
            self.store,
            name,
            LeaseManagementConfig(timings, **limits),
            listeners=LeaseListeners(
                on_lease_gained=on_gained,
                on_lease_lost=lambda key, why: self.events.append(("lost", name, key, why)),
                on_lease_handoff=on_lease_handoff,
            ),
            clock=self.clock,
        )
        self.workers.append(coordinator)
        return coordinator.start(background=False)

    def owners(self) -> dict:
        return {lease.lease_key: lease.lease_owner for lease in self.memory.list_leases()}

    def counter(self, key: str) -> int:
        return self.memory.get_lease(key).lease_counter

    def lost(self, name: str) -> dict:
        return {key: why for kind, who, key, why in self.events if kind == "lost" and who == name}

    def close(self) -> None:
        self.store.heal()
        for worker in self.workers:
            worker.stop(release=False)


@pytest.fixture
def world():
    w = World()
    yield w
    w.close()


def test_the_in_memory_store_is_a_lease_refresher():
    assert isinstance(InMemoryLeaseRefresher(), LeaseRefresher)


def test_a_lone_worker_takes_every_lease_at_start_and_announces_each_once(world):
    a = world.worker("a")
    assert sorted(a.held_leases()) == KEYS
    assert sorted(a.ready_leases()) == KEYS  # no parents: ready once announced
    assert sorted(key for kind, _, key, _ in world.events if kind == "gained") == KEYS
    assert set(world.owners().values()) == {"a"}
    assert a.counts() == {"taken": 8, "stolen": 0, "assigned": 0, "handed_off": 0, "lost": 0}


def test_an_owned_lease_is_taken_only_after_its_counter_stood_still_for_the_failover_time(
    world,
):
    a = world.worker("a")
    a.stop(release=False)  # a crash: nothing released, nothing renewed any more
    b = world.worker("b", max_leases_to_steal=0)  # first sight at start: not expired
    assert b.held_leases() == {}
    world.clock.advance(F)
    assert b.take_leases() == []  # exactly the failover time: not yet
    world.clock.advance(0.001)
    assert sorted(b.take_leases()) == KEYS
    assert set(world.owners().values()) == {"b"}


def test_renewals_keep_leases_alive_in_another_workers_eyes(world):
    a = world.worker("a")
    b = world.worker("b", max_leases_to_steal=0)
    for _ in range(9):  # three failover periods
        world.clock.advance(F / 3)
        a.renew_leases()
        assert b.take_leases() == []
    assert sorted(a.held_leases()) == KEYS
    assert a.renewal_stats().renewals == 9 * 8
    assert a.renewal_stats().max_gap_s == pytest.approx(F / 3)


def test_a_new_worker_steals_one_lease_a_pass_and_the_victim_loses_it_at_its_next_renewal(
    world,
):
    a = world.worker("a")
    b = world.worker("b")  # its start pass steals one
    assert len(b.held_leases()) == 1
    for _ in range(3):
        world.clock.advance(F / 3)
        a.renew_leases()
        b.renew_leases()
        world.clock.advance(1.0)
        assert len(b.take_leases()) == 1
    a.renew_leases()
    assert (len(a.held_leases()), len(b.held_leases())) == (4, 4)
    assert not set(a.held_leases()) & set(b.held_leases())
    assert set(world.lost("a")) == set(b.held_leases())
    assert set(world.lost("a").values()) == {"another worker took it"}
    assert b.take_leases() == []  # balanced: nothing more to steal
    assert b.counts()["stolen"] == 4 and a.counts()["lost"] == 4


def test_an_early_pass_takes_unowned_leases_but_steals_only_as_often_as_a_regular_one(world):
    world.worker("a")  # holds all eight
    b = world.worker("b", max_leases_to_steal=1)  # its start pass stole one (a regular pass)
    assert len(b.held_leases()) == 1
    world.clock.advance(1.0)
    assert b.take_leases(steal=False) == []  # nothing unowned: an early pass steals nothing
    fresh = "shardId-000000000100"
    assert world.memory.create_lease(Lease(fresh))  # a child created at a shard end
    assert b.take_leases(steal=False) == [fresh]  # taken at once, no steal needed
    acquirer = b._acquirer  # the taker thread's rule for its woken passes
    assert not acquirer.steal_due()  # the start's pass was a regular one, a second ago
    world.clock.advance(0.85 * b.taker_interval_s - 1.0)
    assert not acquirer.steal_due()  # woken early: no steal within a taker interval
    world.clock.advance(0.1 * b.taker_interval_s)
    assert acquirer.steal_due()  # a regular pass's time: may steal again
    assert not acquirer.steal_due()  # and that pass counts as the last one that could
    owners = world.owners()  # the early passes stole nothing: b has the start's steal
    assert sorted(owners.values()).count("b") == 2 and owners[fresh] == "b"


def test_a_worker_that_cannot_renew_fences_itself_after_the_failover_time(world):
    a = world.worker("a")
    taken_at = world.clock.now
    world.store.fail("renew", lambda: DependencyError("DynamoDB is down"))
    before = {key: world.counter(key) for key in KEYS}
    for n in (1, 2, 3):
        world.clock.now = taken_at + n * F / 3 - 0.01
        a.renew_leases()
    world.clock.now = taken_at + F  # exactly the failover time since the take
    assert sorted(a.held_leases()) == KEYS  # not yet: only beyond it
    world.clock.advance(0.001)
    assert a.held_leases() == {}
    assert set(world.lost("a").values()) == {"not renewed within the failover time"}
    with pytest.raises(LeaseLostError, match=KEYS[0]):
        a.checkpoint(KEYS[0], ExtendedSequenceNumber(SEQ))
    assert {key: world.counter(key) for key in KEYS} == before  # nothing written
    assert a.renewal_stats().failures == 3 * 8


def test_one_failed_renewal_costs_that_lease_one_renewal_and_nothing_else(world):
    a = world.worker("a")
    world.store.fail("renew", lambda: DependencyError("InternalServerError"), key=KEYS[3])
    world.clock.advance(F / 3)
    before = {key: world.counter(key) for key in KEYS}
    a.renew_leases()
    assert {k: world.counter(k) - before[k] for k in KEYS} == {
        k: 0 if k == KEYS[3] else 1 for k in KEYS
    }
    world.store.heal()
    world.clock.advance(F / 3)
    a.renew_leases()
    assert world.counter(KEYS[3]) == before[KEYS[3]] + 1
    assert sorted(a.held_leases()) == KEYS and world.lost("a") == {}


def test_a_hung_renewal_delays_no_other_lease_and_fences_only_its_own(world):
    timings = replace(TIMINGS, renewal_timeout_s=0.2)
    a = world.worker("a", timings=timings)
    hung = world.store.hang("renew", key=KEYS[0])
    others = KEYS[1:]
    before = {key: world.counter(key) for key in KEYS}
    for n in range(1, 4):
        world.clock.advance(F / 3)
        started = time.monotonic()
        a.renew_leases()
        assert time.monotonic() - started < BOUND_S  # the pass waited its bound, not the hang
        wait_until(
            lambda n=n: all(world.counter(k) == before[k] + n for k in others),
            BOUND_S,
            f"pass {n} renews the other leases",
            interval_s=POLL_S,
        )
    assert hung.entered.is_set() and world.store.calls[("renew", KEYS[0])] == 1
    assert a.renewal_stats().skipped >= 2  # later passes did not queue it again
    world.clock.advance(0.001)  # F + 1 ms since the take: only the hung lease is fenced
    assert sorted(a.held_leases()) == others
    assert world.lost("a") == {KEYS[0]: "not renewed within the failover time"}
    hung.release.set()
    wait_until(
        lambda: world.counter(KEYS[0]) == before[KEYS[0]] + 1,
        BOUND_S,
        "the hung call lands",
        interval_s=POLL_S,
    )
    wait_until(
        lambda: a.renewal_stats().renewals == 3 * len(others),
        BOUND_S,
        "its result is handled",
        interval_s=POLL_S,
    )
    assert KEYS[0] not in a.held_leases()  # a late success does not resurrect it


def test_a_gained_listener_that_fails_releases_the_lease_for_three_taker_passes(world, caplog):
    def refuse(lease: Lease) -> None:
        if lease.lease_key == KEYS[1]:
            raise ValueError("AT_TIMESTAMP checkpoint but no initial timestamp configured")

    with caplog.at_level(logging.ERROR, logger="kinesis_dstream.leases"):
        a = world.worker("a", gained=refuse)
    assert KEYS[1] not in a.held_leases() and len(a.held_leases()) == 7
    released = world.memory.get_lease(KEYS[1])
    assert released.lease_owner is None and released.lease_counter == 2  # taken, evicted
    (line,) = [r.getMessage() for r in caplog.records if KEYS[1] in r.getMessage()]
    assert "releasing lease" in line and "no initial timestamp configured" in line
    assert "listener failed" in world.lost("a")[KEYS[1]]
    for _ in range(3):  # not taken again, though unowned, for three taker passes
        assert a.take_leases() == []
        world.clock.advance(a.taker_interval_s - 0.01)
    world.clock.advance(0.1)
    assert a.take_leases() == [KEYS[1]]  # taken again, and refused again by the listener
    assert KEYS[1] not in a.held_leases()
    gained = [key for kind, _, key, _ in world.events if kind == "gained" and key == KEYS[1]]
    assert len(gained) == 2 and world.memory.get_lease(KEYS[1]).lease_owner is None


def test_a_failed_parent_read_leaves_the_child_held_and_waiting_and_no_renewal_reads(world):
    parent, child = "shardId-000000000100", "shardId-000000000101"
    world.memory.create_lease(Lease(child, parent_shard_ids=frozenset({parent})))
    world.store.fail("get_lease", lambda: DependencyError("GetItem timed out"), key=parent)
    a = world.worker("a")
    assert child in a.held_leases()  # held (and renewed) although its readiness is unknown
    assert child not in a.ready_leases() and world.owners()[child] == "a"
    a.check_parents()  # the read fails: still waiting, still held
    assert child in a.held_leases() and child not in a.ready_leases()
    reads = world.store.calls["get_lease"]
    world.clock.advance(F / 3)
    a.renew_leases()
    assert world.store.calls["get_lease"] == reads  # a renewal pass reads nothing
    assert world.counter(child) == 2 and world.lost("a") == {}
    world.store.heal()
    a.check_parents()  # parent absent (deleted after it finished): ready
    assert child in a.ready_leases()


def test_a_child_is_ready_once_its_parent_is_finished(world):
    parent, child = KEYS[0], "shardId-000000000101"
    world.memory.create_lease(Lease(child, parent_shard_ids=frozenset({parent})))
    a = world.worker("a")
    assert child not in a.ready_leases() and parent in a.ready_leases()
    a.check_parents()
    assert child not in a.ready_leases()  # the parent is open
    a.shard_ended(parent, [child])
    a.check_parents()
    assert child in a.ready_leases() and parent not in a.held_leases()


def test_the_scan_makes_a_child_ready_when_it_shows_every_parent_finished(world):
    parent, child = KEYS[0], "shardId-000000000101"
    world.memory.create_lease(Lease(child, parent_shard_ids=frozenset({parent})))
    a = world.worker("a")
    a.shard_ended(parent, [child])
    reads = world.store.calls["get_lease"]
    a.take_leases()
    assert child in a.ready_leases() and world.store.calls["get_lease"] == reads


def test_a_checkpoint_counts_as_a_renewal_and_only_moves_forward(world):
    a = world.worker("a", max_leases_for_worker=1)
    (key,) = a.held_leases()
    world.store.fail("renew", lambda: DependencyError("down"))
    world.clock.advance(6.0)
    written = a.checkpoint(key, ExtendedSequenceNumber(SEQ, 2))
    assert world.memory.get_lease(key) == written
    world.clock.advance(F)  # 16 s after the take, 10 s after the checkpoint
    assert key in a.held_leases()
    with pytest.raises(ValueError, match="before the current checkpoint"):
        a.checkpoint(key, ExtendedSequenceNumber(SEQ, 1))
    world.clock.advance(0.001)
    assert a.held_leases() == {}


def test_a_checkpoint_on_a_stolen_lease_writes_nothing_and_drops_it(world):
    a = world.worker("a", max_leases_for_worker=1)
    (key,) = a.held_leases()
    stolen = world.memory.take(world.memory.get_lease(key), "thief")
    with pytest.raises(LeaseLostError, match="nothing was written"):
        a.checkpoint(key, ESN_SHARD_END, [])
    assert world.memory.get_lease(key) == stolen and key not in a.held_leases()


def test_stop_releases_the_others_when_one_release_fails_and_leaves_no_thread(world):
    a = world.worker("a")
    assert len(writer_threads("a")) == 20  # the KCL's pool size, no more
    world.store.fail("evict", lambda: DependencyError("DynamoDB is down"), key=KEYS[2])
    a.stop(release=True)
    owners = world.owners()
    assert owners.pop(KEYS[2]) == "a"  # it expires instead
    assert set(owners.values()) == {None}
    assert set(world.lost("a")) == set(KEYS)
    assert writer_threads("a") == []


def test_stop_returns_in_bounded_time_while_every_release_hangs(world):
    timings = replace(TIMINGS, release_timeout_s=0.3, join_timeout_s=0.3)
    a = world.worker("a", timings=timings)
    hung = world.store.hang("evict")
    started = time.monotonic()
    a.stop(release=True)
    took = time.monotonic() - started
    assert took < timings.release_timeout_s + timings.join_timeout_s + 2.0
    assert hung.entered.is_set() and set(world.lost("a")) == set(KEYS)
    world.store.heal()  # the hung calls return; their threads end
    wait_until(
        lambda: writer_threads("a") == [], BOUND_S, "the pool's threads end", interval_s=POLL_S
    )
    assert set(world.owners().values()) <= {"a", None}


def test_background_threads_renew_and_stop_within_the_bound_when_the_store_is_down():
    world = World()
    timings = LeaseTimings.from_failover(0.6)
    a = LeaseCoordinator(world.store, "bg", LeaseManagementConfig(timings)).start()
    try:
        wait_until(
            lambda: world.counter(KEYS[0]) >= 3,
            BOUND_S,
            "the renewer thread renews",
            interval_s=POLL_S,
        )
        world.store.fail("renew", lambda: DependencyError("down"))
        world.store.fail("evict", lambda: DependencyError("down"))
        world.store.fail("list_leases", lambda: DependencyError("down"))
        started = time.monotonic()
        a.stop(release=True)
        assert time.monotonic() - started < timings.failover_time_s + timings.join_timeout_s + 2
        assert [t for t in threading.enumerate() if t.name.endswith("-bg")] == []
        assert writer_threads("bg") == []
    finally:
        world.close()
        a.stop(release=False)


def test_stop_of_a_coordinator_never_started_does_nothing():
    LeaseCoordinator(InMemoryLeaseRefresher(), "idle").stop()


def test_a_follower_adopts_its_other_assigned_leases_past_one_it_cannot_read(caplog):
    # A KCL 3.x leader assigned two leases to this worker; one item cannot be read (the
    # Java daemon wrote a checkpoint that is no sequence number): the other is adopted,
    # the bad one warned about once, and the pass goes on in every later tick
    memory = InMemoryLeaseRefresher()
    for key in ("shardId-a", "shardId-b"):
        memory.create_lease(Lease(key, lease_owner="follower"))
    store = FaultyRefresher(memory)
    store.fail(
        "get_lease",
        lambda: LeaseTableError("table 't': lease shardId-a cannot be read (not a number)"),
        key="shardId-a",
    )
    coordinator = LeaseCoordinator(store, "follower")
    caplog.set_level(logging.WARNING, logger="kinesis_dstream.leases.take_pass")
    adopt = coordinator._acquirer.adopt_assigned
    assert adopt(["shardId-a", "shardId-b"]) == ["shardId-b"]
    assert adopt(["shardId-a"]) == []
    assert set(coordinator.held_leases()) == {"shardId-b"}
    warned = [r.getMessage() for r in caplog.records]
    assert warned == [
        "table 't': lease shardId-a cannot be read (not a number); not adopted until its "
        "item is mended"
    ]
