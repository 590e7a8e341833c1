"""The multilang messages and their JSON-lines transport, apart from any process.

Daemon -> child messages are built by the functions below, with the field names and
types the Java ``amazon-kinesis-client-multilang`` module sends (``JsonFriendlyRecord``:
``data`` base64, ``approximateArrivalTimestamp`` epoch milliseconds as an integer,
``subSequenceNumber`` an integer; ``CheckpointMessage.error`` the simple class name of
the checkpointer's exception). Child -> daemon messages are ``status`` and
``checkpoint``, read by :mod:`.child_messages`; :class:`MessageReader` skips empty lines
(kclpy frames each message in newlines) and logs and counts any other line that is not a
message, as the Java ``GetNextMessageTask`` skips and logs it.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
from itertools import repeat
from operator import attrgetter
from typing import IO, Any, Optional, Union

import msgspec

from .child_messages import (
    MAX_LINE_CHARS,
    CheckpointRequest,
    Skipped,
    Status,
    parse,
)

__all__ = ["CheckpointRequest", "Skipped", "Status", "parse"]  # also the child's messages

log = logging.getLogger(__name__)

INITIALIZE = "initialize"
PROCESS_RECORDS = "processRecords"
LEASE_LOST = "leaseLost"
SHARD_ENDED = "shardEnded"
SHUTDOWN_REQUESTED = "shutdownRequested"
#: KCL 1.x's one message for a shard's end (``reason`` TERMINATE) and a lost lease (ZOMBIE).
SHUTDOWN = "shutdown"
TERMINATE = "TERMINATE"
ZOMBIE = "ZOMBIE"
CHECKPOINT = "checkpoint"
STATUS = "status"


def initialize(shard_id: str, sequence_number: str, sub_sequence_number: int) -> dict:
    return {
        "action": INITIALIZE,
        "shardId": shard_id,
        "sequenceNumber": sequence_number,
        "subSequenceNumber": sub_sequence_number,
    }


class JsonFriendlyRecord(
    msgspec.Struct,
    rename={
        "partition_key": "partitionKey",
        "sequence_number": "sequenceNumber",
        "sub_sequence_number": "subSequenceNumber",
        "approximate_arrival_timestamp": "approximateArrivalTimestamp",
    },
):
    """One record of a ``processRecords`` message, as the Java daemon's class of this name
    writes it; ``data`` bytes, which msgspec writes in base64."""

    action: str
    data: bytes
    partition_key: str
    sequence_number: str
    sub_sequence_number: int
    approximate_arrival_timestamp: Optional[int]


_DATA = attrgetter("data")
_PARTITION_KEY = attrgetter("partition_key")
_SEQUENCE_NUMBER = attrgetter("sequence_number")
_SUB_SEQUENCE_NUMBER = attrgetter("sub_sequence_number")


def process_records(records: list, millis_behind_latest: Optional[int]) -> dict:
    """The batch message: each record a :class:`JsonFriendlyRecord` (data in base64,
    arrival in epoch milliseconds). Built by ``map`` in C and encoded by msgspec in C:
    a third of the time of a dict a record with its own base64 call."""
    entries = map(
        JsonFriendlyRecord,
        repeat("record"),
        map(_DATA, records),
        map(_PARTITION_KEY, records),
        map(_SEQUENCE_NUMBER, records),
        map(_SUB_SEQUENCE_NUMBER, records),
        _arrivals_ms(records),
    )
    return {
        "action": PROCESS_RECORDS,
        "records": list(entries),
        "millisBehindLatest": millis_behind_latest,
    }


def _arrivals_ms(records: list) -> list:
    """Each record's arrival in epoch milliseconds; the user records of one aggregate
    share their arrival object, converted once."""
    last: Any = None
    last_ms: Optional[int] = None
    out: list = []
    append = out.append
    for rec in records:
        arrival = rec.approximate_arrival_timestamp
        if arrival is not last:
            last = arrival
            last_ms = None if arrival is None else round(arrival.timestamp() * 1000)
        append(last_ms)
    return out


def lease_lost() -> dict:
    return {"action": LEASE_LOST}


def shutdown(reason: str) -> dict:
    """KCL 1.x's ``ShutdownMessage``: ``reason`` TERMINATE or ZOMBIE."""
    return {"action": SHUTDOWN, "reason": reason}


def shard_ended() -> dict:
    return {"action": SHARD_ENDED}


def shutdown_requested() -> dict:
    return {"action": SHUTDOWN_REQUESTED}


def checkpoint_reply(
    sequence_number: Optional[str],
    sub_sequence_number: Union[int, str, None],
    error: Optional[str],
) -> dict:
    message: dict = {
        "action": CHECKPOINT,
        "sequenceNumber": sequence_number,
        "subSequenceNumber": sub_sequence_number,
    }
    if error is not None:
        message["error"] = error
    return message


