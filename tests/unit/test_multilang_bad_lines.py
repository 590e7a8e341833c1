"""Malformed lines from a child, read as the Java daemon reads them, in milliseconds.

The child's lines go through the real :class:`MessageReader` (a byte stream, as its pipe)
and :class:`ShardProtocol` with a :class:`ChildCheckpointer` over the in-memory lease
store; the answers are compared with those the real Java daemon gave the same lines
(``tests/support/child_lines.py``, checked in ``tests/interop/test_java_bad_lines.py``).
"""

from __future__ import annotations

import io
import json
import threading

import pytest

from kinesis_dstream.esn import ExtendedSequenceNumber
from kinesis_dstream.multilang import messages
from kinesis_dstream.multilang.checkpointer import ChildCheckpointer
from kinesis_dstream.multilang.messages import (
    CheckpointRequest,
    ChildGone,
    MessageReader,
    Status,
)
from kinesis_dstream.multilang.protocol import ShardProtocol

from ..support.child_lines import BETWEEN, FATAL_TO_JAVA, answers, cases
from . import test_multilang_protocol as protocol_tests
from .test_multilang_protocol import SHARD, rec

#: The protocol tests' lease store (one lease, SHARD) and the coordinator holding it.
store = protocol_tests.store
coordinator = protocol_tests.coordinator

STATUS_LINE = b'{"action": "status", "responseFor": "processRecords"}'


def framed(lines) -> bytes:
    """Lines as kclpy frames its messages: each between newlines."""
    return b"".join(b"\n" + line + b"\n" for line in lines)


def converse(coordinator, lines: list, records: list) -> list:
    """The child's ``lines`` (ending with its status) read while the daemon hands it
    ``records``; returns the daemon's checkpoint answers, as the child decodes them."""
    reader = MessageReader(io.BytesIO(framed(lines)), SHARD).start()
    sent: list = []
    checkpointer = ChildCheckpointer(
        SHARD,
        coordinator.held_leases()[SHARD].checkpoint,
        write=lambda esn: coordinator.checkpoint(SHARD, esn),
        finish=lambda: coordinator.shard_ended(SHARD, []),
    )
    protocol = ShardProtocol(
        SHARD, lambda m: sent.append(json.loads(messages.encode(m))), reader.next, checkpointer
    )
    protocol.process_records(records, 0)
    assert reader.join(2.0)
    return [m for m in sent if m["action"] == "checkpoint"]


# -- the issue's lines: the reader survives each, and the next message arrives -----------


@pytest.mark.parametrize(
    ("line", "read_as"),
    [
        # The Java daemon's Jackson reads "" as no sub-sequence number: a checkpoint at
        # the last record given (checked on the real daemon).
        (b'{"action":"checkpoint","subSequenceNumber":""}', CheckpointRequest(None, None)),
        (b'{"action":"checkpoint","subSequenceNumber":"x"}', None),
        (b'{"action":"checkpoint","subSequenceNumber":[]}', None),
        (b'{"action":"checkpoint","subSequenceNumber":1e400}', None),
        (b'{"action":"checkpoint","subSequenceNumber":NaN}', None),
        (
            b'{"action":"checkpoint","sequenceNumber":"1","subSequenceNumber":'
            + b"[" * 1000
            + b"]" * 1000
            + b"}",
            None,
        ),
        (b"[" * 1000 + b"]" * 1000, None),
        (b'{"a":' * 100_000 + b"1" + b"}" * 100_000, None),
        (b"null", None),
        (b"\xff\xfe\x80", None),
    ],
    ids=[
        "empty",
        "x",
        "array",
        "1e400",
        "NaN",
        "nested value",
        "nested",
        "very nested",
        "null",
        "bytes",
    ],
)
def test_a_malformed_line_is_skipped_and_the_next_message_is_read(line, read_as):
    reader = MessageReader(io.BytesIO(framed([line, STATUS_LINE])), SHARD).start()
    if read_as is not None:
        assert reader.next(2.0) == read_as
    assert reader.next(2.0) == Status("processRecords")
    assert reader.skipped_lines == (read_as is None)
    with pytest.raises(ChildGone):  # only at the real end of the output
        reader.next(2.0)


def test_the_issues_example_reads_on():
    """The issue's command: a checkpoint with an empty subSequenceNumber, then a status."""
    out = io.BytesIO(
        b'{"action":"checkpoint","subSequenceNumber":""}\n'
        b'{"action":"status","responseFor":"processRecords"}\n'
    )
    reader = MessageReader(out, "s").start()
    assert reader.next(2) == CheckpointRequest(None, None)
    assert reader.next(2) == Status("processRecords")


def test_a_line_over_the_bound_is_skipped_unread_and_the_next_is_read():
    from kinesis_dstream.multilang.child_messages import MAX_LINE_CHARS, Skipped, parse

    huge = b'{"action": "checkpoint", "sequenceNumber": "' + b"1" * (3 * MAX_LINE_CHARS) + b'"}'
    reader = MessageReader(io.BytesIO(huge + b"\n" + STATUS_LINE + b"\n"), SHARD).start()
    assert reader.next(2.0) == Status("processRecords")
    assert reader.skipped_lines == 1
    assert parse("x" * (MAX_LINE_CHARS + 1)) == Skipped(f"over {MAX_LINE_CHARS} characters")


