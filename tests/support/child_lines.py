"""Malformed lines a MultiLang child may write on its stdout, and what each daemon answers.

:func:`cases` is what both daemons (ours and the Java KCL 2.5.8 MultiLangDaemon) are fed
by ``scripts/bad_lines_child.py`` in its first ``processRecords`` (records ``1``..``last``
of a fresh shard, checkpoint ``TRIM_HORIZON``): each line, then a *sync* checkpoint at
``SYNC-<n>`` (not a sequence number: every daemon answers it ``IllegalArgumentException``
and writes nothing), so the child knows which answers, if any, belong to the line. Each
case carries the answer the Java daemon gave (observed on the real one,
``tests/interop/test_java_bad_lines.py``) and ours where it differs. An answer is None (the
line was skipped) or the checkpoint message's (sequenceNumber, subSequenceNumber, error).

:data:`FATAL_TO_JAVA` are lines the Java daemon does not survive; :data:`BETWEEN` is
written by the child before every later answer of its (initialize, each batch, the end).
"""

from __future__ import annotations

import json

IAE = "IllegalArgumentException"
#: Ours answers as the Java daemon does.
SAME = "same"
ARABIC_INDIC = str.maketrans(
    "0123456789", "\u0660\u0661\u0662\u0663\u0664\u0665\u0666\u0667\u0668\u0669"
)
FULLWIDTH = str.maketrans("0123456789", "".join(chr(0xFF10 + d) for d in range(10)))

#: Written between good messages on every later call (initialize, every batch, the end).
BETWEEN = (
    b"a line of debugging output",
    b"[1, 2, 3]",
    b'{"action": "unknown"}',
    b'{"action": "checkpoint", "subSequenceNumber": "x"}',
    b"[" * 1000 + b"]" * 1000,
)
#: Lines the Java daemon exits on (status 1): ``null`` binds to no message, and its
#: protocol then fails on a NullPointerException. Ours skips them.
FATAL_TO_JAVA = (b"null",)


def _checkpoint(seq, sub=None, **extra) -> bytes:
    return json.dumps(
        {"action": "checkpoint", "sequenceNumber": seq, "subSequenceNumber": sub, **extra}
    ).encode()


def _raw(seq_json: str, sub_json: str = "null") -> bytes:
    """A checkpoint whose fields are raw JSON text (NaN, 1e400: what json.dumps won't write)."""
    return (
        f'{{"action": "checkpoint", "sequenceNumber": {seq_json}, "subSequenceNumber": {sub_json}}}'
    ).encode()