class ChildGone(Exception):
    """The child's stdout ended or its stdin closed: it exited or closed its pipes."""


class ProtocolError(Exception):
    """The child sent something the protocol does not allow here."""


#: JSON in C (a batch of 10,000 records: a few milliseconds, not tens); UTF-8 as the Java
#: daemon's Jackson writes it.
_ENCODER = msgspec.json.Encoder()


def encode(message: dict) -> bytes:
    """A daemon -> child message as the JSON the child reads (one line, no newline).

    A string UTF-8 cannot carry (a lone surrogate a child sent, echoed in a checkpoint
    answer) becomes ``?``, as the Java daemon writes it."""
    try:
        return _ENCODER.encode(message)
    except UnicodeEncodeError:
        text = json.dumps(msgspec.to_builtins(message), ensure_ascii=False, separators=(",", ":"))
        return text.encode("utf-8", "replace")


class MessageWriter:
    """Writes one JSON message a line to a child's stdin (text or binary stream)."""

    def __init__(self, stream: IO, shard_id: str) -> None:
        self._stream = stream
        self._shard_id = shard_id
        self._lock = threading.Lock()

    def write(self, message: dict) -> None:
        line = encode(message) + b"\n"
        with self._lock:
            try:
                if "b" in getattr(self._stream, "mode", "w"):
                    self._stream.write(line)
                else:
                    self._stream.write(line.decode("utf-8"))
                self._stream.flush()
            except (BrokenPipeError, OSError, ValueError) as exc:
                raise ChildGone(
                    f"cannot write {message['action']} to the child of shard {self._shard_id}: "
                    f"its stdin is closed ({exc})"
                ) from exc

    def close(self) -> None:
        with self._lock:
            try:
                self._stream.close()
            except OSError:
                pass


_EOF = object()


class MessageReader:
    """Messages from a child's stdout, read by one thread into a queue.

    :meth:`next` waits at most ``timeout_s`` (None: raises ``queue.Empty`` never; the
    caller loops with its own bound) and raises :class:`ChildGone` at end of output.
    """

    def __init__(self, stream: IO, shard_id: str) -> None:
        self._stream = stream
        self._shard_id = shard_id
        self._queue: queue.Queue = queue.Queue()
        #: Lines that were not messages (each logged), as the Java daemon skips them.
        self.skipped_lines = 0
        self._thread = threading.Thread(
            target=self._drain, name=f"multilang-stdout-{shard_id}", daemon=True
        )

    def start(self) -> MessageReader:
        self._thread.start()
        return self

    def _drain(self) -> None:
        readline = self._stream.readline
        try:
            while True:
                raw = readline(MAX_LINE_CHARS + 1)
                if not raw:
                    break
                text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
                if len(raw) > MAX_LINE_CHARS and not text.endswith("\n"):
                    self._skip_rest_of_line(readline)  # never held whole: memory stays bounded
                    self._skipped(Skipped(f"over {MAX_LINE_CHARS} characters"), text)
                    continue
                for line in text.split("\r"):  # Java's readLine ends lines at \r too
                    self._handle(line.strip())
        except (OSError, ValueError):  # closed under us at stop
            pass
        finally:
            self._queue.put(_EOF)

    def _handle(self, line: str) -> None:
        if not line:
            return
        try:
            message = parse(line)
        except Exception:  # parse returns Skipped for any line; never end the reader
            log.exception("shard %s: cannot read a line of the child's stdout", self._shard_id)
            message = Skipped("unreadable")
        if isinstance(message, Skipped):
            self._skipped(message, line)
        else:
            self._queue.put(message)

    def _skip_rest_of_line(self, readline: Any) -> None:
        while True:
            rest = readline(MAX_LINE_CHARS)
            if not rest or rest.endswith(b"\n" if isinstance(rest, bytes) else "\n"):
                return

    def _skipped(self, skipped: Skipped, line: str) -> None:
        self.skipped_lines += 1
        log.info(
            "skipping unexpected line on stdout of shard %s (%s): %s",
            self._shard_id,
            skipped.reason,
            line[:500],
        )

    def next(self, timeout_s: float) -> Any:
        """The next message; ``queue.Empty`` after ``timeout_s``; ChildGone at the end."""
        item = self._queue.get(timeout=timeout_s)
        if item is _EOF:
            self._queue.put(_EOF)  # every later call sees the end too
            raise ChildGone(f"the child of shard {self._shard_id} closed its stdout (exited?)")
        return item

    def join(self, timeout_s: float) -> bool:
        self._thread.join(timeout_s)
        return not self._thread.is_alive()
