"""LeaseCoordinator workers against moto's server and dynalite, with a 1 s failover time.

Real threads, real conditional writes; times are bounded by the protocol's own intervals
(failover time, renewal interval = failover / 3, taker interval ~ 2 x failover).
"""

import dataclasses
import logging
import socket
import threading
import time

import pytest
from botocore.exceptions import ReadTimeoutError

from kinesis_dstream import LeaseLostError
from kinesis_dstream.aws import create_client
from kinesis_dstream.errors import CheckpointError
from kinesis_dstream.esn import ExtendedSequenceNumber
from kinesis_dstream.leases.coordinator import LeaseCoordinator
from kinesis_dstream.leases.dynamodb import LeaseTable
from kinesis_dstream.leases.lease import Lease
from kinesis_dstream.leases.listeners import LeaseListeners
from kinesis_dstream.leases.timing import LeaseManagementConfig, LeaseTimings

from ..support.faults import CallCounter, CallErrors, write_from_outside
from ..support.waiting import seconds_until

FAILOVER_S = 1.0
SLACK_S = 1.5  # scheduling and HTTP round trips on a loaded 2-core machine
SEQ = "49590338271490256608559692538361571095921575989136588898"


@pytest.fixture
def shards(dynamodb, unique_name):
    """An application's lease table with 8 unowned leases; yields its name."""
    table = LeaseTable(dynamodb, unique_name)
    table.create_if_missing()
    for i in range(8):
        assert table.create_lease(Lease(f"shardId-{i:012d}"))
    return unique_name


class Workers:
    """Starts coordinators, each on its own client; stops whatever is left."""

    def __init__(self, server, app):
        self.server, self.app = server, app
        self.running = []
        self.lost = []

    def start(self, name, failover_time_s=FAILOVER_S, timings=None, **limits):
        coordinator = LeaseCoordinator(
            LeaseTable(self.server.client("dynamodb"), self.app),
            name,
            LeaseManagementConfig(timings or LeaseTimings.from_failover(failover_time_s), **limits),
            listeners=LeaseListeners(
                on_lease_lost=lambda key, reason: self.lost.append((name, key, reason))
            ),
        )
        self.running.append(coordinator.start())
        return coordinator

    def counts(self):
        return {c.worker_id: len(c.held_leases()) for c in self.running}

    def stop_all(self):
        for coordinator in self.running:
            coordinator.stop()


#: The failover timings on moto by default and on dynalite in CI's long scenarios (9-11 s
#: each): every other lease test here runs on both DynamoDBs by default.
TIMINGS_ON = pytest.mark.parametrize(
    "dynamodb_server", ["moto", pytest.param("dynalite", marks=pytest.mark.slow)], indirect=True
)


@pytest.fixture
def workers(dynamodb_server, shards):
    pool = Workers(dynamodb_server, shards)
    yield pool
    pool.stop_all()


class TableChecker(threading.Thread):
    """Polls the table; every owner change must come with a higher counter."""

    def __init__(self, table):
        super().__init__(name="lease-checker", daemon=True)
        self.table = table
        self.stop_event = threading.Event()
        self.violations = []
        self.owner_changes = 0
        self.polls = 0

    def run(self):
        last = {}
        while not self.stop_event.wait(0.05):
            for lease in self.table.list_leases():
                before = last.get(lease.lease_key)
                if before is not None:
                    owner, counter = before
                    if lease.lease_counter < counter:
                        self.violations.append(f"{lease.lease_key} counter went back")
                    if lease.lease_owner != owner:
                        self.owner_changes += 1
                        if lease.lease_counter <= counter:
                            self.violations.append(
                                f"{lease.lease_key}: owner {owner} -> {lease.lease_owner} "
                                "without a counter change"
                            )
                last[lease.lease_key] = (lease.lease_owner, lease.lease_counter)
            self.polls += 1

    def stop(self):
        self.stop_event.set()
        self.join(timeout=10)


def steady_but_quick(failover_time_s: float = 3.0) -> dict:
    """Options for a worker whose leases a load stall does not fence (3 s failover) but
    whose taker passes come as often as at the file's 1 s (every 2.05 s)."""
    timings = LeaseTimings.from_failover(failover_time_s)
    quick = LeaseTimings.from_failover(FAILOVER_S).taker_interval_s
    return {
        "failover_time_s": failover_time_s,
        "timings": dataclasses.replace(timings, taker_interval_s=quick),
    }


