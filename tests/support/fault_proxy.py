"""A real HTTP proxy on 127.0.0.1 that injects AWS faults into chosen operations.

Spark's executors build their own boto3 clients, out of reach of botocore event hooks;
pointing their endpoint at this proxy injects faults there too. It forwards every request
to the upstream server (moto's) unless a rule answers it first, by operation (the
``X-Amz-Target`` header, e.g. ``Kinesis_20131202.GetRecords``), with the error the service
models: throttling, an expired iterator, or an unreachable service (connection closed).
It also records the requests of chosen operations (:meth:`FaultProxy.record`), to count
the calls that processes out of a test's reach make.
"""

from __future__ import annotations

import base64
import http.client
import json
import random
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Optional
from urllib.parse import urlparse

THROTTLED = "ProvisionedThroughputExceededException"
EXPIRED = "ExpiredIteratorException"
UNREACHABLE = "unreachable"
#: Answer normally, but only after this many seconds (a slow or hung service).
DELAYED = "delayed:"


def moto_shard(body: bytes) -> str:
    """The shard a request is about: its ShardId, or the one inside a moto iterator."""
    request = json.loads(body or b"{}")
    if "ShardId" in request:
        return request["ShardId"]
    iterator = request.get("ShardIterator")
    if not iterator:
        return ""
    try:
        return base64.b64decode(iterator).decode().split(":")[1]
    except (ValueError, IndexError):
        return ""


class FaultProxy:
    """``rules``: operation -> (error, probability, shard or None). ``start()``/``stop()``;
    thread owned. A rule with a shard applies only to requests about that shard."""

    def __init__(self, upstream: str, seed: int = 1) -> None:
        self.upstream = urlparse(upstream)
        self.rules: dict = {}
        self.injected: dict = {}
        self.forwarded = 0
        #: The JSON bodies of the requests of the operations given to :meth:`record`,
        #: as this proxy saw them: an honest count of a client's calls.
        self.recorded: dict = {}
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                target = self.headers.get("X-Amz-Target", "")
                fault = proxy._fault(target.split(".")[-1], body)
                if fault is not None and fault.startswith(DELAYED):
                    time.sleep(float(fault[len(DELAYED) :]))
                    fault = None
                if fault == UNREACHABLE:
                    self.close_connection = True
                    self.connection.close()
                    return
                if fault is not None:
                    payload = json.dumps({"__type": fault, "message": f"{fault} (injected)"})
                    self._answer(400, payload.encode(), "application/x-amz-json-1.1")
                    return
                status, data, content_type = proxy._forward(self.path, self.headers, body)
                self._answer(status, data, content_type)

            def _answer(self, status: int, data: bytes, content_type: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="fault-proxy")

    @property
    def endpoint_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def set(
        self, operation: str, error: str, probability: float, shard: Optional[str] = None
    ) -> None:
        with self._lock:
            self.rules[operation] = (error, probability, shard)

    def clear(self) -> None:
        with self._lock:
            self.rules.clear()

    def record(self, operation: str) -> None:
        """Keep the body of every request of ``operation`` in ``recorded[operation]``."""
        with self._lock:
            self.recorded.setdefault(operation, [])

    def _fault(self, operation: str, body: bytes):
        with self._lock:
            if operation in self.recorded:
                self.recorded[operation].append(json.loads(body or b"{}"))
            rule = self.rules.get(operation)
            if rule is not None and rule[2] is not None and moto_shard(body) != rule[2]:
                rule = None
            if rule is None or self._rng.random() >= rule[1]:
                self.forwarded += 1
                return None
            self.injected[operation] = self.injected.get(operation, 0) + 1
            return rule[0]

    def _forward(self, path: str, headers, body: bytes) -> tuple:
        connection = http.client.HTTPConnection(
            self.upstream.hostname, self.upstream.port, timeout=30
        )
        try:
            forwarded = {k: v for k, v in headers.items() if k.lower() != "host"}
            connection.request("POST", path, body=body, headers=forwarded)
            response = connection.getresponse()
            return response.status, response.read(), response.getheader("Content-Type", "")
        finally:
            connection.close()

    def start(self) -> FaultProxy:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)
