"""The lean GetRecords path's HTTP exchanges that the library does not use, kept so the
shard-read benchmark (``--exchanges``) can set them beside the library's (httptools', in
:mod:`kinesis_dstream.retrieval.keep_alive`) in one run:

- :class:`HandWrittenConnection`: the exchange the lean path was written with (2026-11-27
  to 2026-11-28): head parsing, chunked bodies, interim answers and bodies read to the
  close, by hand. It reads a folded header line (obs-fold) as a header of its own;
- :class:`H11Connection`: the exchange on h11 (a pure-Python HTTP/1.1 state machine,
  httpx's), which also writes the request.

Both keep :class:`~kinesis_dstream.retrieval.keep_alive.Connection`'s contract (the same
exceptions for the same failures), and the exchange tests run on them too.
"""

from __future__ import annotations

import socket

import h11

from kinesis_dstream.retrieval.keep_alive import (
    MAX_HEAD_BYTES,
    Answer,
    BadAnswer,
    Connection,
    Request,
    Stale,
    header_dict,
)


class HandWrittenConnection(Connection):
    """One socket and what it has received beyond the last answer."""

    def __init__(self, sock: socket.socket) -> None:
        super().__init__(sock)
        self._buffer = b""

    def exchange(self, request: Request) -> Answer:
        self.send(request.encode())
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
        data = self.recv()
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
            if len(buffer) > MAX_HEAD_BYTES:
                raise BadAnswer(f"an answer's head over {MAX_HEAD_BYTES} bytes")
            try:
                data = self._recv()
            except ConnectionResetError as exc:
                if first and not buffer:
                    raise Stale() from exc
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
            if len(self._buffer) > MAX_HEAD_BYTES:
                raise BadAnswer(f"a chunk's line over {MAX_HEAD_BYTES} bytes")
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
            data = self.recv()
            if not data:
                return b"".join(parts)
            parts.append(data)


def _parse_head(head: bytes) -> tuple:
    """``(status, headers, keep_alive)`` of a status line and header lines."""
    lines = head.decode("latin-1").split("\r\n")
    version, _, rest = lines[0].partition(" ")
    if not version.startswith("HTTP/"):
        raise BadAnswer(f"not an HTTP status line: {lines[0][:40]!r}")
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


class H11Connection(Connection):
    """One socket and its h11 state machine (the client's side)."""

    def __init__(self, sock: socket.socket) -> None:
        super().__init__(sock)
        self._h11 = h11.Connection(h11.CLIENT, max_incomplete_event_size=MAX_HEAD_BYTES)

    def exchange(self, request: Request) -> Answer:
        machine = self._h11
        if machine.our_state is h11.DONE:  # kept alive after the last answer
            machine.start_next_cycle()
        self.send(
            machine.send(
                h11.Request(method=request.method, target=request.target, headers=request.headers)
            )
            + machine.send(h11.Data(data=request.body))
            + machine.send(h11.EndOfMessage())
        )
        status, headers, parts, closed = 0, {}, [], False
        try:
            while True:
                event = machine.next_event()
                kind = type(event)
                if event is h11.NEED_DATA:
                    data = self.recv()
                    closed = not data  # the server's close (a body without a length ends)
                    machine.receive_data(data)
                elif kind is h11.Data:
                    parts.append(event.data)
                elif kind is h11.Response:
                    status, headers = event.status_code, header_dict(event.headers)
                elif kind is h11.EndOfMessage:
                    break
                elif kind is not h11.InformationalResponse:  # an interim answer: read on
                    raise BadAnswer(f"the connection ended before the answer ({event!r})")
        except h11.RemoteProtocolError as exc:
            raise BadAnswer(str(exc)) from exc
        keep_alive = (
            not closed  # h11 says DONE, not MUST_CLOSE, for a body read to the close
            and machine.their_state is h11.DONE
            and machine.our_state is h11.DONE
            and not machine.trailing_data[0]  # bytes after the answer: no reuse
        )
        return Answer(status, headers, b"".join(parts), keep_alive)
