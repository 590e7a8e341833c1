"""The kcl daemon's read-ahead on moto: bounded by the KCL's properties, dropped on a lease
loss (never handed on), every record in order with checkpoints at the child's records."""

from __future__ import annotations

import logging
import sys

from kinesis_dstream.multilang import load_properties
from kinesis_dstream.retrieval.prefetch import PrefetchState
from kinesis_dstream.retrieval.streams import ensure_stream

from ..support.faults import write_from_outside
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


def test_read_ahead_stops_at_its_bounds_and_is_dropped_on_a_lease_loss(
    aws_env,
    kclpy,
    unique_name,
    tmp_path,
    caplog,
):
    from kinesis_dstream.leases import LeaseTable

    local_aws = aws_env
    kinesis = local_aws.client("kinesis")
    ensure_stream(kinesis, unique_name, 1)
    put_all(kinesis, unique_name, 600, "a")
    props = base_props(
        local_aws,
        unique_name,
        unique_name,
        f"{sys.executable} {PROCESSOR}",
        maxRecords="100",
        maxPendingProcessRecordsInput="2",
        maxRecordsCount="250",
    )
    config = load_properties(str(write_properties(tmp_path / "app.properties", **props)))
    caplog.set_level(logging.INFO, logger="kinesis_dstream.retrieval.prefetch")
    with running(config, child_env(kclpy, tmp_path, "gated")) as run:
        # The child holds its first batch (it waits for the gate before checkpointing).
        first = wait_until(lambda: records_seen(tmp_path), 60, "the first batch")
        shard, pid = first[0]["shard"], first[0]["pid"]
        consumer = run.daemon.consumer(shard)
        assert consumer is not None
        wait_until(
            lambda: consumer.prefetch and consumer.prefetch.state is PrefetchState.FULL,
            30,
            "the read-ahead at its bound",
            interval_s=0.02,
        )
        prefetch = consumer.prefetch
        assert prefetch.queued_batches == 2 and prefetch.queued_records == 200
        table = LeaseTable(local_aws.client("dynamodb"), unique_name)
        write_from_outside(table, shard, lambda lease: table.take(lease, "thief"), 30)
        wait_until(
            lambda: shard not in run.daemon.coordinator.held_leases(), 30, "the loss noticed"
        )
        (tmp_path / "go").touch()
        wait_until(
            lambda: [e for e in events(tmp_path) if e["event"] == "lease_lost"],
            30,
            "leaseLost",
        )
        wait_until(lambda: prefetch.state is PrefetchState.STOPPED, 30, "the read-ahead closed")
        assert run.stop() == 0
    mine = [e for e in events(tmp_path) if e["pid"] == pid]
    given = [e["pk"] for e in mine if e["event"] == "record"]
    assert given == [f"a-pk-{i}" for i in range(100)]  # the first batch, nothing read ahead
    assert [e["event"] for e in mine][-2:] == ["checkpoint_error", "lease_lost"]
    assert prefetch.records_dropped == 200
    assert "200 records read ahead and not handed on are dropped (lease lost)" in caplog.text


def test_every_record_once_in_order_with_a_record_bound_below_max_records(
    aws_env,
    kclpy,
    unique_name,
    tmp_path,
):
    local_aws = aws_env
    kinesis = local_aws.client("kinesis")
    ensure_stream(kinesis, unique_name, 2)
    sent = put_all(kinesis, unique_name, 1500, "r")
    props = base_props(
        local_aws,
        unique_name,
        unique_name,
        f"{sys.executable} {PROCESSOR}",
        maxRecords="100",
        maxPendingProcessRecordsInput="3",
        maxRecordsCount="150",  # a read asks only for the room left: pages of 50 too
    )
    config = load_properties(str(write_properties(tmp_path / "app.properties", **props)))
    with running(config, child_env(kclpy, tmp_path, "every")) as run:
        wait_until(lambda: len(records_seen(tmp_path)) >= len(sent), 90, "every record")
        assert run.stop() == 0
    seen = records_seen(tmp_path)
    assert sorted(r["pk"] for r in seen) == sorted(sent)  # each once
    table = leases(local_aws, unique_name)
    for shard in {shard for shard, _, _ in sent.values()}:
        got = [int(r["seq"]) for r in seen if r["shard"] == shard]
        assert got == sorted(int(s) for sh, s, _ in sent.values() if sh == shard)
        assert int(table[shard].checkpoint.sequence_number) == got[-1]
    assert not [e for e in events(tmp_path) if e["event"] == "checkpoint_error"]
