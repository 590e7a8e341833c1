"""JSON from outside the process (an option, a checkpoint or end-store file), read within
bounds.

The standard library's parser recurses once per nesting level, so a document ~1,000
levels deep raises ``RecursionError`` (not a ``ValueError``), at a depth that depends on
the caller's stack. Here the nesting is counted before parsing and refused past
:data:`MAX_DEPTH`; ``NaN`` and ``Infinity`` (not JSON, though Python writes them) are
refused too. Every failure is a ``ValueError`` saying what was wrong; the caller names
the option or file.
"""

from __future__ import annotations

import json
import re
from typing import Any, Union

#: Deeper than any JSON the library reads or writes (its offsets nest 5 levels).
MAX_DEPTH = 32

# A string (skipped whole, so brackets inside it do not count) or a bracket.
_STRING_OR_BRACKET = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def nesting_depth(text: str) -> int:
    """The deepest nesting of arrays and objects in ``text`` (strings skipped)."""
    depth = deepest = 0
    for match in _STRING_OR_BRACKET.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif token in "]}":
            depth -= 1
    return deepest


def loads(text: Union[str, bytes], max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads`` within bounds; ``ValueError`` (one line, what was wrong) otherwise."""
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"not UTF-8 text (byte {exc.start})") from None
    depth = nesting_depth(text)
    if depth > max_depth:
        raise ValueError(f"JSON nested {depth} deep (at most {max_depth})")
    try:
        return json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    except ValueError as exc:  # a number past Python's digit limit, NaN
        reason = str(exc).split(";")[0]  # not the advice to raise Python's limit
        raise ValueError(f"not JSON the library reads ({reason})") from None
