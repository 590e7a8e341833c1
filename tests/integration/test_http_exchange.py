"""The lean path's HTTP exchange on a real socket: the edge cases of HTTP/1.1 answers.

Each test runs on the library's exchange (httptools') and on the two the shard-read
benchmark sets beside it (the hand-written one it replaced, h11's), so the benchmark
compares exchanges that answer alike; where the hand-written one did not, the test says so.
Every test asserts the body read and how many connections were opened.
"""

from __future__ import annotations

import socket

import pytest
from botocore.exceptions import ConnectionClosedError, ReadTimeoutError

from benchmarks.http_exchanges import H11Connection, HandWrittenConnection
from kinesis_dstream.retrieval.keep_alive import (
    MAX_HEAD_BYTES,
    BadAnswer,
    HttptoolsConnection,
    Pool,
)

from ..support.http_script import REQUEST, Reply, ScriptedServer, close, keep

PAGE = b'{"Records":[],"MillisBehindLatest":0}'


def ok(body: bytes = PAGE, *headers: bytes) -> bytes:
    head = b"".join(h + b"\r\n" for h in headers)
    return b"HTTP/1.1 200 OK\r\n%sContent-Length: %d\r\n\r\n%s" % (head, len(body), body)


@pytest.fixture(
    params=[
        pytest.param(HttptoolsConnection, id="httptools"),
        pytest.param(H11Connection, id="h11"),
        pytest.param(HandWrittenConnection, id="hand-written"),
    ]
)
def exchange(request):
    return request.param


@pytest.fixture
def server():
    with ScriptedServer([]) as scripted:
        yield scripted


def expect_failure(request, reason: str) -> None:
    """The test runs on and must fail (a comparison exchange's known difference)."""
    request.applymarker(pytest.mark.xfail(strict=True, reason=reason))


def _posts(pool: Pool, count: int) -> list:
    try:
        return [pool.post(REQUEST) for _ in range(count)]
    finally:
        pool.close()


def test_kept_alive_answers_share_one_connection(server, exchange):
    server.script([keep(ok(b"one")), keep(ok(b"two", b"X-Amzn-RequestId: r2"))])
    one, two = _posts(server.pool(exchange), 2)
    assert (one.status, one.body, two.body) == (200, b"one", b"two")
    assert two.headers["x-amzn-requestid"] == "r2" and one.keep_alive
    assert server.connections == 1
    head, body = server.requests[0]
    assert head.startswith("POST / HTTP/1.1\r\n") and body == b"{}"


def test_an_answer_in_pieces(server, exchange):
    answer = ok(PAGE, b"X-Amz-Crc32: 1", b"A: 1", b"a: 2")
    server.script([keep(*(answer[i : i + 7] for i in range(0, len(answer), 7)))])
    [page] = _posts(server.pool(exchange), 1)
    assert page.body == PAGE and page.headers["x-amz-crc32"] == "1"
    assert page.headers["a"] == "1, 2"  # a repeated header, joined as botocore joins it


def test_an_http_1_0_answer_kept_alive_when_it_says_so(server, exchange, request):
    if exchange is H11Connection:
        expect_failure(request, "h11 keeps no HTTP/1.0 connection alive (its documented choice)")
    kept = b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 3\r\n\r\none"
    server.script(
        [keep(kept), keep(b"HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\ntwo"), keep(ok(b"new"))]
    )
    one, two, three = _posts(server.pool(exchange), 3)
    assert (one.keep_alive, two.keep_alive) == (True, False)
    assert (one.body, two.body, three.body, server.connections) == (b"one", b"two", b"new", 2)


def test_a_folded_header_line_is_part_of_the_header_before_it(server, exchange, request):
    if exchange is HandWrittenConnection:
        expect_failure(request, "the hand-written exchange read a folded line as a header")
    server.script([keep(ok(PAGE, b"X-Folded: first", b"  second", b"X-After: 1"))])
    [page] = _posts(server.pool(exchange), 1)
    assert " ".join(page.headers["x-folded"].split()) == "first second"
    assert page.headers["x-after"] == "1" and page.body == PAGE
    assert set(page.headers) == {"x-folded", "x-after", "content-length"}


def test_connection_close_on_an_answer_opens_a_new_connection_for_the_next(server, exchange):
    # the server keeps the first connection open: only the client's reading of the
    # header takes the second request elsewhere
    server.script([keep(ok(b"one", b"Connection: close")), keep(ok(b"two"))])
    one, two = _posts(server.pool(exchange), 2)
    assert (one.body, one.keep_alive, two.body) == (b"one", False, b"two")
    assert server.connections == 2