def _deep(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


def cases(last: str) -> list:
    """(name, line, the Java daemon's answer, ours or SAME) for a batch ending at ``last``."""
    q = json.dumps(last)
    return [
        ("not JSON", b"Traceback (most recent call last): not a message", None, SAME),
        ("invalid UTF-8", b"\xff\xfe{\x80}", None, SAME),
        ("JSON array", b"[]", None, SAME),
        ("JSON string", b'"checkpoint"', None, SAME),
        ("JSON number", b"1", None, SAME),
        ("object without action", b"{}", None, SAME),
        ("unknown action", b'{"action": "bogus"}', None, SAME),
        ("action not a string", b'{"action": ["checkpoint"]}', None, SAME),
        ("a daemon's action", b'{"action": "initialize", "shardId": "x"}', None, SAME),
        ("deep array", _deep(1000), None, SAME),
        ("deep object", b'{"a":' * 1000 + b"1" + b"}" * 1000, None, SAME),
        (
            "deep value in a checkpoint",
            b'{"action": "checkpoint", "x": ' + _deep(1000) + b"}",
            None,
            SAME,
        ),
        (
            "deep value before the action",
            b'{"x": ' + _deep(1000) + b', "action": "checkpoint"}',
            None,
            SAME,
        ),
        ("very deep object", b'{"a":' * 100_000 + b"1" + b"}" * 100_000, None, SAME),
        (
            "unknown field in a status",
            b'{"action": "status", "responseFor": "processRecords", "x": 1}',
            None,
            SAME,
        ),
        ("unknown field in a checkpoint", _checkpoint(last, 0, extra="x"), None, SAME),
        ("sequenceNumber x", _checkpoint("x"), ("x", None, IAE), SAME),
        ("sequenceNumber empty", _checkpoint(""), ("", None, IAE), SAME),
        ("sequenceNumber array", _raw("[]"), None, SAME),
        ("sequenceNumber object", _raw("{}"), None, SAME),
        ("sequenceNumber 1e400", _raw("1e400"), ("1e400", None, IAE), SAME),
        ("sequenceNumber NaN", _raw("NaN"), None, SAME),
        ("sequenceNumber true", _raw("true"), ("true", None, IAE), SAME),
        ("sequenceNumber -1", _checkpoint("-1"), ("-1", None, IAE), SAME),
        ("sequenceNumber 200 digits", _checkpoint("9" * 200), ("9" * 200, None, IAE), SAME),
        ("sequenceNumber with spaces", _checkpoint(f" {last} "), (f" {last} ", None, IAE), SAME),
        # Java takes LATEST while the last checkpoint is TRIM_HORIZON, and writes it: a
        # restart would then skip every record not yet read.
        (
            "sequenceNumber LATEST",
            _checkpoint("LATEST"),
            ("LATEST", None, None),
            ("LATEST", None, IAE),
        ),
        ("sequenceNumber 0", _checkpoint("0"), ("0", None, None), SAME),
        # Not Kinesis's spelling of a sequence number: Java writes it to the lease table.
        (
            "sequenceNumber leading zero",
            _checkpoint("0" + last),
            ("0" + last, None, None),
            ("0" + last, None, IAE),
        ),
        (
            "sequenceNumber fullwidth digits",
            _checkpoint(last.translate(FULLWIDTH)),
            (last.translate(FULLWIDTH), None, None),
            (last.translate(FULLWIDTH), None, IAE),
        ),
        ("subSequenceNumber empty", _checkpoint(last, ""), (last, None, None), SAME),
        ("subSequenceNumber empty, no sequence", _checkpoint(None, ""), (None, None, None), SAME),
        ("subSequenceNumber x", _checkpoint(last, "x"), None, SAME),
        ("subSequenceNumber array", _raw(q, "[]"), None, SAME),
        ("subSequenceNumber 1e400", _raw(q, "1e400"), None, SAME),
        ("subSequenceNumber NaN", _raw(q, "NaN"), None, SAME),
        ("subSequenceNumber true", _raw(q, "true"), None, SAME),
        ("subSequenceNumber 2**64", _checkpoint(last, 2**64), None, SAME),
        ("subSequenceNumber -1", _checkpoint(last, -1), (last, -1, IAE), SAME),
        ("subSequenceNumber 1.5", _raw(q, "1.5"), (last, 1, IAE), SAME),
        ("subSequenceNumber string 0", _checkpoint(last, "0"), (last, 0, None), SAME),
        (
            "subSequenceNumber Arabic-Indic 0",
            _checkpoint(last, "\u0660"),
            (last, 0, None),
            (last, "\u0660", IAE),
        ),
        ("error field", _checkpoint(last, 0, error="x"), (last, 0, None), SAME),
        ("trailing garbage", _checkpoint("x") + b" garbage", ("x", None, IAE), SAME),
        ("two objects", _checkpoint("x") + _checkpoint("y"), ("x", None, IAE), SAME),
        (
            "lone surrogate",
            b'{"action": "checkpoint", "sequenceNumber": "\\ud800"}',
            ("?", None, IAE),
            SAME,
        ),
        # Last, so the lease table shows it: Java writes these digits there as they are.
        (
            "sequenceNumber Arabic-Indic digits",
            _checkpoint(last.translate(ARABIC_INDIC)),
            (last.translate(ARABIC_INDIC), None, None),
            (last.translate(ARABIC_INDIC), None, IAE),
        ),
    ]


def answers(last: str, daemon: str) -> dict:
    """name -> the answer ``daemon`` ("java" or "ours") gives to that case's line."""
    table = {}
    for name, _, java, ours in cases(last):
        answer = java if daemon == "java" or ours == SAME else ours
        table[name] = None if answer is None else list(answer)
    return table
