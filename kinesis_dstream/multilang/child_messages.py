"""A child's stdout lines read as messages, as the Java daemon's Jackson binds them.

The Java ``GetNextMessageTask`` hands each line to Jackson (``readValue(line,
Message.class)``, a default ``ObjectMapper``) and skips, with a log line, any line Jackson
cannot bind: not JSON, not an object, no or an unknown ``action``, an unknown field, a
field of the wrong shape. :func:`parse` does the same, line for line (checked against the
real daemon in ``tests/interop/test_java_bad_lines.py``), returning :class:`Skipped` with
the reason instead of raising, so no line can end the reader:

- the first JSON value of the line counts; what follows it is ignored (Jackson reads one
  value); ``NaN`` and ``Infinity`` are not JSON; nesting too deep to decode is skipped;
- a string field takes a string, or a number's text as written (``1e400``), or
  ``true``/``false``; an array or object there skips the line;
- ``subSequenceNumber`` (a Java ``long``) takes an integer in the ``long`` range, a
  fraction (truncated), a string of ASCII digits, or ``""`` (no sub-sequence number);
  anything else skips the line, except a string of another script's digits: Java reads
  ``"\\u0665"`` (Arabic-Indic five) as 5, this daemon keeps the text and answers the checkpoint
  ``IllegalArgumentException`` (:mod:`~kinesis_dstream.esn`: ASCII digits only).

Two lines the Java daemon does not survive are skipped here: ``null`` (Java's reader
returns no message and the daemon exits 1 on a NullPointerException) and a line over
:data:`MAX_LINE_CHARS` (Java reads any length; a message is under 300 characters).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Optional, Union

STATUS = "status"
CHECKPOINT = "checkpoint"
#: The daemon's messages: Java binds them from a child too, and ignores them.
DAEMON_ACTIONS = frozenset(
    {
        "initialize",
        "processRecords",
        "leaseLost",
        "shardEnded",
        "shutdownRequested",
        "shutdown",
    }
)
#: Each message's fields, as Jackson binds them (any other field skips the line).
_FIELDS = {
    STATUS: frozenset({"action", "responseFor"}),
    CHECKPOINT: frozenset({"action", "sequenceNumber", "subSequenceNumber", "error"}),
}
#: A line longer than this (bytes on the child's pipe) is skipped unread, in bounded memory
#: (a child's message is under 300 characters).
MAX_LINE_CHARS = 1 << 20
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1
#: What Java's ``String.trim`` removes: every character up to the space.
_JAVA_TRIM = "".join(map(chr, range(0x21)))


@dataclass(frozen=True)
class Status:
    """The child finished handling ``response_for``."""

    response_for: Optional[str]


@dataclass(frozen=True)
class CheckpointRequest:
    """The child asks to checkpoint; ``sequence_number`` None: at the last record given.

    ``sub_sequence_number`` is a str only when the child sent another script's digits
    (which Java reads as a number): the checkpointer refuses it."""

    sequence_number: Optional[str]
    sub_sequence_number: Union[int, str, None]


@dataclass(frozen=True)
class Skipped:
    """A line that is not a message, and why (for the log)."""

    reason: str


class _JsonNumber(str):
    """A JSON number's text as written: Jackson gives a string field that text."""


class _Unbindable(Exception):
    """A field Jackson would not bind: the line is skipped."""


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


_DECODER = json.JSONDecoder(
    parse_int=_JsonNumber, parse_float=_JsonNumber, parse_constant=_no_constant
)


def parse(line: str) -> Union[Status, CheckpointRequest, Skipped]:
    """One stripped, non-empty line of a child's stdout, as a message or :class:`Skipped`."""
    if len(line) > MAX_LINE_CHARS:
        return Skipped(f"over {MAX_LINE_CHARS} characters")
    try:
        obj, _ = _DECODER.raw_decode(line)
    except ValueError as exc:
        return Skipped(f"not JSON ({str(exc)[:80]})")
    except RecursionError:
        return Skipped("JSON nested too deep")
    if not isinstance(obj, dict):
        return Skipped(f"JSON {_kind(obj)}, not an object")
    action = obj.get("action")
    if not isinstance(action, str) or isinstance(action, _JsonNumber):
        return Skipped("no action" if action is None else "an action that is not a string")
    fields = _FIELDS.get(action)
    if fields is None:
        known = "the daemon's own action" if action in DAEMON_ACTIONS else "an unknown action"
        return Skipped(f"{known} {action[:50]!r}")
    unknown = sorted(set(obj) - fields)
    if unknown:
        return Skipped(f"unknown field {unknown[0][:50]!r} in {action}")
    try:
        if action == STATUS:
            return Status(_text(obj.get("responseFor")))
        _text(obj.get("error"))  # bound by Java, never used
        return CheckpointRequest(
            _text(obj.get("sequenceNumber")), _long(obj.get("subSequenceNumber"))
        )
    except _Unbindable as exc:
        return Skipped(f"{action}: {exc}")


def _kind(value: Any) -> str:
    """A decoded JSON value's type, in JSON's words."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, _JsonNumber):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _text(value: Any) -> Optional[str]:
    """A Java ``String`` field: a string, a number's text, ``true``/``false``, or null."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return str.__str__(value)  # a plain str, also from a _JsonNumber
    raise _Unbindable(f"a JSON {_kind(value)} where a string goes")


def _long(value: Any) -> Union[int, str, None]:
    """A Java ``Long`` field, with Jackson's coercions (see the module's docstring)."""
    if value is None:
        return None
    if isinstance(value, _JsonNumber):
        return _long_from_number(str.__str__(value))
    if isinstance(value, str):
        return _long_from_string(value)
    raise _Unbindable(f"subSequenceNumber is a JSON {_kind(value)}")


def _long_from_number(text: str) -> int:
    if not any(c in text for c in ".eE"):
        if len(text) <= 20 and _LONG_MIN <= int(text) <= _LONG_MAX:
            return int(text)
        raise _Unbindable(f"subSequenceNumber {text[:40]} is out of a long's range")
    number = float(text)  # a fraction: Jackson truncates it toward zero
    if not math.isfinite(number) or not -(2.0**63) <= number <= 2.0**63:
        raise _Unbindable(f"subSequenceNumber {text[:40]} is out of a long's range")
    return max(_LONG_MIN, min(_LONG_MAX, int(number)))


def _long_from_string(text: str) -> Union[int, str, None]:
    if text == "":
        return None  # Jackson: an empty string is null for a Long
    trimmed = text.strip(_JAVA_TRIM)
    if trimmed == "null":
        return None
    digits = trimmed[1:] if trimmed[:1] in "+-" else trimmed
    if digits and digits.isascii() and digits.isdigit():
        if len(digits) <= 19 and _LONG_MIN <= int(trimmed) <= _LONG_MAX:
            return int(trimmed)
        raise _Unbindable(f"subSequenceNumber {trimmed[:40]!r} is out of a long's range")
    if digits and digits.isdecimal() and len(digits) <= 19:
        return trimmed  # another script's digits: refused by the checkpointer
    raise _Unbindable(f"subSequenceNumber {trimmed[:40]!r} is not a number")
