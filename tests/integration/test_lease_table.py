"""The lease table on moto's server and on dynalite: KCL format, every write a CAS.

The in-memory store runs the conformance test beside them: same conditions, same results.
"""

from dataclasses import replace

import pytest

from kinesis_dstream import ThrottledError
from kinesis_dstream.errors import LeaseTableError, StreamNotFoundError
from kinesis_dstream.esn import ESN_SHARD_END, ESN_TRIM_HORIZON, ExtendedSequenceNumber
from kinesis_dstream.leases.dynamodb import LeaseTable
from kinesis_dstream.leases.lease import Lease
from kinesis_dstream.leases.memory import InMemoryLeaseRefresher
from kinesis_dstream.leases.refresher import LeaseRefresher

from ..support.faults import AnswerLost, CallErrors

SEQ = "49590338271490256608559692538361571095921575989136588898"


@pytest.fixture
def table(dynamodb, unique_name):
    table = LeaseTable(dynamodb, unique_name)
    assert table.create_if_missing()
    return table


def raw_item(table, key):
    return table.client.get_item(
        TableName=table.table_name, Key={"leaseKey": {"S": key}}, ConsistentRead=True
    )["Item"]


def test_the_table_is_created_on_demand_once_with_the_kcl_key(table):
    described = table.client.describe_table(TableName=table.table_name)["Table"]
    assert described["TableStatus"] == "ACTIVE"
    assert described["KeySchema"] == [{"AttributeName": "leaseKey", "KeyType": "HASH"}]
    assert described["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    assert not table.create_if_missing()  # already there


def test_a_table_with_another_key_schema_is_a_clear_error(dynamodb, unique_name):
    dynamodb.create_table(
        TableName=unique_name,
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        BillingMode="PAY_PER_REQUEST",
    )
    with pytest.raises(LeaseTableError, match=rf"{unique_name}.*not a lease table.*'id'"):
        LeaseTable(dynamodb, unique_name).create_if_missing()


def test_create_is_conditional_and_the_item_has_the_kcl_attributes(table):
    lease = Lease(
        "shardId-000000000002",
        parent_shard_ids=frozenset({"shardId-000000000000"}),
        starting_hash_key="0",
        ending_hash_key="170141183460469231731687303715884105727",
    )
    assert table.create_lease(lease)
    assert not table.create_lease(lease)  # attribute_not_exists: the second loses
    item = raw_item(table, lease.lease_key)
    assert item == {
        "leaseKey": {"S": "shardId-000000000002"},
        "leaseCounter": {"N": "0"},
        "ownerSwitchesSinceCheckpoint": {"N": "0"},
        "checkpoint": {"S": "TRIM_HORIZON"},
        "checkpointSubSequenceNumber": {"N": "0"},
        "parentShardId": {"SS": ["shardId-000000000000"]},
        "startingHashKey": {"S": "0"},
        "endingHashKey": {"S": "170141183460469231731687303715884105727"},
    }
    assert table.get_lease(lease.lease_key) == lease


def test_take_renew_checkpoint_evict_each_compare_and_swap_the_counter(table):
    assert table.create_lease(Lease("s0"))
    lease = table.get_lease("s0")
    taken = table.take(lease, "worker-a")
    assert (taken.lease_owner, taken.lease_counter, taken.owner_switches_since_checkpoint) == (
        "worker-a",
        1,
        1,
    )
    assert table.take(lease, "worker-b") is None  # stale counter: nothing written
    assert table.get_lease("s0") == taken
    renewed = table.renew(taken)
    assert renewed.lease_counter == 2
    assert table.renew(taken) is None
    stolen = table.take(renewed, "worker-b")
    assert stolen.owner_switches_since_checkpoint == 2
    assert table.renew(renewed) is None  # a's view is stale: a has lost it
    done = table.checkpoint(stolen, ExtendedSequenceNumber(SEQ, 7))
    assert (done.checkpoint, done.owner_switches_since_checkpoint) == (
        ExtendedSequenceNumber(SEQ, 7),
        0,
    )
    assert table.get_lease("s0") == done
    released = table.evict(done)
    assert released.lease_owner is None and "leaseOwner" not in raw_item(table, "s0")
    assert table.delete(done) is False  # counter moved since `done`
    assert table.delete(released) is True
    assert table.get_lease("s0") is None
    assert table.writes == 11  # every conditional write counts, lost or won


def test_shard_end_checkpoint_records_the_children(table):
    table.create_lease(Lease("s0"))
    lease = table.take(table.get_lease("s0"), "a")
    ended = table.checkpoint(lease, ESN_SHARD_END, frozenset({"s1", "s2"}))
    assert table.get_lease("s0") == ended
    assert ended.is_finished and ended.child_shard_ids == {"s1", "s2"}
    assert sorted(raw_item(table, "s0")["childShardIds"]["SS"]) == ["s1", "s2"]


def test_items_written_by_the_jvm_kcl_are_read_and_their_extras_kept(table):
    client = table.client
    jvm_items = [
        {
            "leaseKey": {"S": "shardId-000000000000"},
            "leaseOwner": {"S": "ip-10-0-0-1.ec2.internal:5c1d0f4e-2a0b-4a5c-9c1e-1a2b3c4d5e6f"},
            "leaseCounter": {"N": "4211"},
            "ownerSwitchesSinceCheckpoint": {"N": "0"},
            "checkpoint": {"S": "SHARD_END"},
            "checkpointSubSequenceNumber": {"N": "0"},
            "childShardIds": {"SS": ["shardId-000000000002", "shardId-000000000003"]},
            "startingHashKey": {"S": "0"},
            "endingHashKey": {"S": "340282366920938463463374607431768211455"},
        },
        {
            "leaseKey": {"S": "shardId-000000000002"},
            "leaseOwner": {"S": "ip-10-0-0-2.ec2.internal:0f9e8d7c-6b5a-4938-8271-605f4e3d2c1b"},
            "leaseCounter": {"N": "87"},
            "ownerSwitchesSinceCheckpoint": {"N": "1"},
            "checkpoint": {"S": SEQ},
            "checkpointSubSequenceNumber": {"N": "3"},
            "parentShardId": {"SS": ["shardId-000000000000"]},
            "checkpointOwner": {"S": "ip-10-0-0-2.ec2.internal:0f9e8d7c"},
            "throughputKBps": {"N": "12.5"},
            "pendingCheckpoint": {"S": "49590338271490256608559692538361571095921575989136599999"},
            "pendingCheckpointSubSequenceNumber": {"N": "0"},
        },
        {
            "leaseKey": {"S": "worker-metrics-ip-10-0-0-1"},
            "entityType": {"S": "WORKER_METRIC_STATS"},
            "cpu": {"N": "0.42"},
        },
    ]
    for item in jvm_items:
        client.put_item(TableName=table.table_name, Item=item)
    leases = {lease.lease_key: lease for lease in table.list_leases()}
    assert sorted(leases) == ["shardId-000000000000", "shardId-000000000002"]
    parent, child = leases["shardId-000000000000"], leases["shardId-000000000002"]
    assert parent.is_finished and parent.child_shard_ids == {
        "shardId-000000000002",
        "shardId-000000000003",
    }
    assert child.checkpoint == ExtendedSequenceNumber(SEQ, 3)
    assert child.parent_shard_ids == {"shardId-000000000000"}
    assert child.extra["throughputKBps"] == {"N": "12.5"}
    assert child.checkpoint_owner == "ip-10-0-0-2.ec2.internal:0f9e8d7c"  # KCL 3.x handoff
    # our writes touch only our attributes; a take ends a KCL 3.x handoff left behind
    taken = table.take(child, "python-worker")
    assert taken is not None and taken.checkpoint_owner is None
    table.checkpoint(taken, ExtendedSequenceNumber(SEQ, 4))
    after = raw_item(table, "shardId-000000000002")
    assert "checkpointOwner" not in after
    for name in ("throughputKBps", "pendingCheckpoint", "parentShardId"):
        assert after[name] == jvm_items[1][name]
    assert after["checkpointSubSequenceNumber"] == {"N": "4"}
    assert raw_item(table, "worker-metrics-ip-10-0-0-1") == jvm_items[2]


def test_an_unreadable_checkpoint_names_the_value(table, caplog):
    # one such item is left alone by a listing (one bad item never stops the table's
    # workers: the test below), named with its value; a read of that lease alone fails
    table.client.put_item(
        TableName=table.table_name,
        Item={"leaseKey": {"S": "s9"}, "leaseCounter": {"N": "1"}, "checkpoint": {"S": "??"}},
    )
    caplog.set_level("WARNING", logger="kinesis_dstream.leases.lease")
    assert table.list_leases() == []
    (warned,) = [r.getMessage() for r in caplog.records]
    assert "lease s9 cannot be read" in warned and "'??'" in warned
    with pytest.raises(LeaseTableError, match=r"lease s9 cannot be read .*'\?\?'"):
        table.get_lease("s9")


def test_a_new_lease_defaults_to_trim_horizon():
    assert Lease("s").checkpoint == ESN_TRIM_HORIZON


def test_throttling_and_5xx_are_retried_with_backoff(table):
    table.create_lease(Lease("s0"))
    sleeps = []
    patient = LeaseTable(table.client, table.table_name, sleep=sleeps.append)
    codes = ["ProvisionedThroughputExceededException", "ThrottlingException", "InternalServerError"]
    faults = CallErrors(
        table.client, "dynamodb", "UpdateItem", lambda n: codes[n] if n < len(codes) else None
    )
    taken = patient.take(patient.get_lease("s0"), "a")
    faults.remove()
    assert taken is not None and table.get_lease("s0") == taken
    assert faults.calls == 4 and len(sleeps) == 3


def test_throttling_past_the_budget_names_the_table_and_lease(table):
    table.create_lease(Lease("s0"))
    patient = LeaseTable(table.client, table.table_name, sleep=lambda s: None)
    faults = CallErrors(
        table.client, "dynamodb", "UpdateItem", lambda n: "ProvisionedThroughputExceededException"
    )
    with pytest.raises(
        ThrottledError, match=rf"UpdateItem on lease table '{table.table_name}'.*s0"
    ):
        patient.take(patient.get_lease("s0"), "a")
    faults.remove()


# -- one protocol, three stores: the in-memory store must behave exactly like DynamoDB --


@pytest.fixture(params=["memory", "moto", "dynalite"])
def store(request, unique_name):
    if request.param == "memory":
        return InMemoryLeaseRefresher(unique_name)
    server = request.getfixturevalue("local_aws" if request.param == "moto" else "dynalite")
    table = LeaseTable(server.client("dynamodb"), unique_name)
    table.create_if_missing()
    return table


def test_every_store_has_the_same_conditional_semantics(store):
    assert isinstance(store, LeaseRefresher)
    assert store.create_lease(Lease("s1")) and store.create_lease(Lease("s0"))
    assert not store.create_lease(Lease("s0", lease_counter=7))  # the key exists
    assert [lease.lease_key for lease in store.list_leases()] == ["s0", "s1"]
    fresh = store.get_lease("s0")
    assert fresh == Lease("s0") and store.get_lease("nope") is None
    taken = store.take(fresh, "a")
    assert (taken.lease_owner, taken.lease_counter, taken.owner_switches_since_checkpoint) == (
        "a",
        1,
        1,
    )
    assert store.take(fresh, "b") is None  # stale counter
    renewed = store.renew(taken)
    assert renewed.lease_counter == 2 and store.renew(taken) is None
    impostor = replace(renewed, lease_owner="b")  # right counter, wrong owner
    assert store.renew(impostor) is None
    assert store.evict(impostor) is None
    assert store.checkpoint(impostor, ExtendedSequenceNumber(SEQ)) is None
    stolen = store.take(renewed, "b")
    assert (stolen.lease_owner, stolen.owner_switches_since_checkpoint) == ("b", 2)
    done = store.checkpoint(stolen, ESN_SHARD_END, frozenset({"s2", "s3"}))
    assert (done.checkpoint, done.child_shard_ids, done.owner_switches_since_checkpoint) == (
        ESN_SHARD_END,
        {"s2", "s3"},
        0,
    )
    released = store.evict(done)
    assert released.lease_owner is None and released.lease_counter == 5
    assert store.get_lease("s0") == released
    unowned_renewal = store.renew(released)  # no owner to condition on: counter only
    assert unowned_renewal.lease_counter == 6
    assert store.reset_checkpoint(released, ESN_TRIM_HORIZON) is None
    reset = store.reset_checkpoint(store.take(unowned_renewal, "c"), ESN_TRIM_HORIZON)
    assert (reset.checkpoint, reset.lease_owner, reset.lease_counter) == (ESN_TRIM_HORIZON, None, 8)
    assert store.get_lease("s0") == reset
    assert store.delete(released) is False and store.delete(reset) is True
    assert store.get_lease("s0") is None
    assert store.renew(reset) is None and store.take(reset, "a") is None  # a missing item
    assert store.writes == 21  # every conditional write counts, won or lost


def test_every_store_names_a_missing_table(dynamodb, unique_name):
    for missing in (
        InMemoryLeaseRefresher(unique_name, exists=False),
        LeaseTable(dynamodb, unique_name),
    ):
        assert not missing.exists()
        with pytest.raises(StreamNotFoundError, match=unique_name):
            missing.list_leases()


# -- a retried write that lost its condition to its own first attempt --------------------


def test_a_renewal_whose_answer_was_lost_and_whose_retry_lost_the_race_is_recovered(table):
    table.create_lease(Lease("s0"))
    patient = LeaseTable(table.client, table.table_name, sleep=lambda s: None)
    taken = patient.take(patient.get_lease("s0"), "a")
    lost = AnswerLost(table.client, "UpdateItem")
    renewed = patient.renew(taken)  # attempt 1 lands, retry fails its condition
    lost.remove()
    assert renewed is not None and renewed.lease_counter == 2
    assert table.get_lease("s0").lease_counter == 2  # applied once


def test_a_retried_write_that_really_lost_the_race_is_lost(table):
    table.create_lease(Lease("s0"))
    patient = LeaseTable(table.client, table.table_name, sleep=lambda s: None)
    taken = patient.take(patient.get_lease("s0"), "a")
    thief = table.take(taken, "thief")  # moves the counter first
    faults = CallErrors(
        table.client, "dynamodb", "UpdateItem", lambda n: "InternalServerError" if n == 0 else None
    )
    assert patient.renew(taken) is None  # retried, read back: the thief holds it
    faults.remove()
    assert table.get_lease("s0") == thief


def test_a_take_whose_answer_was_lost_is_recovered(table):
    table.create_lease(Lease("s0"))
    patient = LeaseTable(table.client, table.table_name, sleep=lambda s: None)
    lost = AnswerLost(table.client, "UpdateItem")
    taken = patient.take(patient.get_lease("s0"), "a")
    lost.remove()
    assert taken is not None and table.get_lease("s0") == taken


def test_the_concurrency_is_the_clients_connection_pool(local_aws, unique_name):
    assert LeaseTable(local_aws.client("dynamodb"), unique_name).max_concurrency == 10
    wide = local_aws.client("dynamodb", max_pool_connections=32)
    assert LeaseTable(wide, unique_name).max_concurrency == 32
    assert InMemoryLeaseRefresher().max_concurrency is None


# -- a KCL 3.x graceful handoff, as the old owner -------------------------------------------


def test_a_kcl3_graceful_handoff_as_the_old_owner(table):
    """The leader's ``initiateGracefulLeaseHandoff`` (leaseOwner = b, checkpointOwner = a,
    counter unchanged), then our part: renew and checkpoint guarded by checkpointOwner,
    and the transfer (``assignLease``: checkpointOwner removed, counter + 1)."""
    table.create_lease(Lease("s0"))
    mine = table.take(table.get_lease("s0"), "a")
    table.client.update_item(
        TableName=table.table_name,
        Key={"leaseKey": {"S": "s0"}},
        UpdateExpression="SET leaseOwner = :b, checkpointOwner = :a",
        ConditionExpression="leaseOwner = :a AND attribute_not_exists(checkpointOwner)",
        ExpressionAttributeValues={":a": {"S": "a"}, ":b": {"S": "b"}},
    )
    assert table.renew(mine) is None  # the owner moved: our renewal fails
    handing = table.get_lease("s0")
    assert (handing.lease_owner, handing.checkpoint_owner) == ("b", "a")
    assert handing.lease_counter == mine.lease_counter
    renewed = table.renew(handing, throughput_kbps=12.5)  # guarded by checkpointOwner
    assert renewed is not None and float(raw_item(table, "s0")["throughputKBps"]["N"]) == 12.5
    done = table.checkpoint(renewed, ExtendedSequenceNumber(SEQ, 2))
    assert table.get_lease("s0").checkpoint == ExtendedSequenceNumber(SEQ, 2)
    assert table.transfer(replace(done, checkpoint_owner="z")) is None  # not ours to give
    moved = table.transfer(done)
    item = raw_item(table, "s0")
    assert item["leaseOwner"] == {"S": "b"} and "checkpointOwner" not in item
    assert moved.lease_counter == done.lease_counter + 1 == int(item["leaseCounter"]["N"])
    assert table.renew(done) is None and table.checkpoint(done, ESN_SHARD_END) is None
    # A handoff left behind (its old owner died) ends with the next take or release.
    table.client.update_item(
        TableName=table.table_name,
        Key={"leaseKey": {"S": "s0"}},
        UpdateExpression="SET checkpointOwner = :a",
        ExpressionAttributeValues={":a": {"S": "a"}},
    )
    left = table.get_lease("s0")
    assert (left.lease_owner, left.checkpoint_owner) == ("b", "a")
    released = table.evict(replace(left, checkpoint_owner=None))  # as its owner b
    assert released is not None and "checkpointOwner" not in raw_item(table, "s0")


def test_an_item_this_library_cannot_read_is_left_alone_and_the_others_are_listed(
    table, caplog
):
    # The Java KCL daemon writes a child's checkpoint as the child gave it: Arabic-Indic
    # digits (seen in its table) are no sequence number. One such item must not stop the
    # table's workers: it is skipped with one warning a key, the other leases listed.
    table.create_lease(Lease("shardId-000000000000"))
    table.create_lease(Lease("shardId-000000000001"))
    table.client.update_item(
        TableName=table.table_name,
        Key={"leaseKey": {"S": "shardId-000000000001"}},
        UpdateExpression="SET checkpoint = :odd",
        ExpressionAttributeValues={":odd": {"S": "\u0665"}},
    )
    caplog.set_level("WARNING", logger="kinesis_dstream.leases.lease")
    for _ in range(3):
        assert [lease.lease_key for lease in table.list_leases()] == ["shardId-000000000000"]
    warned = [r.getMessage() for r in caplog.records]
    assert len(warned) == 1
    lease = "lease shardId-000000000001 cannot be read"
    assert warned[0].startswith(f"table {table.table_name}: {lease}")
    with pytest.raises(LeaseTableError, match="lease shardId-000000000001 cannot be read"):
        table.get_lease("shardId-000000000001")
