"""The MultiLang protocol's reading side under hostile children.

A child's line gives a message or a skipped line (counted, logged), never an exception;
the reader thread reads on after any line and delivers every good message after it; a
checkpoint request gets an answer (None or an error name the KCL has) and the lease
table only ever holds sequence numbers Kinesis could have given, never moving backwards.
Inputs: messages in kclpy's shapes written by ``json.dumps`` (kclpy's writer) and by the
library's own encoder, mutated byte by byte and field by field; random text; deep nesting.
"""

from __future__ import annotations

import io
import json
import time
import tracemalloc

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kinesis_dstream.esn import ExtendedSequenceNumber, is_sequence_number
from kinesis_dstream.leases import (
    InMemoryLeaseRefresher,
    Lease,
    LeaseCoordinator,
    LeaseManagementConfig,
)
from kinesis_dstream.multilang import messages
from kinesis_dstream.multilang.checkpointer import (
    DEPENDENCY,
    ILLEGAL_ARGUMENT,
    INVALID_STATE,
    SHUTDOWN,
    THROTTLING,
    ChildCheckpointer,
)
from kinesis_dstream.multilang.child_messages import (
    DAEMON_ACTIONS,
    MAX_LINE_CHARS,
    CheckpointRequest,
    Skipped,
    Status,
    parse,
)
from kinesis_dstream.multilang.messages import ChildGone, MessageReader

SHARD = "shardId-000000000000"
#: Longest a parse of one line may take on a loaded 2-core machine.
PARSE_BOUND_S = 2.0
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1
#: What a child answers ``status`` for: the daemon's actions.
ACTIONS = sorted(DAEMON_ACTIONS)

sequence_numbers = st.one_of(
    st.integers(0, 10**56).map(str),
    st.sampled_from(["TRIM_HORIZON", "LATEST", "SHARD_END", "AT_TIMESTAMP"]),
)
json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=30),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
#: What kclpy writes (``kcl.py``: ``status`` and ``checkpoint``), as dicts.
kclpy_messages = st.one_of(
    st.builds(lambda a: {"action": "status", "responseFor": a}, st.sampled_from(ACTIONS)),
    st.builds(
        lambda seq, sub: {"action": "checkpoint", "sequenceNumber": seq, "subSequenceNumber": sub},
        st.none() | sequence_numbers,
        st.none() | st.integers(0, 2**63 - 1),
    ),
)


def written(message: dict, by_library: bool) -> bytes:
    """As kclpy writes it (``json.dumps``) or as this library's encoder writes JSON."""
    return messages.encode(message) if by_library else json.dumps(message).encode()


#: JSON tokens that Jackson and Python's json read differently, or not at all.
TOKENS = [
    b"NaN",
    b"Infinity",
    b"-Infinity",
    b"1e400",
    b"-0",
    b"1.5",
    b'""',
    b"[]",
    b"{}",
    b"null",
    b'"\\ud800"',
    b"99999999999999999999999",
]


@st.composite
def mutated_lines(draw) -> bytes:
    """A kclpy message, then mutated: bytes changed, cut, repeated; a field replaced by any
    JSON value, a field added, the value wrapped or nested; or raw JSON tokens spliced."""
    message = dict(draw(kclpy_messages))
    how = draw(st.sampled_from(["bytes", "field", "extra", "nest", "token", "none"]))
    if how == "field":
        field = draw(st.sampled_from(sorted(message)))
        message[field] = draw(json_values)
    elif how == "extra":
        message[draw(st.text(max_size=10))] = draw(json_values)
    elif how == "nest":
        depth = draw(st.integers(1, 3000))
        message[draw(st.sampled_from(sorted(message)))] = "@@nest@@"
        nested = "[" * depth + "1" + "]" * depth
        return json.dumps(message).replace('"@@nest@@"', nested).encode()
    line = written(message, draw(st.booleans()))
    if how == "token":
        token = draw(st.sampled_from(TOKENS))
        at = draw(st.integers(0, len(line)))
        return line[:at] + token + line[at:]
    if how == "bytes":
        data = bytearray(line)
        for _ in range(draw(st.integers(1, 6))):
            op = draw(st.sampled_from(["flip", "delete", "insert", "cut", "repeat"]))
            at = draw(st.integers(0, max(0, len(data) - 1)))
            if op == "flip" and data:
                data[at] = draw(st.integers(0, 255))
            elif op == "delete" and data:
                del data[at]
            elif op == "insert":
                data[at:at] = draw(st.binary(min_size=1, max_size=4))
            elif op == "cut":
                del data[at:]
            else:
                data[at:at] = bytes(data[at : at + draw(st.integers(1, 20))])
        return bytes(data)
    return line


def assert_within_rules(result) -> None:
    assert isinstance(result, (Status, CheckpointRequest, Skipped)), result
    if isinstance(result, Status):
        assert result.response_for is None or type(result.response_for) is str
    elif isinstance(result, CheckpointRequest):
        seq, sub = result.sequence_number, result.sub_sequence_number
        assert seq is None or type(seq) is str
        if isinstance(sub, str):  # only another script's digits are carried as text
            assert sub.lstrip("+-").isdecimal() and not sub.lstrip("+-").isascii()
        else:
            assert sub is None or (type(sub) is int and LONG_MIN <= sub <= LONG_MAX)
    else:
        assert result.reason


