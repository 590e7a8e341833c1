"""A pool of kept-alive HTTP/1.1 connections to one endpoint, for small POSTs.

What :mod:`.lean_get_records` sends: one request, written in one ``sendall``, and one
answer read with a handful of ``recv`` calls, without ``http.client``'s per-request header
objects (its ``email`` parser is half of its cost on a small answer). The HTTP of one
exchange (the request's bytes, the answer's framing) is an :class:`Exchange` over a
socket; failures raise botocore's own exceptions, as botocore's HTTP session maps
urllib3's, so callers' retry rules see what they see from a botocore call:

- no connection (refused, unreachable, DNS): ``EndpointConnectionError``;
- connect or read timeouts: ``ConnectTimeoutError``, ``ReadTimeoutError``;
- a connection that breaks during an exchange, or an answer that is not HTTP (or whose
  head is over :data:`MAX_HEAD_BYTES`, or whose whole is over :data:`MAX_ANSWER_BYTES`):
  ``ConnectionClosedError``;
- TLS refused at connect: ``SSLError``.

A kept-alive connection the server closed while it sat in the pool (nothing read, or the
send failed) is replaced and the request sent once more: :meth:`Pool.post` is for requests
that may be sent twice (reads).

The answers are parsed by httptools (llhttp, Node's HTTP parser: :class:`HttptoolsConnection`)
since 2026-11-28, instead of by hand: at the same CPU (on the benchmark server, two runs
at load 5-7 on 2 cores: a shard read 0.206 and 0.195 ms on httptools against 0.223 and
0.185 ms by hand, the exchange alone 0.053 and 0.045 against 0.058 and 0.044 ms; on h11,
pure Python, 0.378 and 0.305 ms, 65-70% of a read more), and the hand-written parser read
a folded header line as a header of its own.
``docs/benchmarks/results/2026-11-28-shard-read.md`` has the figures;
``python -m benchmarks.bench_shard_read --exchanges`` measures the three again (the other
two are kept in ``benchmarks/http_exchanges.py``).
"""

from __future__ import annotations

import socket
import ssl
import threading
from typing import Callable, NamedTuple, Optional

import httptools
from botocore.exceptions import (
    ConnectionClosedError,
    ConnectTimeoutError,
    EndpointConnectionError,
    ReadTimeoutError,
    SSLError,
)

_RECV = 65536
#: An answer's status line and headers (Kinesis sends ~300 bytes); h11's default is 16 KiB.
MAX_HEAD_BYTES = 64 * 1024
#: A whole answer: a GetRecords page is at most 10 MiB of records, ~14 MiB as base64 JSON.
MAX_ANSWER_BYTES = 64 * 1024 * 1024


class Stale(Exception):
    """The server had closed a pooled connection before this exchange began."""


class BadAnswer(ValueError):
    """What the server sent is not an HTTP answer this client takes (or is over a bound)."""


class Request(NamedTuple):
    """One HTTP/1.1 request: ``headers`` are ``(name, value)`` pairs, ``Host`` among them."""

    method: str
    target: str
    headers: tuple
    body: bytes

    def encode(self) -> bytes:
        head = "".join(f"{name}: {value}\r\n" for name, value in self.headers)
        return f"{self.method} {self.target} HTTP/1.1\r\n{head}\r\n".encode("latin-1") + self.body


class Answer:
    """One HTTP answer: status, headers (lower-case names), body."""

    __slots__ = ("body", "headers", "keep_alive", "status")

    def __init__(self, status: int, headers: dict, body: bytes, keep_alive: bool) -> None:
        self.status = status
        self.headers = headers
        self.body = body
        self.keep_alive = keep_alive


def header_dict(pairs: list) -> dict:
    """Lower-case ``str`` names to values (repeated names joined by ", ") from byte pairs."""
    headers: dict = {}
    for name, value in pairs:
        key = name.decode("latin-1").lower()
        text = value.decode("latin-1").strip()
        headers[key] = f"{headers[key]}, {text}" if key in headers else text
    return headers


