"""A pool of kept-alive HTTP/1.1 connections to one endpoint, for small POSTs.

What :mod:`.lean_get_records` sends: one request, written in one ``sendall``, and one
answer read with a handful of ``recv`` calls, without ``http.client``'s per-request header
objects (its ``email`` parser is half of its cost on a small answer). Failures raise
botocore's own exceptions, as botocore's HTTP session maps urllib3's, so callers' retry
rules see what they see from a botocore call:

- no connection (refused, unreachable, DNS): ``EndpointConnectionError``;
- connect or read timeouts: ``ConnectTimeoutError``, ``ReadTimeoutError``;
- a connection that breaks during an exchange, or an answer that is not HTTP:
  ``ConnectionClosedError``.

A kept-alive connection the server closed while it sat in the pool (nothing read, or the
send failed) is replaced and the request sent once more: :meth:`Pool.post` is for requests
that may be sent twice (reads).
"""

from __future__ import annotations

import socket
import ssl
import threading
from typing import Optional

from botocore.exceptions import (
    ConnectionClosedError,
    ConnectTimeoutError,
    EndpointConnectionError,
    ReadTimeoutError,
    SSLError,
)

_RECV = 65536


class _Stale(Exception):
    """The server had closed a pooled connection before this exchange began."""


class Answer:
    """One HTTP answer: status, headers (lower-case names), body."""

    __slots__ = ("body", "headers", "keep_alive", "status")

    def __init__(self, status: int, headers: dict, body: bytes, keep_alive: bool) -> None:
        self.status = status
        self.headers = headers
        self.body = body
        self.keep_alive = keep_alive


class _Connection:
    """One socket and what it has received beyond the last answer."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self._buffer = b""

    def exchange(self, request: bytes) -> Answer:
        try:
            self.sock.sendall(request)
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise _Stale() from exc
        head = self._read_head(first=True)
        while True:
            status, headers, keep_alive = _parse_head(head)
            if not 100 <= status < 200:
                break
            head = self._read_head(first=False)  # an interim answer: the real one follows
        if status in (204, 304):
            return Answer(status, headers, b"", keep_alive)
        if headers.get("transfer-encoding", "").lower() == "chunked":
            body = self._read_chunked()
        elif "content-length" in headers:
            body = self._read_exactly(int(headers["content-length"]))
        else:
            body, keep_alive = self._read_to_close(), False
        return Answer(status, headers, body, keep_alive)

    def _recv(self) -> bytes:
        data = self.sock.recv(_RECV)
        if not data:
            raise ConnectionResetError("the server closed the connection")
        return data

    def _read_head(self, first: bool) -> bytes:
        buffer = self._buffer
        while True:
            end = buffer.find(b"\r\n\r\n")
            if end >= 0:
                self._buffer = buffer[end + 4 :]
                return buffer[:end]
            try:
                data = self._recv()
            except ConnectionResetError as exc:
                if first and not buffer:
                    raise _Stale() from exc
                raise
            buffer += data

    def _read_exactly(self, size: int) -> bytes:
        buffer = self._buffer
        if len(buffer) >= size:
            self._buffer = buffer[size:]
            return buffer[:size]
        parts = [buffer]
        have = len(buffer)
        while have < size:
            data = self._recv()
            parts.append(data)
            have += len(data)
        whole = b"".join(parts)
        self._buffer = whole[size:]
        return whole[:size]

    def _read_line(self) -> bytes:
        while b"\r\n" not in self._buffer:
            self._buffer += self._recv()
        line, _, self._buffer = self._buffer.partition(b"\r\n")
        return line

    def _read_chunked(self) -> bytes:
        parts: list = []
        while True:
            size = int(self._read_line().split(b";", 1)[0], 16)
            if size == 0:
                while self._read_line():  # trailers, up to the empty line
                    pass
                return b"".join(parts)
            parts.append(self._read_exactly(size))
            self._read_exactly(2)  # the chunk's CRLF

    def _read_to_close(self) -> bytes:
        parts = [self._buffer]
        self._buffer = b""
        while True:
            data = self.sock.recv(_RECV)
            if not data:
                return b"".join(parts)
            parts.append(data)

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


def _parse_head(head: bytes) -> tuple:
    """``(status, headers, keep_alive)`` of a status line and header lines."""
    lines = head.decode("latin-1").split("\r\n")
    version, _, rest = lines[0].partition(" ")
    if not version.startswith("HTTP/"):
        raise ValueError(f"not an HTTP status line: {lines[0][:40]!r}")
    status = int(rest[:3])
    headers: dict = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        name = name.strip().lower()
        value = value.strip()
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
    connection = headers.get("connection", "").lower()
    keep_alive = "keep-alive" in connection if version == "HTTP/1.0" else "close" not in connection
    return status, headers, keep_alive


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
    ) -> None:
        self._endpoint_url = endpoint_url
        self._address = (host, port)
        self._host = host
        self._tls = tls
        self._connect_timeout = connect_timeout_s
        self._read_timeout = read_timeout_s
        self._idle: list = []
        self._lock = threading.Lock()

    def post(self, request: bytes) -> Answer:
        """Send ``request`` (a whole HTTP/1.1 request) and read its answer."""
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
            except _Stale as exc:
                connection.close()
                if reused and attempt == 1:
                    continue  # closed by the server while idle: once more on a new one
                raise ConnectionClosedError(endpoint_url=self._endpoint_url) from exc
            except (socket.timeout, TimeoutError) as exc:
                connection.close()
                raise ReadTimeoutError(endpoint_url=self._endpoint_url, error=exc) from exc
            except (OSError, ValueError) as exc:
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

    def _connect(self) -> _Connection:
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
        return _Connection(sock)

    def close(self) -> None:
        """Close the idle connections (later posts open new ones)."""
        with self._lock:
            idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()