@TIMINGS_ON
def test_one_worker_takes_all_then_a_second_balances_to_four_each(workers, dynamodb):
    # Every owner change is a steal or the loss of one: a lease fenced by a load stall and
    # taken back would show as a loss (steady_but_quick)
    a = workers.start("worker-a", **steady_but_quick())
    assert len(a.held_leases()) == 8  # one taker pass, at start
    checker = TableChecker(LeaseTable(dynamodb, workers.app))
    checker.start()
    try:
        seconds_until(lambda: checker.polls >= 1, 10, "the checker's first look")
        b = workers.start("worker-b", **steady_but_quick())  # its start pass steals one
        assert len(b.held_leases()) <= 1
        scans = CallCounter(b.table.client, "dynamodb", "Scan")
        # ... and each later pass one more. On real servers a steal can lose its
        # compare-and-swap to the victim's renewal (every failover/3), and is then made on a
        # later pass: the exact "4/4 after three passes" is pinned without races in
        # test_lease_protocol.py; here, at most one steal a pass, and the split converges.
        passes = b.taker_passes
        seconds_until(lambda: len(b.held_leases()) == 4, 10 * b.taker_interval_s, "b holds 4")
        # at most one a pass: the start pass, the passes ended since, and the one running
        # (its steal shows before its end is counted)
        assert b.counts()["stolen"] <= 1 + (b.taker_passes_begun - passes)
        # worker-a learns of each steal at its next renewal (every failover/3)
        seconds_until(
            lambda: workers.counts() == {"worker-a": 4, "worker-b": 4},
            a.failover_time_s,
            "a 4/4 split",
        )
        changes, balanced_at = checker.owner_changes, b.taker_passes
        # and it stays balanced: two more whole taker passes of b's
        seconds_until(
            lambda: b.taker_passes >= balanced_at + 2, 10 * b.taker_interval_s, "2 passes"
        )
        scans.remove()
        assert workers.counts() == {"worker-a": 4, "worker-b": 4}
        assert checker.owner_changes == changes  # no flapping
    finally:
        checker.stop()
    assert checker.polls > 10 and checker.owner_changes >= 4
    assert checker.violations == []
    assert not set(a.held_leases()) & set(b.held_leases())
    assert {key for name, key, _ in workers.lost if name == "worker-a"} == set(b.held_leases())


@TIMINGS_ON
def test_a_killed_worker_is_replaced_within_failover_plus_two_taker_passes(workers):
    coordinators = [workers.start(f"w{i}") for i in range(3)]
    seconds_until(
        lambda: sorted(workers.counts().values()) == [2, 3, 3],
        6 * coordinators[0].taker_interval_s,
        "3 workers balanced",
    )
    victim = max(coordinators, key=lambda c: len(c.held_leases()))
    orphans = set(victim.held_leases())
    victim.stop(release=False)  # a crash: no release, the leases must expire
    workers.running.remove(victim)
    survivors = workers.running
    bound = FAILOVER_S + 2 * victim.taker_interval_s + SLACK_S
    took = seconds_until(
        lambda: orphans <= set().union(*(c.held_leases() for c in survivors)),
        bound,
        f"survivors take {sorted(orphans)}",
    )
    print(f"failover after a crash took {took:.2f}s (bound {bound:.2f}s)")
    assert took >= FAILOVER_S * 0.9  # expiry waited for the failover time, no sooner


@TIMINGS_ON
def test_a_gracefully_stopped_worker_is_replaced_within_one_taker_pass(workers):
    a = workers.start("a")
    b = workers.start("b")
    # b steals one a pass; a steal lost to a's renewal is made on a later pass
    seconds_until(lambda: workers.counts() == {"a": 4, "b": 4}, 10 * a.taker_interval_s, "4/4")
    released = set(b.held_leases())
    b.stop()  # releases: owner removed with a conditional write
    workers.running.remove(b)
    took = seconds_until(
        lambda: released <= set(a.held_leases()),
        a.taker_interval_s + SLACK_S,
        "released leases taken",
    )
    print(f"released leases taken in {took:.2f}s")