class Connection:
    """One socket, and the socket calls every exchange makes: a send that tells a
    connection closed while idle (:class:`Stale`), and a bounded receive."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.received = 0  # bytes of the current answer

    def exchange(self, request: Request) -> Answer:
        """Send ``request`` and read its answer (an :class:`Exchange`'s own HTTP)."""
        raise NotImplementedError

    def send(self, data: bytes) -> None:
        self.received = 0
        try:
            self.sock.sendall(data)
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise Stale() from exc

    def recv(self) -> bytes:
        """The next bytes of the answer; ``b""`` at the server's close once some came."""
        try:
            data = self.sock.recv(_RECV)
        except ConnectionResetError as exc:
            if not self.received:
                raise Stale() from exc
            raise
        if not data and not self.received:
            raise Stale()
        self.received += len(data)
        if self.received > MAX_ANSWER_BYTES:
            raise BadAnswer(f"an answer over {MAX_ANSWER_BYTES} bytes")
        return data

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


#: What makes a :class:`Connection` of a socket: the HTTP of one exchange.
Exchange = Callable[[socket.socket], Connection]


class _Receiver:
    """llhttp's callbacks for one answer: its head, its body, whether it ended."""

    def __init__(self) -> None:
        self.parser = httptools.HttpResponseParser(self)
        # RFC 9112 5.2: a client takes a folded header line (obs-fold), which llhttp
        # refuses unless its headers are lenient
        self.parser.set_dangerous_leniencies(lenient_headers=True)
        self.reset()

    def reset(self) -> None:
        self.status = 0
        self.head = False  # the final answer's head is in (interim answers are skipped)
        self.pairs: list = []
        self.headers: dict = {}
        self.parts: list = []
        self.to_close = False  # a body that ends at the server's close
        self.keep_alive = False
        self.done = False
        self.more = False  # bytes after the answer

    def on_message_begin(self) -> None:
        if self.done:
            self.more = True

    def on_header(self, name: bytes, value: bytes) -> None:
        if not self.head:  # after the head: the trailers, not kept
            self.pairs.append((name, value))

    def on_headers_complete(self) -> None:
        status = self.parser.get_status_code()
        if 100 <= status < 200:  # an interim answer: the real one follows
            self.pairs = []
            return
        self.status, self.head = status, True
        self.headers = headers = header_dict(self.pairs)
        self.to_close = status not in (204, 304) and not (
            "content-length" in headers
            or headers.get("transfer-encoding", "").lower().endswith("chunked")
        )

    def on_body(self, body: bytes) -> None:
        self.parts.append(body)

    def on_message_complete(self) -> None:
        if self.head and not self.done:
            # here, not later: llhttp forgets the answer's flags once it is complete
            self.keep_alive = self.parser.should_keep_alive()
            self.done = True


class HttptoolsConnection(Connection):
    """One socket and its llhttp parser."""

    def __init__(self, sock: socket.socket) -> None:
        super().__init__(sock)
        self._receiver = _Receiver()

    def exchange(self, request: Request) -> Answer:
        self.send(request.encode())
        receiver = self._receiver
        receiver.reset()
        feed = receiver.parser.feed_data
        while not receiver.done:
            data = self.recv()
            if not data:  # the server's close: the end of a body without a length
                if receiver.to_close:
                    break
                raise BadAnswer("the server closed the connection before the answer's end")
            try:
                feed(data)
            except (httptools.HttpParserError, httptools.HttpParserUpgrade) as exc:
                if not receiver.done:
                    raise BadAnswer(str(exc)) from exc
                receiver.more = True
            if not receiver.head and self.received > MAX_HEAD_BYTES:
                raise BadAnswer(f"an answer's head over {MAX_HEAD_BYTES} bytes")
        keep_alive = receiver.keep_alive and not receiver.more and not receiver.to_close
        return Answer(receiver.status, receiver.headers, b"".join(receiver.parts), keep_alive)


class Pool:
    """Kept-alive connections to ``host:port`` (TLS with ``tls``); thread-safe."""

    def __init__(
        self,
        endpoint_url: str,
        host: str,
        port: int,
        tls: Optional[ssl.SSLContext],
        connect_timeout_s: float,
        read_timeout_s: float,
        exchange: Optional[Exchange] = None,
    ) -> None:
        self._endpoint_url = endpoint_url
        self._address = (host, port)
        self._host = host
        self._tls = tls
        self._connect_timeout = connect_timeout_s
        self._read_timeout = read_timeout_s
        self._exchange = exchange or HttptoolsConnection
        self._idle: list = []
        self._lock = threading.Lock()

    def post(self, request: Request) -> Answer:
        """Send ``request`` and read its answer."""
        for attempt in (1, 2):
            connection = None
            if attempt == 1:  # the retry is on a new connection: another idle one may be stale too
                with self._lock:
                    connection = self._idle.pop() if self._idle else None
            reused = connection is not None
            if connection is None:
                connection = self._connect()
            try:
                answer = connection.exchange(request)
            except Stale as exc:
                connection.close()
                if reused and attempt == 1:
                    continue  # closed by the server while idle: once more on a new one
                raise ConnectionClosedError(endpoint_url=self._endpoint_url) from exc
            except (socket.timeout, TimeoutError) as exc:
                connection.close()
                raise ReadTimeoutError(endpoint_url=self._endpoint_url, error=exc) from exc
            except (OSError, ValueError) as exc:  # BadAnswer is a ValueError
                connection.close()
                raise ConnectionClosedError(endpoint_url=self._endpoint_url) from exc
            except BaseException:
                connection.close()
                raise
            if answer.keep_alive:
                with self._lock:
                    self._idle.append(connection)
            else:
                connection.close()
            return answer
        raise AssertionError("unreachable")

    def _connect(self) -> Connection:
        try:
            sock = socket.create_connection(self._address, timeout=self._connect_timeout)
        except (socket.timeout, TimeoutError) as exc:
            raise ConnectTimeoutError(endpoint_url=self._endpoint_url, error=exc) from exc
        except OSError as exc:
            raise EndpointConnectionError(endpoint_url=self._endpoint_url, error=exc) from exc
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if self._tls is not None:
                sock = self._tls.wrap_socket(sock, server_hostname=self._host)
            sock.settimeout(self._read_timeout)
        except (socket.timeout, TimeoutError) as exc:
            sock.close()
            raise ConnectTimeoutError(endpoint_url=self._endpoint_url, error=exc) from exc
        except ssl.SSLError as exc:
            sock.close()
            raise SSLError(endpoint_url=self._endpoint_url, error=exc) from exc
        except OSError as exc:
            sock.close()
            raise EndpointConnectionError(endpoint_url=self._endpoint_url, error=exc) from exc
        return self._exchange(sock)

    def close(self) -> None:
        """Close the idle connections (later posts open new ones)."""
        with self._lock:
            idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()
