"""An HTTP/1.1 server on 127.0.0.1 that answers each request with the next scripted answer.

The tests of the lean path's HTTP exchange give it the bytes of each answer, as they are
to go on the wire (split into several writes where a test wants the answer to arrive in
pieces), and what the server does after it: wait for the next request on the same
connection, or close. It counts the connections clients opened and keeps the requests.
"""

from __future__ import annotations

import socket
import threading
from typing import NamedTuple, Optional

from kinesis_dstream.retrieval.keep_alive import Pool, Request

REQUEST = Request("POST", "/", (("Host", "127.0.0.1"), ("Content-Length", "2")), b"{}")


class Reply(NamedTuple):
    """An answer's bytes, one ``sendall`` a part, then ``"keep"`` (wait for the next
    request) or ``"close"``; ``endless``: bytes sent again and again after the parts until
    the client closes (or this reply reaches ``endless_cap`` bytes)."""

    parts: tuple
    then: str = "keep"
    endless: bytes = b""
    endless_cap: int = 64 * 1024 * 1024


def keep(*parts: bytes) -> Reply:
    return Reply(parts, "keep")


def close(*parts: bytes) -> Reply:
    return Reply(parts, "close")


class ScriptedServer:
    """Answers the requests it reads, on any connection, with ``replies`` in order; a
    request past the script gets its connection closed. A context manager."""

    def __init__(self, replies: list) -> None:
        self._replies = list(replies)
        self._lock = threading.Lock()
        self.connections = 0
        self.requests: list = []  # (head, body) as received
        self.sent = 0  # bytes written, all connections
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.2)
        self.port = self._listener.getsockname()[1]
        self.endpoint_url = f"http://127.0.0.1:{self.port}"
        self._stop = threading.Event()
        self._open: list = []
        self._threads: list = []
        self._acceptor = threading.Thread(target=self._accept, name="scripted-http-accept")
        self._acceptor.start()

    def script(self, replies: list) -> None:
        """Replace what is left of the script."""
        with self._lock:
            self._replies = list(replies)

    def pool(self, exchange=None, read_timeout_s: float = 5.0) -> Pool:
        """A pool of kept-alive connections to this server on ``exchange``."""
        return Pool(self.endpoint_url, "127.0.0.1", self.port, None, 5.0, read_timeout_s, exchange)

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except socket.timeout:
                continue
            except OSError:
                return  # the listener closed by stop()
            with self._lock:
                self.connections += 1
                self._open.append(conn)
            thread = threading.Thread(target=self._serve, args=(conn,), name="scripted-http")
            self._threads.append(thread)
            thread.start()

    def _next_reply(self) -> Optional[Reply]:
        with self._lock:
            return self._replies.pop(0) if self._replies else None

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(10)
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            buffer = b""
            while not self._stop.is_set():
                try:
                    request, buffer = _read_request(conn, buffer)
                except OSError:
                    return
                if request is None:
                    return
                self.requests.append(request)
                reply = self._next_reply()
                if reply is None or not self._send(conn, reply):
                    return
                if reply.then == "close":
                    return

    def _send(self, conn: socket.socket, reply: Reply) -> bool:
        """Write the reply; False when the client closed first."""
        sent = 0  # this reply's bytes: the cap is a reply's, not the server's life's
        try:
            for part in reply.parts:
                conn.sendall(part)
                sent += len(part)
                self.sent += len(part)
            while reply.endless and sent < reply.endless_cap:
                conn.sendall(reply.endless)
                sent += len(reply.endless)
                self.sent += len(reply.endless)
        except OSError:
            return False
        return True

    def stop(self) -> None:
        self._stop.set()
        try:
            self._listener.shutdown(socket.SHUT_RDWR)  # wakes the acceptor (Linux)
        except OSError:
            pass
        self._acceptor.join(timeout=10)
        self._listener.close()
        with self._lock:
            for conn in self._open:
                try:
                    conn.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        for thread in self._threads:
            thread.join(timeout=10)

    def __enter__(self) -> ScriptedServer:
        return self

    def __exit__(self, *exc_info) -> None:
        self.stop()


def _read_request(conn: socket.socket, buffer: bytes) -> tuple:
    """``((head, body), rest)`` of the next request, or ``(None, b"")`` at the close."""
    while b"\r\n\r\n" not in buffer:
        data = conn.recv(65536)
        if not data:
            return None, b""
        buffer += data
    head, _, rest = buffer.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(rest) < length:
        data = conn.recv(65536)
        if not data:
            return None, b""
        rest += data
    return (head.decode("latin-1"), rest[:length]), rest[length:]
