"""The multilang protocol against a scripted child, and the checkpoint rules, in ms.

The checkpointer writes through a real :class:`LeaseCoordinator` on the in-memory lease
store, so "the table never moves backwards" is asserted on the store itself.
"""

from __future__ import annotations

import base64
import io
import json
import queue
import threading
from datetime import datetime, timezone

import pytest

from kinesis_dstream.esn import ExtendedSequenceNumber
from kinesis_dstream.leases import (
    InMemoryLeaseRefresher,
    Lease,
    LeaseCoordinator,
    LeaseManagementConfig,
)
from kinesis_dstream.multilang import messages
from kinesis_dstream.multilang.checkpointer import ChildCheckpointer
from kinesis_dstream.multilang.messages import (
    ChildGone,
    MessageReader,
    MessageWriter,
    ProtocolError,
)
from kinesis_dstream.multilang.protocol import ChildHung, ShardProtocol
from kinesis_dstream.record import KinesisRecord

SHARD = "shardId-000000000000"
ARRIVAL = datetime(2026, 11, 23, 7, 0, 0, 123000, tzinfo=timezone.utc)


def rec(seq: int, sub: int = 0, data: bytes = b"x") -> KinesisRecord:
    return KinesisRecord(data, f"pk-{seq}-{sub}", str(seq), sub, None, ARRIVAL)


class ScriptedChild:
    """A child as a script: ``steps`` is a list of (expected action, replies). Every
    message the daemon sends must match the next step; its replies go through JSON."""

    def __init__(self, steps: list) -> None:
        self.steps = list(steps)
        self.sent: list = []
        self.replies: queue.Queue = queue.Queue()

    def send(self, message: dict) -> None:
        wire = json.loads(messages.encode(message))
        self.sent.append(wire)
        assert self.steps, f"unexpected message {wire}"
        action, replies = self.steps.pop(0)
        assert wire["action"] == action, (wire, action)
        for reply in replies:
            parsed = messages.parse(json.dumps(reply))
            if reply == "EOF":
                parsed = "EOF"
            self.replies.put(parsed)

    def receive(self, timeout_s: float):
        item = self.replies.get(timeout=timeout_s)
        if item == "EOF":
            raise ChildGone("scripted child exited")
        return item


def status(action: str) -> dict:
    return {"action": "status", "responseFor": action}


def checkpoint(seq=None, sub=None) -> dict:
    return {"action": "checkpoint", "sequenceNumber": seq, "subSequenceNumber": sub}


@pytest.fixture
def store():
    table = InMemoryLeaseRefresher()
    table.create_lease(Lease(SHARD))
    return table


@pytest.fixture
def coordinator(store):
    coord = LeaseCoordinator(store, "worker-a", LeaseManagementConfig.from_failover(10.0))
    coord.start(background=False)
    assert SHARD in coord.held_leases()
    yield coord
    coord.stop(release=True)


def make(child: ScriptedChild, coordinator, **kwargs) -> ShardProtocol:
    initial = coordinator.held_leases()[SHARD].checkpoint
    cp = ChildCheckpointer(
        SHARD,
        initial,
        write=lambda esn: coordinator.checkpoint(SHARD, esn),
        finish=lambda: coordinator.shard_ended(SHARD, []),
    )
    return ShardProtocol(SHARD, child.send, child.receive, cp, **kwargs)


def table_checkpoint(store) -> ExtendedSequenceNumber:
    return store.get_lease(SHARD).checkpoint


def test_messages_have_the_java_daemons_fields():
    data = bytes(range(256))
    msg = json.loads(messages.encode(messages.process_records([rec(42, 3, data)], 17)))
    assert msg == {
        "action": "processRecords",
        "records": [
            {
                "action": "record",
                "data": base64.b64encode(data).decode(),
                "partitionKey": "pk-42-3",
                "sequenceNumber": "42",
                "subSequenceNumber": 3,
                "approximateArrivalTimestamp": 1795417200123,  # epoch ms, an integer
            }
        ],
        "millisBehindLatest": 17,
    }
    assert messages.initialize(SHARD, "TRIM_HORIZON", 0) == {
        "action": "initialize",
        "shardId": SHARD,
        "sequenceNumber": "TRIM_HORIZON",
        "subSequenceNumber": 0,
    }
    assert "error" not in messages.checkpoint_reply("1", 0, None)
    assert messages.checkpoint_reply("1", 0, "ShutdownException")["error"] == "ShutdownException"


