"""A KCL 3.x graceful handoff seen by every write, not only by the renewer.

The leader's ``initiateGracefulLeaseHandoff`` sets ``leaseOwner = B`` and
``checkpointOwner = A`` with the counter unchanged. Whichever write of A's comes next (a
renewal, the application's checkpoint, the release at stop) loses its condition, reads
the lease once and, seeing A as checkpoint owner, carries the handoff on: the checkpoint
is written as checkpoint owner, the handoff listener is told (the kcl daemon's child
gets ``shutdownRequested``), and the lease is transferred to B. Against the in-memory
store with an injected clock (the fixtures of :mod:`.test_lease_protocol`).
"""

from __future__ import annotations

import threading
import time
from dataclasses import replace

import pytest

from kinesis_dstream.errors import LeaseLostError
from kinesis_dstream.esn import ExtendedSequenceNumber
from kinesis_dstream.leases.held import LeaseState

from ..support.waiting import wait_until
from .test_lease_protocol import BOUND_S, POLL_S, SEQ, World

NEW = "b"


@pytest.fixture
def world():
    w = World()
    yield w
    w.close()


def start_a(world: World) -> tuple:
    """Worker ``a`` holding one lease; returns (coordinator, key, handoffs told)."""
    handoffs: list = []
    a = world.worker(
        "a",
        max_leases_for_worker=1,
        on_lease_handoff=lambda key, owner: handoffs.append((key, owner)),
    )
    (key,) = a.held_leases()
    return a, key, handoffs


def initiate_handoff(world: World, key: str, old: str = "a", new: str = NEW) -> None:
    """The leader's write: leaseOwner = new, checkpointOwner = old, counter unchanged."""
    stored = world.memory.get_lease(key)
    assert stored.lease_owner == old and stored.checkpoint_owner is None
    assert world.memory.delete(stored)
    assert world.memory.create_lease(replace(stored, lease_owner=new, checkpoint_owner=old))


def state_of(coordinator, key: str) -> LeaseState:
    entry = coordinator._held.get(key)
    assert entry is not None, f"{key} is not held"
    return entry.state


def test_a_checkpoint_that_finds_a_handoff_is_written_and_the_handoff_goes_on(world):
    a, key, handoffs = start_a(world)
    initiate_handoff(world, key)
    esn = ExtendedSequenceNumber(SEQ, 0)
    written = a.checkpoint(key, esn)  # before any renewal noticed the handoff
    stored = world.memory.get_lease(key)
    assert stored == written and stored.checkpoint == esn
    assert (stored.lease_owner, stored.checkpoint_owner) == (NEW, "a")  # still handing off
    assert handoffs == [(key, NEW)] and world.lost("a") == {}  # shutdownRequested, not lost
    assert state_of(a, key) is LeaseState.HANDING_OFF and key not in a.ready_leases()
    # The application's checkpoint at shutdownRequested, then the transfer.
    later = ExtendedSequenceNumber(SEQ, 5)
    assert a.checkpoint(key, later).checkpoint == later
    a.renew_leases()  # renewed as checkpoint owner meanwhile: no second handoff, no loss
    assert handoffs == [(key, NEW)] and key in a.held_leases()
    assert a.hand_off(key)
    stored = world.memory.get_lease(key)
    assert (stored.lease_owner, stored.checkpoint_owner, stored.checkpoint) == (NEW, None, later)
    assert world.lost("a") == {key: f"handed off to {NEW}"}
    assert a.counts()["handed_off"] == 1 and a.counts()["lost"] == 0


def test_without_a_listener_the_checkpoint_is_written_and_the_lease_transferred(world):
    a = world.worker("a", max_leases_for_worker=1)  # createStream: nobody to tell
    (key,) = a.held_leases()
    initiate_handoff(world, key)
    esn = ExtendedSequenceNumber(SEQ, 3)
    a.checkpoint(key, esn)
    stored = world.memory.get_lease(key)
    assert (stored.lease_owner, stored.checkpoint_owner, stored.checkpoint) == (NEW, None, esn)
    assert key not in a.held_leases() and world.lost("a") == {key: f"handed off to {NEW}"}


def test_the_renewer_and_a_checkpoint_find_one_handoff_once(world):
    a, key, handoffs = start_a(world)
    initiate_handoff(world, key)
    a.renew_leases()  # the renewer first this time
    assert handoffs == [(key, NEW)] and state_of(a, key) is LeaseState.HANDING_OFF
    esn = ExtendedSequenceNumber(SEQ, 1)
    assert a.checkpoint(key, esn).checkpoint == esn
    assert handoffs == [(key, NEW)] and world.lost("a") == {}


def test_a_lease_taken_while_handing_off_is_lost_not_handed_off_again(world):
    a, key, handoffs = start_a(world)
    initiate_handoff(world, key)
    a.checkpoint(key, ExtendedSequenceNumber(SEQ, 0))
    # The leader gives up on the handoff and assigns the lease (counter + 1, no cp owner).
    stored = world.memory.get_lease(key)
    world.memory.take(replace(stored, checkpoint_owner=None), "c")
    with pytest.raises(LeaseLostError, match="nothing was written"):
        a.checkpoint(key, ExtendedSequenceNumber(SEQ, 9))
    assert world.memory.get_lease(key).lease_owner == "c"
    assert handoffs == [(key, NEW)] and key in world.lost("a")


