"""The kept-alive HTTP/1.1 exchange of the lean GetRecords path, over a socket pair."""

import socket

import pytest

from kinesis_dstream.retrieval.keep_alive import _Connection, _parse_head


def _answer(*chunks):
    ours, theirs = socket.socketpair()
    ours.settimeout(5)
    for chunk in chunks:
        theirs.sendall(chunk)
    return _Connection(ours), theirs


def test_content_length_answers_keep_the_next_answer_bytes():
    body = b'{"Records":[]}'
    first = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nX-Amzn-RequestId: r1\r\n\r\n%s" % (
        len(body),
        body,
    )
    connection, theirs = _answer(first + first[:20], first[20:])
    with theirs:
        one = connection.exchange(b"GET / HTTP/1.1\r\n\r\n")
        two = connection.exchange(b"GET / HTTP/1.1\r\n\r\n")
    assert (one.status, one.body, one.keep_alive) == (200, body, True)
    assert one.headers["x-amzn-requestid"] == "r1"
    assert two.body == body
    connection.close()


def test_chunked_answers_and_interim_answers():
    connection, theirs = _answer(
        b"HTTP/1.1 100 Continue\r\n\r\n"
        b"HTTP/1.1 400 Bad Request\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
        b'4\r\n{"__\r\n9;ext=1\r\ntype":"x"\r\n1\r\n}\r\n0\r\nTrailer: t\r\n\r\n'
    )
    with theirs:
        answer = connection.exchange(b"POST / HTTP/1.1\r\n\r\n")
    assert (answer.status, answer.body, answer.keep_alive) == (400, b'{"__type":"x"}', False)
    connection.close()


def test_an_answer_without_length_is_read_to_the_close():
    connection, theirs = _answer(b"HTTP/1.0 200 OK\r\n\r\nall of it")
    theirs.shutdown(socket.SHUT_WR)  # the end of the answer; our request still goes out
    with theirs:
        answer = connection.exchange(b"GET / HTTP/1.1\r\n\r\n")
    assert (answer.body, answer.keep_alive) == (b"all of it", False)
    connection.close()


def test_heads():
    assert _parse_head(b"HTTP/1.0 204 No Content\r\nConnection: keep-alive")[::2] == (204, True)
    assert _parse_head(b"HTTP/1.1 200 OK\r\nA: 1\r\na: 2")[1] == {"a": "1, 2"}
    with pytest.raises(ValueError, match="not an HTTP status line"):
        _parse_head(b"SSH-2.0-OpenSSH")