def test_reader_skips_blank_and_foreign_lines_and_reports_the_end():
    out = io.BytesIO(
        b'\n{"action": "status", "responseFor": "initialize"}\n'
        b"print() output from user code\n"
        b'\n{"action": "checkpoint", "sequenceNumber": "5", "subSequenceNumber": null}\n'
    )
    reader = MessageReader(out, SHARD).start()
    assert reader.next(1.0) == messages.Status("initialize")
    assert reader.next(1.0) == messages.CheckpointRequest("5", None)
    with pytest.raises(ChildGone):
        reader.next(1.0)
    with pytest.raises(ChildGone):  # and again: the end stays the end
        reader.next(1.0)
    assert reader.join(1.0)


def test_writer_writes_one_json_line_per_message():
    buf = io.BytesIO()
    buf.mode = "wb"  # type: ignore[misc]
    MessageWriter(buf, SHARD).write(messages.lease_lost())
    assert buf.getvalue() == b'{"action":"leaseLost"}\n'


def test_a_batch_then_a_checkpoint_at_the_last_record(coordinator, store):
    child = ScriptedChild(
        [
            ("initialize", [status("initialize")]),
            ("processRecords", [checkpoint()]),
            ("checkpoint", [status("processRecords")]),
        ]
    )
    protocol = make(child, coordinator)
    protocol.initialize("TRIM_HORIZON", 0)
    protocol.process_records([rec(10), rec(11), rec(12, 0)], 0)
    reply = child.sent[-1]
    assert reply == {"action": "checkpoint", "sequenceNumber": None, "subSequenceNumber": None}
    assert table_checkpoint(store) == ExtendedSequenceNumber("12", 0)


def test_checkpoint_at_every_sub_record_then_never_backwards(coordinator, store):
    batch = [rec(10, i) for i in range(4)]
    steps = [("processRecords", [checkpoint("10", 0)])]
    for i in range(1, 4):
        steps.append(("checkpoint", [checkpoint("10", i)]))
    steps.append(("checkpoint", [checkpoint("10", 1)]))  # backwards: refused
    steps.append(("checkpoint", [status("processRecords")]))
    child = ScriptedChild(steps)
    make(child, coordinator).process_records(batch, 0)
    replies = [m for m in child.sent if m["action"] == "checkpoint"]
    assert [r.get("error") for r in replies] == [None, None, None, None, "IllegalArgumentException"]
    assert table_checkpoint(store) == ExtendedSequenceNumber("10", 3)


def test_a_position_never_given_is_refused_and_not_written(coordinator, store):
    child = ScriptedChild(
        [
            ("processRecords", [checkpoint("99")]),  # beyond the last record given
            ("checkpoint", [checkpoint("not-a-number", 0)]),
            ("checkpoint", [checkpoint("11", 0)]),
            ("checkpoint", [status("processRecords")]),
        ]
    )
    make(child, coordinator).process_records([rec(10), rec(11)], 0)
    errors = [m.get("error") for m in child.sent if m["action"] == "checkpoint"]
    assert errors == ["IllegalArgumentException", "IllegalArgumentException", None]
    assert table_checkpoint(store) == ExtendedSequenceNumber("11", 0)


def test_no_checkpointer_during_initialize_and_lease_lost(coordinator, store):
    child = ScriptedChild(
        [
            ("initialize", [checkpoint()]),
            ("checkpoint", [status("initialize")]),
            ("leaseLost", [checkpoint()]),
            ("checkpoint", [status("leaseLost")]),
        ]
    )
    protocol = make(child, coordinator)
    protocol.initialize("TRIM_HORIZON", 0)
    protocol.lease_lost()
    errors = [m.get("error") for m in child.sent if m["action"] == "checkpoint"]
    assert errors == ["InvalidStateException", "InvalidStateException"]
    assert table_checkpoint(store) == ExtendedSequenceNumber("TRIM_HORIZON")


