"""The lean path's HTTP exchange against hostile answers from a server on 127.0.0.1.

Whatever bytes come back, :meth:`Pool.post` gives an answer or raises the exceptions its
module documents (``ConnectionClosedError`` for an answer that is not HTTP: the server
here always closes, so neither a timeout nor a wait is an outcome), never another type;
an answer's body is never longer than what was sent; and a head that never ends is read no
further than :data:`MAX_HEAD_BYTES` and one more receive.
"""

from __future__ import annotations

import pytest
from botocore.exceptions import ConnectionClosedError
from hypothesis import given
from hypothesis import strategies as st

from kinesis_dstream.retrieval.keep_alive import (
    MAX_HEAD_BYTES,
    Answer,
    HttptoolsConnection,
)

from ..support.http_script import REQUEST, Reply, ScriptedServer, close

TOKENS = st.sampled_from(
    [
        b"Content-Length",
        b"Transfer-Encoding",
        b"Connection",
        b"Upgrade",
        b"X-Amz-Crc32",
        b"X",
        b"Trailer",
    ]
)
VALUES = st.one_of(
    st.sampled_from(
        [
            b"chunked",
            b"close",
            b"keep-alive",
            b"upgrade",
            b"h2c",
            b"0",
            b"5",
            b"-1",
            b"gzip, chunked",
        ]
    ),
    st.binary(max_size=12),
)


@st.composite
def answers(draw) -> bytes:
    """An answer built of HTTP's parts (interim answers, framings, folded lines, chunks
    with extensions and trailers), then mutated: bytes cut, inserted, replaced."""
    parts = []
    if draw(st.booleans()):
        parts.append(b"HTTP/1.1 100 Continue\r\n\r\n")
    version = draw(st.sampled_from([b"HTTP/1.1", b"HTTP/1.0", b"HTTP/2", b"HTTX/1.1"]))
    status = draw(st.one_of(st.sampled_from([101, 200, 204, 304, 400]), st.integers(0, 1000)))
    parts.append(b"%s %d OK\r\n" % (version, status))
    for name, value in draw(st.lists(st.tuples(TOKENS, VALUES), max_size=4)):
        parts.append(b"%s: %s\r\n" % (name, value))
        if draw(st.booleans()):
            parts.append(b"  folded\r\n")
    body = draw(st.binary(max_size=64))
    framing = draw(st.sampled_from(["length", "chunked", "close"]))
    if framing == "length":
        parts.append(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    elif framing == "chunked":
        parts.append(b"Transfer-Encoding: chunked\r\n\r\n")
        if body:
            parts.append(b"%x;ext=1\r\n%s\r\n" % (len(body), body))
        parts.append(b"0\r\nX-Trailer: t\r\n\r\n")
    else:
        parts.append(b"\r\n" + body)
    data = bytearray(b"".join(parts))
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(data)))
        cut = draw(st.integers(0, 4))
        data[at : at + cut] = draw(st.binary(max_size=4))
    return bytes(data)


@pytest.fixture(scope="module")
def server():
    with ScriptedServer([]) as scripted:
        yield scripted


def _post_once(server: ScriptedServer, data: bytes) -> object:
    server.script([close(data)])
    pool = server.pool(HttptoolsConnection)
    try:
        return pool.post(REQUEST)
    except ConnectionClosedError as error:
        return error
    finally:
        pool.close()


def _check(outcome: object, sent: bytes) -> None:
    if isinstance(outcome, ConnectionClosedError):
        return
    assert isinstance(outcome, Answer)
    assert isinstance(outcome.status, int) and isinstance(outcome.body, bytes)
    assert len(outcome.body) <= len(sent)
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in outcome.headers.items())


@given(answers())
def test_mutated_answers_give_an_answer_or_connection_closed(server, data):
    _check(_post_once(server, data), data)


@given(st.binary(max_size=512))
def test_random_bytes_give_an_answer_or_connection_closed(server, data):
    _check(_post_once(server, data), data)


@given(
    st.sampled_from([b"HTTP/1.1 200 OK\r\n", b"HTTP/1.1 100 Continue\r\n\r\n", b""]),
    st.binary(min_size=1, max_size=64).filter(lambda b: b"\n" not in b),
)
def test_a_head_that_never_ends_is_read_to_its_bound(server, start, endless):
    made: list = []

    def exchange(sock):
        made.append(HttptoolsConnection(sock))
        return made[-1]

    # 1 MiB sent, then the server waits: an exchange past its bound waits for more
    server.script([Reply((start,), endless=endless, endless_cap=1 << 20)])
    pool = server.pool(exchange, read_timeout_s=2.0)
    try:
        with pytest.raises(ConnectionClosedError):
            pool.post(REQUEST)
    finally:
        pool.close()
    [connection] = made
    assert connection.received <= MAX_HEAD_BYTES + 2 * 65536