def test_a_carriage_return_ends_a_line_as_in_java():
    out = io.BytesIO(b"progress 50%\r" + STATUS_LINE + b"\r\n")
    reader = MessageReader(out, SHARD).start()
    assert reader.next(2.0) == Status("processRecords")
    assert reader.skipped_lines == 1


def test_a_text_stream_reads_the_same(tmp_path):
    reader = MessageReader(io.StringIO("junk\n" + STATUS_LINE.decode() + "\n"), SHARD).start()
    assert reader.next(2.0) == Status("processRecords")
    assert reader.skipped_lines == 1


# -- every case, as the Java daemon answers it --------------------------------------------


def test_every_case_is_answered_as_the_java_daemon_answers_it_but_the_named_ones(
    coordinator, store
):
    records = [rec(i) for i in range(1, 6)]
    lines = []
    for number, (_, line, _, _) in enumerate(cases("5")):
        lines += [
            line,
            json.dumps({"action": "checkpoint", "sequenceNumber": f"SYNC-{number}"}).encode(),
        ]
    answered = converse(coordinator, [*lines, *BETWEEN, *FATAL_TO_JAVA, STATUS_LINE], records)
    got: dict = {}
    replies: list = []
    for reply in answered:
        if str(reply["sequenceNumber"]).startswith("SYNC-"):
            assert reply["error"] == "IllegalArgumentException"  # and nothing written
            name = cases("5")[int(reply["sequenceNumber"][5:])][0]
            got[name] = replies[0] if len(replies) == 1 else replies or None
            replies = []
        else:
            replies.append(
                [reply["sequenceNumber"], reply["subSequenceNumber"], reply.get("error")]
            )
    assert got == answers("5", "ours")
    # The Arabic-Indic digits (the last case) never reached the table.
    assert store.get_lease(SHARD).checkpoint == ExtendedSequenceNumber("5", 0)


def test_ours_differs_from_java_only_where_java_writes_what_kinesis_never_gave():
    java, ours = answers("5", "java"), answers("5", "ours")
    differ = sorted(name for name in java if java[name] != ours[name])
    assert differ == [
        "sequenceNumber Arabic-Indic digits",
        "sequenceNumber LATEST",  # a sentinel as a checkpoint: records would be skipped
        "sequenceNumber fullwidth digits",
        "sequenceNumber leading zero",
        "subSequenceNumber Arabic-Indic 0",
    ]
    for name in differ:  # Java took them; ours answers the checkpoint with its error
        assert java[name][2] is None and ours[name][2] == "IllegalArgumentException"


# -- sequence numbers: one definition, ASCII digits ---------------------------------------


@pytest.mark.parametrize(
    "seq",
    ["\u0661\u0662\u0663", "\uff11\uff12\uff13", "0123", "00", "1" * 130, "\u00b2", " 1", "+1"],
)
def test_a_checkpoint_at_a_non_kinesis_sequence_number_is_refused_and_not_written(
    coordinator, store, seq
):
    records = [rec(123), rec(124)]
    checkpoint = json.dumps({"action": "checkpoint", "sequenceNumber": seq}).encode()
    answered = converse(coordinator, [checkpoint, STATUS_LINE], records)
    assert [r.get("error") for r in answered] == ["IllegalArgumentException"]
    assert store.get_lease(SHARD).checkpoint == ExtendedSequenceNumber("TRIM_HORIZON")


def test_a_lone_surrogate_is_echoed_as_java_writes_it():
    encoded = messages.encode(
        messages.checkpoint_reply("\ud800x", None, "IllegalArgumentException")
    )
    assert json.loads(encoded)["sequenceNumber"] == "?x"


def test_the_reader_thread_outlives_every_line_and_ends_only_at_the_end():
    lines = [line for _, line, _, _ in cases("5")] + list(BETWEEN) + list(FATAL_TO_JAVA)
    read_end, write_end = _pipe()
    reader = MessageReader(read_end, SHARD).start()
    # The child writes from a thread of its own: a pipe blocks a writer nobody reads.
    writer = threading.Thread(
        target=write_end.write, args=(framed([*lines, STATUS_LINE]),), daemon=True
    )
    writer.start()
    try:
        while reader.next(5.0) != Status("processRecords"):
            pass
        assert not reader.join(0.05)  # still reading
        writer.join(10.0)
        write_end.close()
        with pytest.raises(ChildGone):
            reader.next(5.0)
        assert reader.join(2.0)
    finally:
        read_end.close()  # a writer still blocked gets EPIPE
        writer.join(10.0)
    skipped = sum(1 for answer in answers("5", "ours").values() if answer is None)
    assert reader.skipped_lines == skipped + len(BETWEEN) + len(FATAL_TO_JAVA)


def _pipe():
    import os

    r, w = os.pipe()
    return os.fdopen(r, "rb", buffering=0), os.fdopen(w, "wb")
