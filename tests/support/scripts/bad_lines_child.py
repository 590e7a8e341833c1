"""A MultiLang child that writes malformed lines between its good ones (no kclpy: it
speaks the protocol itself, so it can write what kclpy never would).

Before every answer it writes :data:`tests.support.child_lines.BETWEEN` (and
:data:`~tests.support.child_lines.FATAL_TO_JAVA` with ``$BAD_LINES_FATAL_BETWEEN`` set). It asks to
checkpoint at the last record of every batch, and with no position at the shard's end
and at a shutdown request. Every event goes as one JSON line to
``$KCLPY_OUT_DIR/<shard>.<pid>.jsonl``: ``initialize``, ``record``, ``checkpoint`` (with
the answer's ``error``), ``lease_lost``, ``shard_ended``, ``shutdown_requested``, and:

- with ``$BAD_LINES_PROBE_SHARD`` naming its shard, in its first batch: one ``probe``
  event per case of :func:`tests.support.child_lines.cases` with the answers it got
  (``replies``), then ``probed``; then it waits (at most 300 s) for the file
  ``$KCLPY_OUT_DIR/table-read`` before its checkpoint (the test reads the lease table);
- with ``$BAD_LINES_FATAL_SHARD`` naming its shard, in its first batch: it waits (at most
  300 s) for ``$KCLPY_OUT_DIR/fatal-go``, writes :data:`FATAL_TO_JAVA` and notes ``fatal``.
"""

import json
import os
import sys
import time

from tests.support.child_lines import BETWEEN, FATAL_TO_JAVA, cases

OUT_DIR = os.environ["KCLPY_OUT_DIR"]
PROBE_SHARD = os.environ.get("BAD_LINES_PROBE_SHARD")
FATAL_SHARD = os.environ.get("BAD_LINES_FATAL_SHARD")
stdin = sys.stdin.buffer
stdout = sys.stdout.buffer
path = None
between = BETWEEN + (FATAL_TO_JAVA if os.environ.get("BAD_LINES_FATAL_BETWEEN") else ())


def note(**event):
    event["t"] = time.time()
    with open(path, "a") as out:
        out.write(json.dumps(event) + "\n")


def write(line: bytes) -> None:
    stdout.write(b"\n" + line + b"\n")
    stdout.flush()


def write_message(**message) -> None:
    write(json.dumps(message).encode())


def read() -> dict:
    while True:
        line = stdin.readline()
        if not line:
            sys.exit(0)
        if line.strip():
            return json.loads(line)


def wait_for(name: str) -> None:
    deadline = time.time() + 300
    while not os.path.exists(os.path.join(OUT_DIR, name)) and time.time() < deadline:
        time.sleep(0.05)


def checkpoint(seq=None, sub=None):
    write_message(action="checkpoint", sequenceNumber=seq, subSequenceNumber=sub)
    reply = read()
    assert reply["action"] == "checkpoint", reply
    note(event="checkpoint", seq=seq, sub=sub, error=reply.get("error"))


def probe(last: str) -> None:
    for number, (name, line, _, _) in enumerate(cases(last)):
        write(line)
        marker = f"SYNC-{number}"
        write_message(action="checkpoint", sequenceNumber=marker)
        replies = []
        while True:
            reply = read()
            if reply.get("sequenceNumber") == marker:
                break
            replies.append(reply)
        note(event="probe", name=name, replies=replies, sync_error=reply.get("error"))
    note(event="probed")


def main():
    global path
    shard = None
    batches = 0
    while True:
        message = read()
        action = message["action"]
        if action == "initialize":
            shard = message["shardId"]
            path = os.path.join(OUT_DIR, f"{shard}.{os.getpid()}.jsonl")
            note(
                event="initialize", seq=message["sequenceNumber"], sub=message["subSequenceNumber"]
            )
        elif action == "processRecords":
            batches += 1
            records = message["records"]
            for record in records:
                note(
                    event="record",
                    seq=record["sequenceNumber"],
                    sub=record["subSequenceNumber"],
                    pk=record["partitionKey"],
                )
            last = records[-1]
            if batches == 1 and shard == PROBE_SHARD:
                probe(last["sequenceNumber"])
                wait_for("table-read")
            if batches == 1 and shard == FATAL_SHARD:
                wait_for("fatal-go")
                for line in FATAL_TO_JAVA:
                    write(line)
                note(event="fatal")
            checkpoint(last["sequenceNumber"], last["subSequenceNumber"])
        elif action == "shardEnded":
            note(event="shard_ended")
            checkpoint()
        elif action == "shutdownRequested":
            note(event="shutdown_requested")
            checkpoint()
        elif action == "leaseLost":
            note(event="lease_lost")
        for line in between:
            write(line)
        write_message(action="status", responseFor=action)


if __name__ == "__main__":
    main()
