"""A TCP proxy on 127.0.0.1 that can make an HTTP service answer 500 for a while.

Up, it relays bytes both ways untouched, so long-lived streamed answers (a
SubscribeToShard event stream) pass as they come. Down, it cuts every relayed connection
and answers each new request with ``HTTP 500`` and an HTML page: no AWS error code, as a
load balancer or proxy in front of the service answers. One thread (a selector loop)
owns every socket; :meth:`stop` ends and joins it.
"""

from __future__ import annotations

import selectors
import socket
import threading
from typing import Optional
from urllib.parse import urlparse

PAGE = b"<html><body><h1>500 Internal Server Error</h1></body></html>"
ANSWER = (
    b"HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/html\r\n"
    b"Content-Length: " + str(len(PAGE)).encode() + b"\r\nConnection: close\r\n\r\n" + PAGE
)


class OutageProxy:
    """``down(True)`` starts an outage, ``down(False)`` ends it; ``answered_500`` counts
    the requests answered with the page."""

    def __init__(self, upstream_url: str) -> None:
        upstream = urlparse(upstream_url)
        self._upstream = (upstream.hostname or "127.0.0.1", upstream.port or 80)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.setblocking(False)
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._listener, selectors.EVENT_READ, ("accept", None))
        self._down = False
        self._cut = False  # an outage began: cut the relayed connections (loop thread)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self.answered_500 = 0
        self._thread = threading.Thread(target=self._loop, name="outage-proxy")

    @property
    def endpoint_url(self) -> str:
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}"

    def start(self) -> OutageProxy:
        self._thread.start()
        return self

    def down(self, outage: bool) -> None:
        with self._lock:
            self._down = outage
            self._cut = outage

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)
        assert not self._thread.is_alive()
        for key in list(self._selector.get_map().values()):
            key.fileobj.close()  # type: ignore[union-attr]
        self._selector.close()

    # -- the loop thread -------------------------------------------------------------------

    def _loop(self) -> None:
        while not self._stop.is_set():
            with self._lock:
                cut, self._cut = self._cut, False
            if cut:
                for key in list(self._selector.get_map().values()):
                    if key.data[0] == "relay":
                        self._close(key.fileobj)
            for key, _ in self._selector.select(timeout=0.05):
                kind, state = key.data
                if kind == "accept":
                    self._accept()
                elif kind == "relay":
                    self._relay(key.fileobj, state)
                else:
                    self._refuse(key.fileobj, state)

    def _accept(self) -> None:
        try:
            client, _ = self._listener.accept()
        except BlockingIOError:
            return
        with self._lock:
            down = self._down
        if down:
            self._selector.register(client, selectors.EVENT_READ, ("refuse", bytearray()))
            return
        try:
            upstream = socket.create_connection(self._upstream, timeout=5)
        except OSError:
            client.close()
            return
        self._selector.register(client, selectors.EVENT_READ, ("relay", upstream))
        self._selector.register(upstream, selectors.EVENT_READ, ("relay", client))

    def _relay(self, source: socket.socket, target: Optional[socket.socket]) -> None:
        try:
            data = source.recv(65536)
            if data and target is not None:
                target.sendall(data)
                return
        except OSError:
            pass
        self._close(source)
        if target is not None:
            self._close(target)

    def _refuse(self, client: socket.socket, received: bytearray) -> None:
        """Read one whole request (head and body), then answer 500 and close."""
        try:
            data = client.recv(65536)
        except OSError:
            data = b""
        if not data:
            self._close(client)
            return
        received += data
        head, found, body = bytes(received).partition(b"\r\n\r\n")
        if not found:
            return
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value.strip())
        if len(body) < length:
            return
        try:
            client.sendall(ANSWER)
        except OSError:
            pass
        with self._lock:
            self.answered_500 += 1
        self._close(client)

    def _close(self, sock: object) -> None:
        try:
            self._selector.unregister(sock)
        except (KeyError, ValueError):
            pass
        sock.close()  # type: ignore[attr-defined]