def test_a_lease_bumped_by_another_writer_is_lost_within_a_renewal_and_cannot_checkpoint(
    workers, dynamodb
):
    # 3 s failover: the loss must be learnt from the bump, not from a load stall fencing it
    a = workers.start("a", max_leases_for_worker=1, failover_time_s=3.0)
    (key,) = a.held_leases()
    table = LeaseTable(dynamodb, workers.app)
    write_from_outside(table, key, table.renew, a.renewal_interval_s + SLACK_S)  # a counter bump
    bumped = table.get_lease(key)
    seconds_until(lambda: key not in a.held_leases(), a.renewal_interval_s + SLACK_S, "lost")
    assert ("a", key, "another worker took it") in workers.lost
    with pytest.raises(LeaseLostError, match=key):
        a.checkpoint(key, ExtendedSequenceNumber(SEQ))
    assert table.get_lease(key).checkpoint == bumped.checkpoint  # nothing written


def test_a_checkpoint_on_a_lease_taken_between_renewals_writes_nothing(workers, dynamodb):
    # 10 s failover: with 1 s, a stalled (loaded) machine let worker a take the thief's
    # unrenewed lease back before the checkpoint, which then rightly succeeded
    a = workers.start("a", max_leases_for_worker=1, failover_time_s=10.0)
    (key,) = a.held_leases()
    table = LeaseTable(dynamodb, workers.app)
    stolen = write_from_outside(
        table, key, lambda lease: table.take(lease, "thief"), a.renewal_interval_s + SLACK_S
    )
    with pytest.raises(LeaseLostError, match="nothing was written"):
        a.checkpoint(key, ExtendedSequenceNumber(SEQ))
    assert table.get_lease(key) == stolen
    assert ("a", key, "its counter moved: another worker took it") in workers.lost


def lose_first_answer(coordinator, method):
    """The coordinator's first ``method`` call lands on the server, then raises a read
    timeout (its answer lost). Returns the list the landed lease is appended to."""
    real, landed = getattr(coordinator.table, method), []

    def write(*args, **kwargs):
        result = real(*args, **kwargs)
        if landed:
            return result
        landed.append(result)
        raise ReadTimeoutError(endpoint_url="http://lease-table (injected)")

    setattr(coordinator.table, method, write)
    return landed


def test_a_renewal_that_landed_but_got_no_answer_keeps_the_lease(workers, dynamodb, caplog):
    # 3 s failover: renewals a second apart, so the read-back comes well within it
    a = workers.start("a", max_leases_for_worker=1, failover_time_s=3.0)
    (key,) = a.held_leases()
    table = LeaseTable(dynamodb, workers.app)
    landed = lose_first_answer(a, "renew")
    with caplog.at_level(logging.INFO, logger="kinesis_dstream.leases"):
        seconds_until(lambda: landed, 3 * a.renewal_interval_s + SLACK_S, "a lost answer")
        counter = landed[0].lease_counter  # what the table held after the landed renewal
        seconds_until(
            lambda: table.get_lease(key).lease_counter > counter,
            3 * a.renewal_interval_s + SLACK_S,
            "a renewal after the lost answer",
        )
    assert "had landed (read back); still ours" in caplog.text
    assert a.renewal_stats().failures >= 1
    assert workers.lost == []
    assert list(a.held_leases()) == [key]
    assert table.get_lease(key).lease_owner == "a"


def test_a_checkpoint_after_a_write_that_got_no_answer_is_written(workers, dynamodb):
    # 60 s failover: the renewer's first pass comes 20 s after the start, so no renewal of
    # its own moves the counter between the writes this test counts (a loaded machine once
    # let one in with 10 s)
    a = workers.start("a", max_leases_for_worker=1, failover_time_s=60.0)
    (key,) = a.held_leases()
    table = LeaseTable(dynamodb, workers.app)
    landed = lose_first_answer(a, "renew")
    a.renew_leases()  # a pass now (the renewer's own comes every 20 s)
    seconds_until(lambda: landed, a.renewal_interval_s + SLACK_S, "a lost answer")
    written = a.checkpoint(key, ExtendedSequenceNumber(SEQ))
    assert written.lease_counter == landed[0].lease_counter + 1
    assert table.get_lease(key).checkpoint == ExtendedSequenceNumber(SEQ)
    checkpoint_landed = lose_first_answer(a, "checkpoint")
    with pytest.raises(ReadTimeoutError):
        a.checkpoint(key, ExtendedSequenceNumber(SEQ, 1))
    assert checkpoint_landed and workers.lost == []
    written = a.checkpoint(key, ExtendedSequenceNumber(SEQ, 2))  # reads back, then writes
    assert written.lease_counter == checkpoint_landed[0].lease_counter + 1
    assert table.get_lease(key) == written
    assert workers.lost == [] and list(a.held_leases()) == [key]


