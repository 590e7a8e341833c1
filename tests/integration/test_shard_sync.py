"""Shard sync: leases for every shard at the initial position; parent-before-child order.

Resharding runs on kinesalite (moto's split and merge are wrong); the rest on moto.
"""

import dataclasses
from datetime import datetime, timezone

import pytest

from kinesis_dstream.esn import (
    ESN_AT_TIMESTAMP,
    ESN_LATEST,
    ESN_SHARD_END,
    ESN_TRIM_HORIZON,
    ExtendedSequenceNumber,
)
from kinesis_dstream.leases.coordinator import LeaseCoordinator
from kinesis_dstream.leases.dynamodb import LeaseTable
from kinesis_dstream.leases.lease import Lease
from kinesis_dstream.leases.listeners import LeaseListeners
from kinesis_dstream.leases.memory import InMemoryLeaseRefresher
from kinesis_dstream.leases.shard_sync import ShardSync
from kinesis_dstream.leases.timing import LeaseManagementConfig, LeaseTimings
from kinesis_dstream.retrieval.reader import ReaderConfig, ShardReader, StartPosition
from kinesis_dstream.retrieval.streams import ensure_stream, list_shards, wait_active

from ..support.records import put_records
from ..support.waiting import seconds_until, wait_until

FAST = ReaderConfig(min_call_interval_s=0.0)


def leases_of(table):
    return {lease.lease_key: lease for lease in table.list_leases()}


@pytest.mark.parametrize("position", ["TRIM_HORIZON", "LATEST", "AT_TIMESTAMP"])
def test_an_empty_table_gets_a_lease_per_shard_at_the_initial_position(
    local_aws, kinesis, unique_name, position
):
    ensure_stream(kinesis, unique_name, 4)
    table = LeaseTable(local_aws.client("dynamodb"), unique_name)
    table.create_if_missing()
    sync = ShardSync(kinesis, unique_name, table, position)
    created = sync.sync()
    shards = list_shards(kinesis, unique_name)
    assert sorted(created) == sorted(s["ShardId"] for s in shards)
    leases = leases_of(table)
    for shard in shards:
        lease = leases[shard["ShardId"]]
        assert lease.checkpoint == ExtendedSequenceNumber(position)
        assert lease.lease_owner is None and not lease.parent_shard_ids
        assert lease.hash_key_range == (
            int(shard["HashKeyRange"]["StartingHashKey"]),
            int(shard["HashKeyRange"]["EndingHashKey"]),
        )
    assert sync.sync() == []  # nothing new


def test_a_bad_initial_position_is_refused(local_aws, kinesis):
    table = LeaseTable(local_aws.client("dynamodb"), "x")
    with pytest.raises(ValueError, match="'EARLIEST'"):
        ShardSync(kinesis, "s", table, "EARLIEST")


def read_to_end(kinesis, stream, lease):
    reader = ShardReader(
        kinesis,
        stream,
        lease.lease_key,
        StartPosition.from_checkpoint(lease.checkpoint),
        hash_key_range=lease.hash_key_range,
        config=FAST,
    )
    records = []
    while True:
        batch = reader.read()
        records += batch.records
        if not batch.records:
            return reader, records