def test_a_lease_taken_without_a_handoff_is_still_a_loss(world):
    a, key, handoffs = start_a(world)
    world.memory.take(world.memory.get_lease(key), "thief")
    with pytest.raises(LeaseLostError, match="taken by another worker"):
        a.checkpoint(key, ExtendedSequenceNumber(SEQ, 0))
    assert handoffs == [] and key in world.lost("a")


def test_a_release_that_finds_a_handoff_transfers_the_lease(world):
    a, key, _ = start_a(world)
    checkpoint = a.checkpoint(key, ExtendedSequenceNumber(SEQ, 2)).checkpoint
    initiate_handoff(world, key)
    a.stop(release=True)  # the release's evict loses its condition: the handoff goes on
    stored = world.memory.get_lease(key)
    assert (stored.lease_owner, stored.checkpoint_owner) == (NEW, None)
    assert stored.checkpoint == checkpoint and stored.owner_switches_since_checkpoint == 1


def test_a_release_of_a_stolen_lease_writes_nothing(world):
    a, key, _ = start_a(world)
    stolen = world.memory.take(world.memory.get_lease(key), "thief")
    a.stop(release=True)
    assert world.memory.get_lease(key) == stolen


def leave_a_renewal_unanswered(world: World, a, key: str) -> None:
    """One renewal of ``key`` raises (no answer: it may have landed), then the store heals."""
    world.store.fail("renew", lambda: TimeoutError("no answer (injected)"), key=key)
    before = a.renewal_stats().failures
    a.renew_leases()
    assert a.renewal_stats().failures == before + 1
    world.store.heal()


def test_a_renewal_after_a_write_that_got_no_answer_still_sees_the_handoff(world):
    a, key, handoffs = start_a(world)
    leave_a_renewal_unanswered(world, a, key)
    initiate_handoff(world, key)
    a.renew_leases()  # reads the lease back first: handed off, not taken
    assert handoffs == [(key, NEW)] and world.lost("a") == {}
    assert state_of(a, key) is LeaseState.HANDING_OFF


def test_a_checkpoint_after_a_write_that_got_no_answer_is_written_as_checkpoint_owner(world):
    a, key, handoffs = start_a(world)
    leave_a_renewal_unanswered(world, a, key)
    initiate_handoff(world, key)
    esn = ExtendedSequenceNumber(SEQ, 4)
    assert a.checkpoint(key, esn).checkpoint == esn
    stored = world.memory.get_lease(key)
    assert (stored.lease_owner, stored.checkpoint_owner, stored.checkpoint) == (NEW, "a", esn)
    assert handoffs == [(key, NEW)] and world.lost("a") == {}


def test_a_release_after_a_write_that_got_no_answer_transfers_a_handed_off_lease(world):
    a, key, _ = start_a(world)
    checkpoint = a.checkpoint(key, ExtendedSequenceNumber(SEQ, 2)).checkpoint
    leave_a_renewal_unanswered(world, a, key)
    initiate_handoff(world, key)
    a.stop(release=True)
    stored = world.memory.get_lease(key)
    assert (stored.lease_owner, stored.checkpoint_owner) == (NEW, None)
    assert stored.checkpoint == checkpoint


def test_an_expired_handoff_whose_lease_another_write_holds_never_stalls_the_renewals(world):
    a, key, handoffs = start_a(world)
    a.membership.handoff_timeout_s = 1.0  # clock seconds, well within the failover time
    initiate_handoff(world, key)
    a.renew_leases()
    assert handoffs == [(key, NEW)] and state_of(a, key) is LeaseState.HANDING_OFF
    # The child's checkpoint hangs in the store, holding the lease's write lock.
    hung = world.store.hang("checkpoint", key=key)
    checkpoint = threading.Thread(
        target=lambda: a.checkpoint(key, ExtendedSequenceNumber(SEQ, 1)), name="test-checkpoint"
    )
    checkpoint.start()
    try:
        assert hung.entered.wait(BOUND_S)
        world.clock.advance(2.0)  # the handoff is past its timeout
        started = time.monotonic()
        a.renew_leases()  # tries the transfer, which cannot have the lock now
        assert time.monotonic() - started < 2.0  # not the failover time (10 s)
        assert world.memory.get_lease(key).checkpoint_owner == "a"  # not transferred yet
    finally:
        hung.release.set()
        checkpoint.join(BOUND_S)
    assert not checkpoint.is_alive()
    a.renew_leases()  # the next pass transfers it
    wait_until(
        lambda: world.memory.get_lease(key).checkpoint_owner is None,
        BOUND_S,
        "the expired handoff transferred at the next pass",
        interval_s=POLL_S,
    )
    stored = world.memory.get_lease(key)
    assert (stored.lease_owner, stored.checkpoint) == (NEW, ExtendedSequenceNumber(SEQ, 1))