def test_checkpoints_move_forward_only(workers, dynamodb):
    a = workers.start("a", max_leases_for_worker=1)
    (key,) = a.held_leases()
    a.checkpoint(key, ExtendedSequenceNumber(SEQ, 5))
    table = LeaseTable(dynamodb, workers.app)
    before = table.get_lease(key)
    with pytest.raises(CheckpointError, match=rf"{key}.*before the current checkpoint {SEQ}/5"):
        a.checkpoint(key, ExtendedSequenceNumber(SEQ, 4))
    # No write: every field as before but the counter, which a renewal meanwhile moves.
    after = table.get_lease(key)
    assert dataclasses.replace(after, lease_counter=before.lease_counter) == before
    assert a.checkpoint(key, ExtendedSequenceNumber(SEQ, 5)).checkpoint == before.checkpoint
    assert table.get_lease(key).checkpoint == ExtendedSequenceNumber(SEQ, 5)


def test_a_worker_that_cannot_renew_fences_itself_within_the_failover_time(workers):
    a = workers.start("a", max_leases_for_worker=2)
    held = set(a.held_leases())
    faults = CallErrors(a.table.client, "dynamodb", "UpdateItem", lambda n: "InternalServerError")
    took = seconds_until(lambda: not a.held_leases(), FAILOVER_S + SLACK_S, "self-fencing")
    faults.remove()
    assert {key for _, key, reason in workers.lost if "not renewed" in reason} == held
    print(f"fenced {took:.2f}s after renewals began failing")


def test_the_renewal_pool_leaves_two_of_the_clients_connections_free(workers):
    a = workers.start("a")
    assert a.renewal_threads == 8  # botocore's default max_pool_connections is 10
    assert len([t for t in threading.enumerate() if t.name.startswith("lease-writer-a-")]) == 8


@pytest.fixture(params=["refused", "silent"])
def unreachable(request):
    """An endpoint where DynamoDB is down: nothing listens, or a socket never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    if request.param == "refused":
        listener.close()
    else:
        listener.listen(64)  # connections complete in the kernel; no byte ever comes back
    yield f"http://127.0.0.1:{port}"
    listener.close()


def test_stop_returns_within_the_bound_when_dynamodb_is_unreachable(
    workers, dynamodb_server, unreachable
):
    a = workers.start("a", max_leases_for_worker=4)
    held = set(a.held_leases())
    assert len(held) == 4
    a.table.client = create_client(  # what the receiver's lease client would be
        "dynamodb",
        region_name=dynamodb_server.region_name,
        endpoint_url=unreachable,
        aws_access_key_id=dynamodb_server.access_key_id,
        aws_secret_access_key=dynamodb_server.secret_access_key,
        read_timeout_s=a.timings.client_read_timeout_s,
    )
    started = time.monotonic()
    a.stop(release=True)
    took = time.monotonic() - started
    workers.running.remove(a)
    bound = a.timings.release_timeout_s + a.timings.join_timeout_s
    print(f"stop with DynamoDB unreachable took {took:.2f}s (bound {bound:.2f}s)")
    assert took < bound + SLACK_S
    assert {key for name, key, _ in workers.lost if name == "a"} == held
    seconds_until(
        lambda: (
            not [
                t
                for t in threading.enumerate()
                if t.name.startswith(("lease-", "a-"))
                and (t.name.endswith("-a") or "-a-" in t.name)
            ]
        ),
        a.timings.client_read_timeout_s * 3 + SLACK_S,
        "every lease thread of worker a ends",
    )