def test_a_lease_taken_by_another_worker_answers_shutdown_exception(coordinator, store):
    lease = store.get_lease(SHARD)
    assert store.take(lease, "worker-b") is not None  # another worker takes it
    child = ScriptedChild(
        [
            ("processRecords", [checkpoint()]),
            ("checkpoint", [checkpoint()]),
            ("checkpoint", [status("processRecords")]),
        ]
    )
    make(child, coordinator).process_records([rec(10)], 0)
    errors = [m.get("error") for m in child.sent if m["action"] == "checkpoint"]
    assert errors == ["ShutdownException", "ShutdownException"]
    assert store.get_lease(SHARD).lease_owner == "worker-b"
    assert table_checkpoint(store) == ExtendedSequenceNumber("TRIM_HORIZON")


def test_shard_end_is_written_only_when_the_child_checkpoints_it(coordinator, store):
    child = ScriptedChild(
        [
            ("processRecords", [status("processRecords")]),
            ("shardEnded", [checkpoint()]),
            ("checkpoint", [status("shardEnded")]),
        ]
    )
    protocol = make(child, coordinator)
    protocol.process_records([rec(10)], 0)
    assert table_checkpoint(store) == ExtendedSequenceNumber("TRIM_HORIZON")
    protocol.shard_ended()
    assert protocol.checkpointer.finished
    assert table_checkpoint(store).is_shard_end


def test_shutdown_requested_may_checkpoint(coordinator, store):
    child = ScriptedChild(
        [
            ("processRecords", [status("processRecords")]),
            ("shutdownRequested", [checkpoint()]),
            ("checkpoint", [status("shutdownRequested")]),
        ]
    )
    protocol = make(child, coordinator)
    protocol.process_records([rec(7), rec(8)], 0)
    protocol.shutdown_requested()
    assert table_checkpoint(store) == ExtendedSequenceNumber("8", 0)


def test_a_status_for_another_action_is_a_protocol_error(coordinator):
    child = ScriptedChild([("processRecords", [status("initialize")])])
    with pytest.raises(ProtocolError, match="initialize"):
        make(child, coordinator).process_records([rec(1)], 0)


def test_a_child_that_exits_mid_batch_is_reported(coordinator):
    child = ScriptedChild([("processRecords", ["EOF"])])
    with pytest.raises(ChildGone):
        make(child, coordinator).process_records([rec(1)], 0)


def test_a_child_that_does_not_answer_hits_the_timeout(coordinator):
    child = ScriptedChild([("processRecords", [])])
    clock = iter(range(0, 1000)).__next__  # one "second" per look at the clock
    with pytest.raises(ChildHung, match="within 3s"):
        make(child, coordinator, timeout_s=3.0, clock=clock).process_records([rec(1)], 0)


def test_without_a_timeout_a_stop_ends_the_wait(coordinator):
    child = ScriptedChild([("processRecords", [])])
    abort = threading.Event()
    protocol = make(child, coordinator, abort=abort)
    threading.Timer(0.3, abort.set).start()
    with pytest.raises(ChildHung, match="daemon stopped"):
        protocol.process_records([rec(1)], 0)


def test_the_command_is_split_at_spaces_like_the_java_daemon():
    from kinesis_dstream.multilang.child import split_command

    assert split_command("python3  app.py --flag x") == ["python3", "app.py", "--flag", "x"]
    assert split_command('python "my app.py"') == ["python", '"my', 'app.py"']  # no quoting


@pytest.mark.parametrize(
    ("error", "name"),
    [
        ("throttled", "ThrottlingException"),
        ("unavailable", "KinesisClientLibDependencyException"),
        ("lost", "ShutdownException"),
    ],
)
def test_store_errors_get_the_names_kclpy_expects(error, name):
    from kinesis_dstream.errors import DependencyError, LeaseLostError, ThrottledError

    raised = {
        "throttled": ThrottledError("slow down", operation="UpdateItem"),
        "unavailable": DependencyError("503", operation="UpdateItem"),
        "lost": LeaseLostError("taken"),
    }[error]
    written = []

    def write(esn):
        written.append(esn)
        raise raised

    cp = ChildCheckpointer(SHARD, ExtendedSequenceNumber("TRIM_HORIZON"), write, lambda: None)
    cp.given(ExtendedSequenceNumber("5"))
    assert cp.checkpoint("5", 0) == name
    assert cp.last == ExtendedSequenceNumber("TRIM_HORIZON")  # not moved
    if error == "lost":  # and every later request is refused without a write
        assert cp.checkpoint(None, None) == "ShutdownException"
        assert len(written) == 1
    else:  # a retry may succeed
        assert cp.checkpoint("5", 0) == name
        assert len(written) == 2