@pytest.mark.kinesalite
def test_after_a_split_and_a_merge_children_wait_for_their_parents(
    kinesalite, dynalite, unique_name
):
    kinesis = kinesalite.client("kinesis")
    ensure_stream(kinesis, unique_name, 2)
    table = LeaseTable(dynalite.client("dynamodb"), unique_name)
    table.create_if_missing()
    sync = ShardSync(kinesis, unique_name, table, "TRIM_HORIZON")
    assert sync.sync() == ["shardId-000000000000", "shardId-000000000001"]
    put_records(kinesis, unique_name, 100, data="old{i}", key="key-{i}")

    s0, _ = list_shards(kinesis, unique_name)
    low, high = (int(s0["HashKeyRange"][k]) for k in ("StartingHashKey", "EndingHashKey"))
    kinesis.split_shard(
        StreamName=unique_name,
        ShardToSplit=s0["ShardId"],
        NewStartingHashKey=str((low + high + 1) // 2),
    )
    wait_active(kinesis, unique_name)  # shard 0 -> 2 and 3
    kinesis.merge_shards(
        StreamName=unique_name,
        ShardToMerge="shardId-000000000003",
        AdjacentShardToMerge="shardId-000000000001",
    )
    wait_active(kinesis, unique_name)  # 3 + 1 -> 4
    put_records(kinesis, unique_name, 100, data="new{i}", key="key-{i}")

    assert sorted(sync.sync()) == [f"shardId-00000000000{i}" for i in (2, 3, 4)]
    leases = leases_of(table)
    assert leases["shardId-000000000002"].parent_shard_ids == {"shardId-000000000000"}
    assert leases["shardId-000000000003"].parent_shard_ids == {"shardId-000000000000"}
    assert leases["shardId-000000000004"].parent_shard_ids == {
        "shardId-000000000001",
        "shardId-000000000003",
    }
    assert all(leases[f"shardId-00000000000{i}"].checkpoint == ESN_TRIM_HORIZON for i in (2, 3, 4))

    # The default failover (10 s), not a short one: this test is about the order of
    # parents and children, and at 1 s a renewal that dynalite answered late on a
    # loaded machine fenced a lease mid-test (one loaded run).
    with LeaseCoordinator(table, "solo", shard_sync=sync) as worker:
        assert len(worker.held_leases()) == 5
        assert set(worker.ready_leases()) == {"shardId-000000000000", "shardId-000000000001"}
        delivered = []
        order = [
            ["shardId-000000000000", "shardId-000000000001"],
            ["shardId-000000000002", "shardId-000000000003"],
            ["shardId-000000000004"],
        ]
        for generation in order:
            worker.check_parents()  # re-checks parents of blocked children
            ready = worker.ready_leases()
            assert set(generation) <= set(ready), f"{generation} not ready: {sorted(ready)}"
            for key in generation:
                reader, records = read_to_end(kinesis, unique_name, ready[key])
                delivered += records
                if reader.shard_ended:
                    worker.shard_ended(key, reader.child_shard_ids)
                elif records:
                    last = records[-1]
                    worker.checkpoint(
                        key, ExtendedSequenceNumber(last.sequence_number, last.sub_sequence_number)
                    )
            if generation[0].endswith("0"):
                # shard 4 waits for 3, which is open until its own end is read
                assert "shardId-000000000004" not in worker.ready_leases()
        assert sorted(r.data.decode() for r in delivered) == sorted(
            [f"old{i}" for i in range(100)] + [f"new{i}" for i in range(100)]
        )
        leases = leases_of(table)
        assert leases["shardId-000000000000"].child_shard_ids == {
            "shardId-000000000002",
            "shardId-000000000003",
        }
        assert leases["shardId-000000000001"].child_shard_ids == {"shardId-000000000004"}
        sync.sync()  # finished parents whose children have started are deleted
        remaining = leases_of(table)
        assert "shardId-000000000000" not in remaining
        assert remaining["shardId-000000000004"].checkpoint > ESN_LATEST


@pytest.mark.kinesalite
def test_a_latest_app_on_a_resharded_stream_leases_only_the_open_shards(
    kinesalite, dynalite, unique_name
):
    kinesis = kinesalite.client("kinesis")
    ensure_stream(kinesis, unique_name, 1)
    kinesis.split_shard(
        StreamName=unique_name,
        ShardToSplit="shardId-000000000000",
        NewStartingHashKey=str(2**127),
    )
    wait_active(kinesis, unique_name)
    table = LeaseTable(dynalite.client("dynamodb"), unique_name)
    table.create_if_missing()
    sync = ShardSync(kinesis, unique_name, table, "LATEST")
    assert sorted(sync.sync()) == ["shardId-000000000001", "shardId-000000000002"]
    assert all(lease.checkpoint == ESN_LATEST for lease in table.list_leases())


def test_at_timestamp_checkpoints_need_the_timestamp_to_read():
    with pytest.raises(ValueError, match="timestamp"):
        StartPosition.from_checkpoint(ExtendedSequenceNumber("AT_TIMESTAMP"))
    when = datetime(2026, 1, 1, tzinfo=timezone.utc)
    assert (
        StartPosition.from_checkpoint(ExtendedSequenceNumber("AT_TIMESTAMP"), when).timestamp
        == when
    )
    assert StartPosition.from_checkpoint(ExtendedSequenceNumber("SHARD_END")) is None


@pytest.mark.kinesalite
def test_the_periodic_sync_finds_new_shards_and_the_worker_takes_them(
    kinesalite, dynalite, unique_name
):
    kinesis = kinesalite.client("kinesis")
    ensure_stream(kinesis, unique_name, 1)
    table = LeaseTable(dynalite.client("dynamodb"), unique_name)
    table.create_if_missing()
    sync = ShardSync(kinesis, unique_name, table, "LATEST")
    gained = []
    # Taker passes every 1.05 s, as at a 0.5 s failover, but a 10 s failover: a renewal
    # stalled by load must not fence a lease (it would be gained twice)
    quick = LeaseTimings.from_failover(0.5).taker_interval_s
    with LeaseCoordinator(
        table,
        "w",
        LeaseManagementConfig(
            dataclasses.replace(LeaseTimings.from_failover(10.0), taker_interval_s=quick),
            shard_sync_interval_s=0.5,
        ),
        listeners=LeaseListeners(on_lease_gained=lambda lease: gained.append(lease.lease_key)),
        shard_sync=sync,
    ) as worker:
        assert gained == ["shardId-000000000000"]  # told at once, at the first pass
        kinesis.split_shard(
            StreamName=unique_name,
            ShardToSplit="shardId-000000000000",
            NewStartingHashKey=str(2**127),
        )
        wait_active(kinesis, unique_name)
        # A taken lease is held at once and announced just after: wait for both
        wait_until(
            lambda: len(worker.held_leases()) == 3 and len(gained) == 3,
            3 * worker.taker_interval_s + 2,
            "both children held and announced",
            interval_s=0.05,
            detail=lambda: f"held {sorted(worker.held_leases())}, gained {gained}",
        )
        assert set(worker.held_leases()) == {f"shardId-00000000000{i}" for i in range(3)}
        assert sorted(gained) == [f"shardId-00000000000{i}" for i in range(3)]
        children = leases_of(table)
        assert children["shardId-000000000001"].checkpoint == ESN_TRIM_HORIZON  # not LATEST
        assert "shardId-000000000001" not in worker.ready_leases()  # parent still open


# -- where descendants start: HierarchicalShardSyncer's rule, without servers ---------------


class ShardList:
    """A Kinesis client that answers ListShards from a fixed list (one page)."""

    def __init__(self, shards):
        self.shards = shards

    def list_shards(self, **_):
        return {"Shards": self.shards}


def shard(shard_id, *parents, closed=False):
    entry = {
        "ShardId": shard_id,
        "HashKeyRange": {"StartingHashKey": "0", "EndingHashKey": "99"},
        "SequenceNumberRange": {"StartingSequenceNumber": "1"},
    }
    if closed:
        entry["SequenceNumberRange"]["EndingSequenceNumber"] = "9"
    for name, parent in zip(("ParentShardId", "AdjacentParentShardId"), parents):
        entry[name] = parent
    return entry


SPLIT = [shard("s0", closed=True), shard("s1", "s0"), shard("s2", "s0")]
DESCENDANT_START = {
    "AT_TIMESTAMP": ESN_AT_TIMESTAMP,  # the KCL: AT_TIMESTAMP for an AT_TIMESTAMP app
    "TRIM_HORIZON": ESN_TRIM_HORIZON,
    "LATEST": ESN_TRIM_HORIZON,  # never LATEST: records between parent and child are kept
}


@pytest.mark.parametrize("position", sorted(DESCENDANT_START))
def test_the_periodic_sync_starts_children_of_a_leased_shard_per_the_kcl(position):
    table = InMemoryLeaseRefresher()
    table.create_lease(Lease("s0", checkpoint=ESN_SHARD_END))
    sync = ShardSync(ShardList(SPLIT), "stream", table, position)
    assert sorted(sync.sync()) == ["s1", "s2"]
    for child in ("s1", "s2"):
        lease = table.get_lease(child)
        assert lease.checkpoint == DESCENDANT_START[position]
        assert lease.parent_shard_ids == {"s0"}


@pytest.mark.parametrize("position", sorted(DESCENDANT_START))
def test_children_created_at_shard_end_start_where_the_periodic_sync_starts_them(position):
    table = InMemoryLeaseRefresher()
    sync = ShardSync(ShardList(SPLIT), "stream", table, position)
    assert sorted(sync.create_child_leases(["s1", "s2"])) == ["s1", "s2"]
    assert {lease.checkpoint for lease in table.list_leases()} == {DESCENDANT_START[position]}


def test_an_unrelated_new_shard_starts_at_the_initial_position():
    table = InMemoryLeaseRefresher()
    table.create_lease(Lease("s9"))
    sync = ShardSync(ShardList([shard("s9"), shard("s3")]), "stream", table, "LATEST")
    assert sync.sync() == ["s3"] and table.get_lease("s3").checkpoint == ESN_LATEST


# -- children read at once ------------------------------------------------------------------


def split_and_merge(kinesis, stream):
    """Shard 0 -> 2 and 3; then 3 + 1 -> 4 (kinesalite numbers shards in creation order)."""
    s0 = list_shards(kinesis, stream)[0]
    low, high = (int(s0["HashKeyRange"][k]) for k in ("StartingHashKey", "EndingHashKey"))
    kinesis.split_shard(
        StreamName=stream, ShardToSplit=s0["ShardId"], NewStartingHashKey=str((low + high + 1) // 2)
    )
    wait_active(kinesis, stream)
    kinesis.merge_shards(
        StreamName=stream,
        ShardToMerge="shardId-000000000003",
        AdjacentShardToMerge="shardId-000000000001",
    )
    wait_active(kinesis, stream)


@pytest.mark.kinesalite
def test_children_are_taken_at_once_and_a_merge_child_starts_when_another_worker_ends_its_parent(
    kinesalite, dynalite, unique_name
):
    """No waiting for the next taker pass (every 60 s at this failover) or the old parent
    check (every 10 s): a worker that ends a shard takes its children at once, and a
    merge's child held by one worker starts within the parent checker's half second of
    another worker ending its other parent."""
    kinesis = kinesalite.client("kinesis")
    ensure_stream(kinesis, unique_name, 2)
    table = LeaseTable(dynalite.client("dynamodb"), unique_name)
    table.create_if_missing()
    sync = ShardSync(kinesis, unique_name, table, "TRIM_HORIZON")
    sync.sync()  # shards 0 and 1
    # One lease each, a 30 s failover: regular taker passes a minute apart, renewals and
    # the old parent check every 10 s; nothing but the new rules can act within 5 s.
    workers = {
        name: LeaseCoordinator(
            table,
            name,
            LeaseManagementConfig.from_failover(
                30.0, max_leases_for_worker=None, shard_sync_interval_s=3600
            ),
            shard_sync=sync,
        )
        for name in ("a", "b")
    }
    try:
        workers["a"].start()
        workers["b"].start()  # nothing left to take; the fair share is 1 each
        seconds_until(lambda: len(workers["a"].held_leases()) == 1, 30, "a's lease")
        a = next(w for w in workers.values() if "shardId-000000000000" in w.held_leases())
        b = next(w for w in workers.values() if w is not a)
        assert set(b.held_leases()) == {"shardId-000000000001"}
        split_and_merge(kinesis, unique_name)
        # a ends shard 0: children 2 and 3 created and taken by a at once; 2 is ready,
        # 3 waits for nothing (its parent 0 is finished) and is ready too.
        a.shard_ended("shardId-000000000000", ["shardId-000000000002", "shardId-000000000003"])
        took = seconds_until(
            lambda: {"shardId-000000000002", "shardId-000000000003"} <= set(a.ready_leases()),
            5,
            "shard 0's children taken and ready",
        )
        # a ends 3: child 4 is created and taken; it waits for shard 1, which b reads
        a.shard_ended("shardId-000000000003", ["shardId-000000000004"])
        seconds_until(lambda: "shardId-000000000004" in a.held_leases(), 5, "child 4 taken")
        assert "shardId-000000000004" not in a.ready_leases()
        b.shard_ended("shardId-000000000001", ["shardId-000000000004"])
        started = seconds_until(
            lambda: "shardId-000000000004" in a.ready_leases(), 5, "child 4 ready on a"
        )
        print(f"children taken in {took:.2f} s; merge child ready {started:.2f} s after b")
        leases = leases_of(table)
        assert leases["shardId-000000000004"].lease_owner == a.worker_id
        assert leases["shardId-000000000001"].checkpoint == ESN_SHARD_END
    finally:
        for worker in workers.values():
            worker.stop()
