"""JSON from outside the process (an option, a checkpoint or end-store file), read within
bounds.

JSON decoders recurse once per nesting level, so a document ~1,000 levels deep raises
``RecursionError`` (not a ``ValueError``), at a depth that depends on the caller's stack.
:func:`decode_bounded` is the one nesting rule, for payloads (msgspec, a record past the
bound is corrupt: ``sql/parsing/payload_json.py``) and for options and files
(:func:`loads`, the stdlib's parser, refused past :data:`MAX_DEPTH`); ``NaN`` and
``Infinity`` (not JSON, though Python writes them) are refused too. Every failure is a
``ValueError`` saying what was wrong; the caller names the option, file or record.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable, Optional, Union

#: Deeper than any JSON the library reads or writes (its offsets nest 5 levels).
MAX_DEPTH = 32


class NestingError(ValueError):
    """JSON nested deeper than its reader's bound; the message says so."""

    def __init__(self, max_depth: int, depth: Optional[int] = None) -> None:
        super().__init__(
            f"JSON nested {depth} deep (at most {max_depth})"
            if depth
            else f"JSON nests deeper than {max_depth} levels"
        )
        self.max_depth = max_depth


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


# Inside a string an escape is two characters and brackets do not count; outside, only
# quotes and brackets do. One pass over these tokens (a string's body is never rescanned).
_TOKEN = re.compile(r'\\.|["\[\]{}]', re.DOTALL)


def nesting_depth(text: str) -> int:
    """The deepest nesting of arrays and objects in JSON ``text`` (strings skipped), in one
    linear pass: for naming a document refused by :func:`decode_bounded`."""
    depth = deepest = 0
    in_string = False
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token == '"':
            in_string = not in_string
        elif in_string or token[0] == "\\":
            continue
        elif token in "[{":
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


def deeper_than(value: Any, bound: int) -> bool:
    """Whether a decoded value nests arrays and objects deeper than ``bound`` (``{"a": 1}``
    is 1): a walk with a list, not the stack (it must not recurse on what it measures)."""
    pending = [(value, 1)] if isinstance(value, (dict, list)) else []
    while pending:
        item, depth = pending.pop()
        if depth > bound:
            return True
        children = item.values() if isinstance(item, dict) else item
        pending.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))
    return False


def decode_bounded(decode: Callable[[Any], Any], data: Any, max_depth: int) -> Any:
    """``decode(data)`` (a JSON decoder: msgspec's for payloads, the stdlib's for options
    and files), :class:`NestingError` where ``data`` nests deeper than ``max_depth``.

    Decoders recurse once per level, so a document a thousand deep raises
    ``RecursionError`` (not a ``ValueError``) at a depth that depends on the caller's stack:
    that is past the bound too. A document nesting past the bound holds more than that
    many opening brackets and is at least twice as long: a length and two byte counts (in
    C) spare the walk for nearly every document."""
    try:
        value = decode(data)
    except RecursionError:
        raise NestingError(max_depth) from None
    array, obj = ("[", "{") if isinstance(data, str) else (b"[", b"{")
    if (
        len(data) > 2 * max_depth + 1
        and data.count(array) + data.count(obj) > max_depth
        and deeper_than(value, max_depth)
    ):
        raise NestingError(max_depth)
    return value


def loads(text: Union[str, bytes], max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads`` within bounds; ``ValueError`` (one line, what was wrong) otherwise."""
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"not UTF-8 text (byte {exc.start})") from None
    try:
        return decode_bounded(
            lambda t: json.loads(t, parse_constant=_refuse_constant), text, max_depth
        )
    except NestingError:  # named with the depth found (a scan of the text: cold path)
        raise NestingError(max_depth, nesting_depth(text)) from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    except ValueError as exc:  # a number past Python's digit limit, NaN
        reason = str(exc).split(";")[0]  # not the advice to raise Python's limit
        raise ValueError(f"not JSON the library reads ({reason})") from None
