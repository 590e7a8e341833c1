"""Our kcl daemon as a follower in a KCL 3.x fleet, against a scripted leader.

The leader and a Java worker write the items as the KCL 3.1.3 does (see
:mod:`tests.support.kcl3_leader`). Ours must: publish fresh ``WorkerMetricStats``; never take or
steal while a leader lives; process what the leader assigns it within 2 x failover;
carry out a graceful handoff (the kclpy child gets ``shutdownRequested`` and checkpoints,
then ``leaseLost``; the transfer follows the checkpoint); and take every lease back by
KCL 2.x rules within 3 x failover once the leader and the last Java worker are gone.
Nothing is lost throughout.
"""

from __future__ import annotations

import sys
import time

from kinesis_dstream.leases.fleet import FleetMode, LeaderLock, LeaderWatch, mode_for
from kinesis_dstream.multilang import load_properties
from kinesis_dstream.retrieval.streams import ensure_stream

from ..support.faults import CallCounter
from ..support.kcl3_leader import ScriptedJavaWorker, ScriptedLeader, create_kcl3_tables
from ..support.waiting import wait_until
from .test_multilang_daemon import (
    PROCESSOR,
    base_props,
    child_env,
    events,
    leases,
    put_all,
    records_seen,
    running,
    write_properties,
)

FAILOVER_S = 4.0
OURS = "py-follower"
JAVA = "java-leader-host"


# -- the rules, with an injected clock ------------------------------------------------------


def test_the_mode_follows_migration_state_and_the_leader():
    assert mode_for(None, False) is FleetMode.KCL2
    assert mode_for("CLIENT_VERSION_2X", True) is FleetMode.KCL2
    assert mode_for("CLIENT_VERSION_UPGRADE_FROM_2X", True) is FleetMode.KCL2_COMPATIBLE
    assert mode_for("CLIENT_VERSION_3X", True) is FleetMode.KCL3
    assert mode_for("CLIENT_VERSION_3X_WITH_ROLLBACK", True) is FleetMode.KCL3
    assert mode_for("CLIENT_VERSION_3X", False) is FleetMode.KCL3_NO_LEADER
    assert not FleetMode.KCL3.takes and FleetMode.KCL3_NO_LEADER.takes
    assert FleetMode.KCL2_COMPATIBLE.publishes_metrics and not FleetMode.KCL2.publishes_metrics


def test_the_leader_lock_expires_as_the_lock_client_judges_it():
    now = [100.0]
    watch = LeaderWatch(clock=lambda: now[0])
    lock = LeaderLock("java-1", "v1", lease_duration_s=120.0, released=False)
    assert watch.alive(lock)  # a lock first seen is held for its lease duration
    now[0] += 119.0
    assert watch.alive(lock)
    now[0] += 2.0
    assert not watch.alive(lock)  # no heartbeat (record version) for 121 s: expired
    assert watch.alive(LeaderLock("java-1", "v2", 120.0, False))  # a heartbeat revives it
    assert not watch.alive(None)  # deleted: the leader left
    assert not watch.alive(LeaderLock("java-1", "v3", 120.0, released=True))
    item = {
        "ownerName": {"S": "w"},
        "leaseDuration": {"S": "6000"},
        "recordVersionNumber": {"S": "r"},
    }
    assert LeaderLock.from_item(item) == LeaderLock("w", "r", 6.0, False)


# -- against moto, with real kclpy children ---------------------------------------------