def timed_parse(line: str):
    started = time.process_time()  # this process's CPU: a loaded machine is not the parser
    result = parse(line)
    assert time.process_time() - started < PARSE_BOUND_S
    return result


@given(kclpy_messages, st.booleans())
def test_every_message_kclpy_writes_reads_back(message, by_library):
    result = timed_parse(written(message, by_library).decode())
    if message["action"] == "status":
        assert result == Status(message["responseFor"])
    else:
        assert result == CheckpointRequest(message["sequenceNumber"], message["subSequenceNumber"])


@given(mutated_lines())
def test_a_mutated_message_gives_a_message_or_a_skipped_line(line):
    assert_within_rules(timed_parse(line.decode("utf-8", "replace").strip()))


@given(st.text(max_size=300))
def test_any_text_gives_a_message_or_a_skipped_line(text):
    assert_within_rules(timed_parse(text))


@given(st.integers(1, 200_000), st.sampled_from([b"[", b'{"a":', b'{"action":"checkpoint","x":[']))
def test_nesting_of_any_depth_is_a_skipped_line(depth, opener):
    closer = {b"[": b"]", b'{"a":': b"}"}.get(opener, b"]")
    line = opener * depth + b"1" + closer * depth
    assert isinstance(timed_parse(line.decode()[:MAX_LINE_CHARS]), Skipped)


@given(st.lists(st.one_of(mutated_lines(), st.binary(max_size=200)), max_size=12), kclpy_messages)
def test_the_reader_reads_on_after_any_line_and_counts_what_it_skipped(noise, good):
    lines = [*noise, written(good, False)]
    expected = []
    skipped = 0
    for raw in lines:
        for part in raw.decode("utf-8", "replace").split("\n"):
            for piece in part.split("\r"):
                piece = piece.strip()
                if not piece:
                    continue
                result = parse(piece)
                if isinstance(result, Skipped):
                    skipped += 1
                else:
                    expected.append(result)
    reader = MessageReader(io.BytesIO(b"".join(b"\n" + raw + b"\n" for raw in lines)), SHARD)
    reader.start()
    got = []
    with pytest.raises(ChildGone):
        while True:
            got.append(reader.next(5.0))
    assert reader.join(5.0)
    assert got == expected  # every message in order, the good one last among them
    assert got[-1] == timed_parse(written(good, False).decode())
    assert reader.skipped_lines == skipped


class LazyLine(io.RawIOBase):
    """A child's stdout with one line of ``size`` bytes, produced as it is read."""

    def __init__(self, size: int, then: bytes) -> None:
        self.left = size
        self.then = then

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        if self.left > 0:
            n = min(len(buffer), self.left)
            buffer[:n] = b"9" * n
            self.left -= n
            return n
        n = min(len(buffer), len(self.then))
        buffer[:n], self.then = self.then[:n], self.then[n:]
        return n


@given(st.integers(MAX_LINE_CHARS + 1, 40 * MAX_LINE_CHARS))
def test_a_line_of_any_length_is_read_in_bounded_memory(size):
    status = b'\n{"action": "status", "responseFor": "processRecords"}\n'
    reader = MessageReader(io.BufferedReader(LazyLine(size, status)), SHARD)
    tracemalloc.start()
    try:
        reader.start()
        assert reader.next(30.0) == Status("processRecords")
        assert reader.join(30.0)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 * MAX_LINE_CHARS  # a few chunks, not the line (up to 40 MiB here)
    assert reader.skipped_lines == 1


ANSWERS = {None, ILLEGAL_ARGUMENT, INVALID_STATE, SHUTDOWN, THROTTLING, DEPENDENCY}


@given(
    st.lists(mutated_lines() | kclpy_messages.map(lambda m: written(m, True)), max_size=15),
    st.integers(1, 10**40),
)
def test_any_checkpoint_request_is_answered_and_the_table_holds_kinesis_numbers_only(
    lines, base
):
    key = SHARD
    lease_store = InMemoryLeaseRefresher()  # one an example: each starts at TRIM_HORIZON
    lease_store.create_lease(Lease(key))
    coordinator = LeaseCoordinator(
        lease_store, "worker-a", LeaseManagementConfig.from_failover(10.0)
    )
    coordinator.start(background=False)
    try:
        checkpointer = ChildCheckpointer(
            key,
            coordinator.held_leases()[key].checkpoint,
            write=lambda esn: coordinator.checkpoint(key, esn),
            finish=lambda: coordinator.shard_ended(key, []),
        )
        checkpointer.given(ExtendedSequenceNumber(str(base), 3))
        history = []
        for line in lines:
            request = parse(line.decode("utf-8", "replace").strip())
            if not isinstance(request, CheckpointRequest):
                continue
            answer = checkpointer.checkpoint(request.sequence_number, request.sub_sequence_number)
            assert answer in ANSWERS
            reply = messages.checkpoint_reply(
                request.sequence_number, request.sub_sequence_number, answer
            )
            encoded = messages.encode(reply)
            assert json.loads(encoded)["action"] == "checkpoint"  # the answer is writable
            now = lease_store.get_lease(key).checkpoint
            assert now.is_sentinel or is_sequence_number(now.sequence_number)
            history.append(now)
        assert history == sorted(history)  # never backwards
    finally:
        coordinator.stop(release=True)