def test_a_body_without_a_length_is_read_to_the_close(server, exchange):
    server.script(
        [close(b"HTTP/1.1 200 OK\r\nContent-Type: x\r\n\r\nall ", b"of it"), keep(ok(b"next"))]
    )
    one, two = _posts(server.pool(exchange), 2)
    assert (one.body, one.keep_alive) == (b"all of it", False)
    assert two.body == b"next" and server.connections == 2


def test_an_http_1_0_answer_without_a_length_is_read_to_the_close(server, exchange):
    server.script([close(b"HTTP/1.0 200 OK\r\n\r\n", PAGE), keep(ok(b"next"))])
    one, two = _posts(server.pool(exchange), 2)
    assert (one.body, two.body, server.connections) == (PAGE, b"next", 2)


def test_chunked_bodies_with_extensions_and_trailers(server, exchange):
    chunked = (
        b"HTTP/1.1 400 Bad Request\r\nTransfer-Encoding: chunked\r\n\r\n"
        b'4\r\n{"__\r\n9;ext=1;name="v"\r\ntype":"x"\r\n1\r\n}\r\n0\r\nX-Trailer: t\r\n\r\n'
    )
    server.script([keep(chunked[:60], chunked[60:]), keep(ok(b"next"))])
    one, two = _posts(server.pool(exchange), 2)
    assert (one.status, one.body) == (400, b'{"__type":"x"}')
    assert two.body == b"next" and server.connections == 1  # kept alive after the trailers


def test_an_interim_100_continue_answer_is_skipped(server, exchange):
    server.script(
        [keep(b"HTTP/1.1 100 Continue\r\n\r\n", ok(b"final", b"X-Final: y")), keep(ok(b"two"))]
    )
    one, two = _posts(server.pool(exchange), 2)
    assert (one.status, one.body, one.headers["x-final"]) == (200, b"final", "y")
    assert "x-final" not in two.headers and two.body == b"two"
    assert server.connections == 1


def test_a_no_content_answer_has_no_body(server, exchange):
    server.script([keep(b"HTTP/1.1 204 No Content\r\n\r\n"), keep(ok(b"two"))])
    one, two = _posts(server.pool(exchange), 2)
    assert (one.status, one.body, two.body, server.connections) == (204, b"", b"two", 1)


def test_a_pooled_connection_the_server_closed_is_replaced_and_the_request_sent_again(
    server, exchange
):
    # the server answers, then closes without saying so (an idle timeout)
    server.script([close(ok(b"one")), keep(ok(b"two"))])
    one, two = _posts(server.pool(exchange), 2)
    assert (one.body, one.keep_alive, two.body) == (b"one", True, b"two")
    assert server.connections == 2 and len(server.requests) == 2


def test_a_new_connection_closed_at_once_is_not_retried(server, exchange):
    server.script([close()])
    with pytest.raises(ConnectionClosedError):
        _posts(server.pool(exchange), 1)
    assert server.connections == 1


@pytest.mark.parametrize(
    "garbage",
    [
        b"SSH-2.0-OpenSSH_9.6\r\n\r\n",
        b"HTTP/1.1 2x0 OK\r\nContent-Length: 2\r\n\r\nhi",
        b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhi\r\n0\r\n\r\n",
        b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\nConnection: Upgrade\r\n\r\nxy",
    ],
    ids=["not-http", "bad-status", "cut-short", "bad-chunk-size", "unasked-upgrade"],
)
def test_a_garbage_answer_raises_connection_closed(server, exchange, garbage):
    server.script([close(garbage), keep(ok(b"next"))])
    pool = server.pool(exchange)
    with pytest.raises(ConnectionClosedError):
        pool.post(REQUEST)
    assert pool.post(REQUEST).body == b"next"  # the broken connection was not pooled
    pool.close()
    assert server.connections == 2


def test_a_silent_server_raises_read_timeout(server, exchange):
    server.script([keep(b"HTTP/1.1 200 OK\r\n")])
    with pytest.raises(ReadTimeoutError):
        _posts(server.pool(exchange, read_timeout_s=0.3), 1)
    assert server.connections == 1


def test_an_endless_head_is_read_no_further_than_its_bound(server, exchange):
    server.script(
        [Reply((b"HTTP/1.1 200 OK\r\n",), endless=b"X-Padding: " + b"p" * 1000 + b"\r\n")]
    )
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=5)
    connection = exchange(sock)
    try:
        with pytest.raises(BadAnswer):
            connection.exchange(REQUEST)
    finally:
        connection.close()
    assert MAX_HEAD_BYTES < connection.received <= MAX_HEAD_BYTES + 2 * 65536
    assert server.connections == 1