def test_a_follower_in_a_scripted_kcl3_fleet(
    aws_env, kclpy, unique_name, tmp_path
):
    local_aws = aws_env
    kinesis, dynamodb = local_aws.client("kinesis"), local_aws.client("dynamodb")
    ensure_stream(kinesis, unique_name, 4)
    app = unique_name
    create_kcl3_tables(dynamodb, app, app)
    leader = ScriptedLeader(dynamodb, app, app, JAVA)
    leader.set_client_version("CLIENT_VERSION_3X")
    java = ScriptedJavaWorker(dynamodb, app, app, JAVA)
    props = base_props(
        local_aws,
        unique_name,
        app,
        f"{sys.executable} {PROCESSOR}",
        workerIdentifier=OURS,
        failoverTimeMillis=str(int(FAILOVER_S * 1000)),
    )
    config = load_properties(str(write_properties(tmp_path / "app.properties", **props)))
    out = tmp_path / "out"
    out.mkdir()
    measured: dict = {}
    try:
        leader.start()
        java.start()
        with running(config, child_env(kclpy, out)) as run:
            coordinator = run.daemon.coordinator
            wait_until(lambda: len(leases(local_aws, app)) == 4, 30, "the 4 leases created")
            keys = sorted(leases(local_aws, app))
            wait_until(lambda: leader.metrics_of(OURS), 30, "our WorkerMetricStats")
            stats = leader.metrics_of(OURS)
            assert int(stats["lut"]["N"]) >= time.time() - 60  # fresh: the leader counts us
            assert stats["sts"] == {"M": {}} and stats["opr"] == {"M": {}}  # by throughput
            assert run.daemon.worker_id == OURS
            assert coordinator.membership.fleet.mode is FleetMode.KCL3

            # The leader assigns 3 leases to the Java worker and 1 to us: a 2.x taker
            # would steal one (target 2); a follower does not.
            for key in keys[:3]:
                leader.assign(key, JAVA)
            sent = put_all(kinesis, unique_name, 80, "a")
            assigned_at = time.monotonic()
            leader.assign(keys[3], OURS)
            ours = {pk for pk, (shard, _, _) in sent.items() if shard == keys[3]}
            wait_until(lambda: {r["pk"] for r in records_seen(out)} >= ours, 30, "our shard read")
            measured["assigned lease processed (s)"] = time.monotonic() - assigned_at
            assert measured["assigned lease processed (s)"] <= 2 * FAILOVER_S

            # A graceful handoff of our lease to the Java worker.
            handoff_at = time.monotonic()
            leader.initiate_handoff(keys[3], OURS, JAVA)

            def transferred():
                lease = leases(local_aws, app)[keys[3]]
                return lease.lease_owner == JAVA and lease.checkpoint_owner is None

            wait_until(transferred, 45, "the lease transferred to the Java worker")
            measured["handoff transferred (s)"] = time.monotonic() - handoff_at
            assert measured["handoff transferred (s)"] <= 30 + FAILOVER_S
            shard_events = [e for e in events(out) if e["shard"] == keys[3]]
            kinds = [e["event"] for e in shard_events]
            assert kinds.index("shutdown_requested") < kinds.index("lease_lost")
            last_record = [e for e in shard_events if e["event"] == "record"][-1]
            lease = leases(local_aws, app)[keys[3]]
            assert lease.checkpoint.sequence_number == last_record["seq"]  # before transfer
            counts = coordinator.counts()
            assert (counts["taken"], counts["stolen"]) == (0, 0), counts
            assert (counts["assigned"], counts["handed_off"]) == (1, 1), counts
            assert {k: v.lease_owner for k, v in leases(local_aws, app).items()} == {
                k: JAVA for k in keys
            }

            # The last Java worker and the leader leave: ours takes every lease back. The
            # worker first: a renewal of its own landing after the leader is gone would
            # restart the expiry our fallback waits for.
            java.leave()
            leader.leave()
            gone_at = time.monotonic()
            wait_until(
                lambda: {v.lease_owner for v in leases(local_aws, app).values()} == {OURS},
                60,
                "every lease taken back",
            )
            measured["fallback: all leases ours (s)"] = time.monotonic() - gone_at
            assert measured["fallback: all leases ours (s)"] <= 3 * FAILOVER_S
            more = put_all(kinesis, unique_name, 40, "b")
            wait_until(
                lambda: {r["pk"] for r in records_seen(out)} >= set(sent) | set(more),
                60,
                "every record",
            )
            assert run.stop() == 0
    finally:
        leader.stop()
        java.leave() if java._thread.is_alive() else None
    print("KCL 3.x follower:", measured)
    seen = [r["pk"] for r in records_seen(out)]
    assert set(seen) >= set(sent) | set(more)  # 0 records missing


def test_worker_metrics_go_where_the_kcl_reads_them(local_aws, unique_name):
    """KCL 3.1: ``<app>-WorkerMetricStats`` by ``wid``; upgrading from 2.x too (the
    migration waits for every lease owner's metrics); KCL 3.5 after its table migration
    (``TableMigration3.5`` PENDING/COMPLETE): the lease table, ``entityType``
    WORKER_METRIC_STATS, ``sup``/``slu``, skipped by lease scans."""
    from kinesis_dstream.leases import LeaseTable
    from kinesis_dstream.leases.fleet import FleetWatch
    from kinesis_dstream.leases.lease import Lease

    dynamodb = local_aws.client("dynamodb")
    app = unique_name
    create_kcl3_tables(dynamodb, app, app)
    leases_table = LeaseTable(dynamodb, app)
    leases_table.create_lease(Lease("shardId-000000000000"))
    leader = ScriptedLeader(dynamodb, app, app, JAVA)
    watch = FleetWatch(dynamodb, app, app, OURS)
    assert watch.poll() is FleetMode.KCL2 and not watch.publish_metrics()  # no 3.x state
    leader.set_client_version("CLIENT_VERSION_UPGRADE_FROM_2X")
    assert watch.poll() is FleetMode.KCL2_COMPATIBLE and watch.publish_metrics()
    stats = leader.metrics_of(OURS)
    assert abs(int(stats["lut"]["N"]) - time.time()) < 60 and stats["sup"] == {"N": "1"}
    leader.set_client_version("CLIENT_VERSION_3X")
    leader.heartbeat()
    assert watch.poll() is FleetMode.KCL3
    assert watch.assigned_keys() == []  # the owner index answers
    dynamodb.put_item(
        TableName=f"{app}-CoordinatorState",
        Item={"key": {"S": "TableMigration3.5"}, "tm": {"S": "TABLE_MIGRATION_STATUS_PENDING"}},
    )
    watch.poll()
    assert watch.publish_metrics()
    item = dynamodb.get_item(TableName=app, Key={"leaseKey": {"S": OURS}})["Item"]
    assert item["entityType"] == {"S": "WORKER_METRIC_STATS"} and item["sup"] == {"N": "1"}
    assert "slu" in item and item["sts"] == {"M": {}}
    assert [lease.lease_key for lease in leases_table.list_leases()] == ["shardId-000000000000"]


def test_a_kcl2_fleet_costs_three_reads_a_poll(local_aws, unique_name):
    """The poll runs every renewal interval on every worker: where there is no
    coordinator-state table (a KCL 2.x fleet) it reads it once, then the lease table's
    two 3.5 items, and nothing more."""
    from kinesis_dstream.leases import LeaseTable
    from kinesis_dstream.leases.fleet import FleetWatch

    dynamodb = local_aws.client("dynamodb")
    LeaseTable(dynamodb, unique_name).create_if_missing()
    reads = CallCounter(dynamodb, "dynamodb", "GetItem")
    try:
        watch = FleetWatch(dynamodb, unique_name, unique_name, OURS)
        assert watch.poll() is FleetMode.KCL2
    finally:
        reads.remove()
    tables = [request["TableName"] for request in reads.requests]
    assert tables == [f"{unique_name}-CoordinatorState", unique_name, unique_name]
