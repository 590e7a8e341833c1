"""A small in-memory Kinesis for benchmarks only: the read calls, fast, in its own process.

    python -m benchmarks.kinesis_server [PORT]

moto's server spends ~2 ms of CPU a call and closes every connection; on a 2-core machine
the library's benchmarks then measure the test server as much as the library. This one
answers Kinesis' JSON protocol (``application/x-amz-json-1.1``, the ``X-Amz-Target``
header) over HTTP/1.1 with kept-alive connections, for the calls the readers and the
producer make: ``CreateStream``, ``DescribeStream`` and ``DescribeStreamSummary``,
``ListShards`` (pages of ``MaxResults`` with ``NextToken``; a ``ShardFilter`` is taken and
changes nothing, as every shard is open from the stream's creation), ``GetShardIterator``,
``GetRecords``, ``PutRecord`` and ``PutRecords``. ``MillisBehindLatest`` is, as Kinesis
defines it, how far behind the current time a page leaves its reader: 0 at the tip, else
the age of the oldest record not yet read (at least 1 ms), so a backlog's pages report its
age, as on Kinesis (the source plans the ranges of shards behind and those near their tip
differently; createStream only tells 0 from the rest). It checks no signature and models no
limits (no throttling, no iterator expiry, no resharding): the test suite keeps testing
against moto and kinesalite, which are faithful; this server is for figures only. Every
benchmark that uses it reports its CPU apart from the client's.

``GET /calls`` answers the count of calls served per operation (unknown ones under their
target), so a benchmark reads the GetRecords calls every client made, and sees a call it
does not serve.

It runs like :class:`kinesis_dstream.local.LocalAWS`'s child (:class:`BenchKinesis` starts
it): it prints the ready line with its port and exits when its stdin closes.
"""

from __future__ import annotations

import base64
import hashlib
import json
import sys
import threading
import time
import urllib.request
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Optional

from kinesis_dstream.local import READY_MARKER, LocalAWS

_MAX_HASH_KEY = 2**128 - 1
_CONTENT_TYPE = "application/x-amz-json-1.1"
_TARGET_PREFIX = "Kinesis_20131202."


class ServiceError(Exception):
    """An error answered as Kinesis answers it: HTTP 400 and ``__type``."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class Shard:
    """One open shard's records: (sequence number, arrival, data base64, partition key)."""

    def __init__(self, index: int, count: int) -> None:
        self.shard_id = f"shardId-{index:012d}"
        width = (_MAX_HASH_KEY + 1) // count
        self.start_key = index * width
        self.end_key = _MAX_HASH_KEY if index == count - 1 else (index + 1) * width - 1
        self.records: list = []


class Stream:
    """A stream of fixed shards, evenly split over the hash key space."""

    def __init__(self, name: str, shard_count: int) -> None:
        self.name = name
        self.arn = f"arn:aws:kinesis:us-east-1:123456789012:stream/{name}"
        self.shards = [Shard(i, shard_count) for i in range(shard_count)]
        self.by_id = {shard.shard_id: shard for shard in self.shards}
        self.created = time.time()

    def shard(self, shard_id: str) -> Shard:
        shard = self.by_id.get(shard_id)
        if shard is None:
            raise ServiceError("ResourceNotFoundException", f"Shard {shard_id} not found")
        return shard

    def shards_after(self, shard_id: Optional[str]) -> list:
        """The shards after ``shard_id`` in id order (all of them for None)."""
        return [s for s in self.shards if shard_id is None or s.shard_id > shard_id]

    def shard_for(self, partition_key: str, explicit: Optional[str]) -> Shard:
        key = (
            int(explicit) if explicit else int(hashlib.md5(partition_key.encode()).hexdigest(), 16)
        )
        width = (_MAX_HASH_KEY + 1) // len(self.shards)
        return self.shards[min(key // width, len(self.shards) - 1)]


class Store:
    """Every stream; one lock (the calls are short). ``clock``: wall-clock seconds, the
    records' arrival times and what their age is measured against."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self.streams: dict = {}
        self.calls: Counter = Counter()  # operation (or unknown target) -> calls served
        self.lock = threading.Lock()
        self._sequence = 10**20  # sequence numbers: increasing decimal strings, 21 digits

    def stream(self, body: dict) -> Stream:
        name = body.get("StreamName") or str(body.get("StreamARN", "")).rsplit("/", 1)[-1]
        stream = self.streams.get(name)
        if stream is None:
            raise ServiceError("ResourceNotFoundException", f"Stream {name} not found")
        return stream

    def create_stream(self, body: dict) -> dict:
        name = body["StreamName"]
        if name in self.streams:
            raise ServiceError("ResourceInUseException", f"Stream {name} already exists")
        self.streams[name] = Stream(name, int(body.get("ShardCount") or 1))
        return {}

    def describe_stream_summary(self, body: dict) -> dict:
        stream = self.stream(body)
        return {
            "StreamDescriptionSummary": {
                "StreamName": stream.name,
                "StreamARN": stream.arn,
                "StreamStatus": "ACTIVE",
                "StreamModeDetails": {"StreamMode": "PROVISIONED"},
                "RetentionPeriodHours": 24,
                "StreamCreationTimestamp": stream.created,
                "EnhancedMonitoring": [{"ShardLevelMetrics": []}],
                "EncryptionType": "NONE",
                "OpenShardCount": len(stream.shards),
                "ConsumerCount": 0,
            }
        }

    def describe_stream(self, body: dict) -> dict:
        stream = self.stream(body)
        limit = _bounded(body, "Limit", 100, 10000)
        after = stream.shards_after(body.get("ExclusiveStartShardId"))
        summary = self.describe_stream_summary(body)["StreamDescriptionSummary"]
        for key in ("OpenShardCount", "ConsumerCount"):
            del summary[key]
        return {
            "StreamDescription": {
                **summary,
                "Shards": [_shard_entry(shard) for shard in after[:limit]],
                "HasMoreShards": len(after) > limit,
            }
        }

    def list_shards(self, body: dict) -> dict:
        """A page of ``MaxResults`` shards (default 1,000, as Kinesis) and a ``NextToken``
        while more follow; a token names its stream, so ``StreamName`` is refused beside it
        (as Kinesis does)."""
        token = body.get("NextToken")
        if token is not None:
            if body.get("StreamName") or body.get("StreamARN"):
                raise ServiceError(
                    "InvalidArgumentException", "NextToken and StreamName cannot be combined"
                )
            try:
                name, last = base64.b64decode(token).decode().split("|")
            except (ValueError, UnicodeDecodeError) as exc:
                raise ServiceError("InvalidArgumentException", "Invalid NextToken") from exc
            stream = self.stream({"StreamName": name})
        else:
            stream = self.stream(body)
            last = body.get("ExclusiveStartShardId")
        limit = _bounded(body, "MaxResults", 1000, 10000)
        after = stream.shards_after(last or None)
        page = after[:limit]
        answer: dict = {"Shards": [_shard_entry(shard) for shard in page]}
        if len(after) > limit:
            answer["NextToken"] = base64.b64encode(
                f"{stream.name}|{page[-1].shard_id}".encode()
            ).decode()
        return answer

    def get_shard_iterator(self, body: dict) -> dict:
        stream = self.stream(body)
        shard = stream.shard(body["ShardId"])
        kind = body["ShardIteratorType"]
        records = shard.records
        if kind == "TRIM_HORIZON":
            position = 0
        elif kind == "LATEST":
            position = len(records)
        elif kind in ("AT_SEQUENCE_NUMBER", "AFTER_SEQUENCE_NUMBER"):
            wanted = int(body["StartingSequenceNumber"])
            position = next((i for i, r in enumerate(records) if int(r[0]) >= wanted), len(records))
            if (
                kind == "AFTER_SEQUENCE_NUMBER"
                and position < len(records)
                and int(records[position][0]) == wanted
            ):
                position += 1
        elif kind == "AT_TIMESTAMP":
            stamp = float(body["Timestamp"])
            position = next((i for i, r in enumerate(records) if r[1] >= stamp), len(records))
        else:
            raise ServiceError("InvalidArgumentException", f"ShardIteratorType {kind}")
        return {"ShardIterator": _iterator(stream.name, shard.shard_id, position)}

    def get_records(self, body: dict) -> dict:
        try:
            name, shard_id, position_text = (
                base64.b64decode(body["ShardIterator"]).decode().split("|")
            )
            position = int(position_text)
        except (ValueError, KeyError, UnicodeDecodeError) as exc:
            raise ServiceError("InvalidArgumentException", "Invalid ShardIterator") from exc
        stream = self.stream({"StreamName": name})
        shard = stream.shard(shard_id)
        limit = int(body.get("Limit") or 10000)
        page = shard.records[position : position + limit]
        end = position + len(page)
        return {
            "Records": [
                {
                    "SequenceNumber": sequence,
                    "ApproximateArrivalTimestamp": arrival,
                    "Data": data,
                    "PartitionKey": key,
                }
                for sequence, arrival, data, key in page
            ],
            "NextShardIterator": _iterator(name, shard_id, end),
            "MillisBehindLatest": self._millis_behind(shard, end),
        }

    def _millis_behind(self, shard: Shard, position: int) -> int:
        """0 at the tip, else the age of the record at ``position`` (the oldest unread)."""
        if position >= len(shard.records):
            return 0
        return max(1, round((self._clock() - shard.records[position][1]) * 1000))

    def _put(self, stream: Stream, entry: dict) -> dict:
        shard = stream.shard_for(entry["PartitionKey"], entry.get("ExplicitHashKey"))
        self._sequence += 1
        sequence = str(self._sequence)
        shard.records.append(
            (sequence, round(self._clock(), 3), entry["Data"], entry["PartitionKey"])
        )
        return {"SequenceNumber": sequence, "ShardId": shard.shard_id}

    def put_record(self, body: dict) -> dict:
        return self._put(self.stream(body), body)

    def put_records(self, body: dict) -> dict:
        stream = self.stream(body)
        return {
            "FailedRecordCount": 0,
            "Records": [self._put(stream, entry) for entry in body["Records"]],
        }


def _shard_entry(shard: Shard) -> dict:
    return {
        "ShardId": shard.shard_id,
        "HashKeyRange": {
            "StartingHashKey": str(shard.start_key),
            "EndingHashKey": str(shard.end_key),
        },
        "SequenceNumberRange": {"StartingSequenceNumber": "0"},
    }


def _bounded(body: dict, field: str, default: int, most: int) -> int:
    value = body.get(field)
    if value is None:
        return default
    if not 1 <= int(value) <= most:
        raise ServiceError("InvalidArgumentException", f"{field} must be 1-{most}, got {value}")
    return int(value)


def _iterator(stream_name: str, shard_id: str, position: int) -> str:
    return base64.b64encode(f"{stream_name}|{shard_id}|{position}".encode()).decode()


_OPERATIONS: dict = {
    "CreateStream": Store.create_stream,
    "DescribeStream": Store.describe_stream,
    "DescribeStreamSummary": Store.describe_stream_summary,
    "ListShards": Store.list_shards,
    "GetShardIterator": Store.get_shard_iterator,
    "GetRecords": Store.get_records,
    "PutRecord": Store.put_record,
    "PutRecords": Store.put_records,
}


def make_handler(store: Store) -> type:
    """The request handler class, bound to ``store``."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive: one connection serves many calls
        disable_nagle_algorithm = True  # headers and body go out without a delayed ACK

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            target = self.headers.get("X-Amz-Target", "")
            operation: Optional[Callable[..., dict]] = _OPERATIONS.get(
                target[len(_TARGET_PREFIX) :] if target.startswith(_TARGET_PREFIX) else ""
            )
            status = 200
            try:
                with store.lock:
                    store.calls[target.removeprefix(_TARGET_PREFIX)] += 1
                    if operation is None:
                        raise ServiceError(
                            "UnknownOperationException", f"unknown target {target!r}"
                        )
                    answer: Any = operation(store, json.loads(raw or b"{}"))
            except ServiceError as exc:
                status, answer = 400, {"__type": exc.code, "message": str(exc)}
            self._answer(status, answer)

        def do_GET(self) -> None:
            """``/calls``: the calls served so far, per operation."""
            if self.path != "/calls":
                self._answer(404, {"message": f"no {self.path}"})
                return
            with store.lock:
                calls = dict(store.calls)
            self._answer(200, calls)

        def _answer(self, status: int, answer: Any) -> None:
            payload = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("Content-Type", _CONTENT_TYPE)
            self.send_header("Content-Length", str(len(payload)))
            self.send_header("x-amzn-RequestId", "00000000-0000-0000-0000-000000000000")
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *_: Any) -> None:  # no line per request
            return

    return Handler


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that closes its kept-alive connection (a daemon stopped) is no error."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def serve(port: int = 0) -> None:
    """Serve on 127.0.0.1:``port`` until stdin closes; prints the ready line."""
    server = _Server(("127.0.0.1", port), make_handler(Store()))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="bench-kinesis", daemon=True)
    thread.start()
    print(f"{READY_MARKER} {server.server_address[1]}", flush=True)
    try:
        sys.stdin.read()  # returns when the parent closes our stdin (or exits)
    finally:
        server.shutdown()
        thread.join(timeout=10)
        server.server_close()


class BenchKinesis(LocalAWS):
    """This server in a child process, with :class:`LocalAWS`'s API (``pid`` included)."""

    label = "benchmark Kinesis (in memory)"

    def command(self, port: int) -> list:
        return [sys.executable, "-m", "benchmarks.kinesis_server", str(port)]

    def calls(self) -> dict:
        """Calls served so far, per operation (``GET /calls``)."""
        with urllib.request.urlopen(f"{self.endpoint_url}/calls", timeout=10) as answer:
            return json.loads(answer.read())


if __name__ == "__main__":
    serve(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
