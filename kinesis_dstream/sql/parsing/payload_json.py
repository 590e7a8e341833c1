"""JSON payloads: the one decoder, and the bound on how deep a payload may nest.

msgspec decodes (a declared dependency; several times faster than the stdlib's): a
payload decodes to the same values on every machine, whatever else is installed.
Integers of any size stay ints, as with the stdlib; NaN and Infinity, which JSON does not
have, make a payload corrupt.

Nesting is bounded: the decoder, the converters and schema inference recurse once per
level on the thread's stack (and PySpark's schema parsing several frames per level), so
a payload nested a thousand deep would raise ``RecursionError`` from whichever ran out
first and fail the whole read task, or ``load()`` under inferSchema. A payload nested
deeper than :data:`MAX_JSON_DEPTH` is one corrupt record instead, with the reason
:class:`PayloadNestingError` gives. (Spark's JSON reader, through Jackson, takes 1,000.)
"""

from __future__ import annotations

from typing import Any

import msgspec

from ...errors import KinesisDStreamError

#: The one JSON decoder (parsing, inferSchema, the Glue layer's record text).
decode_json = msgspec.json.decode

#: The deepest nesting of arrays and objects a JSON payload may have (``{"a": 1}`` is 1).
MAX_JSON_DEPTH = 100
#: The shortest payload nesting past the bound, less one: ``[[...]]``, 101 pairs.
_SHORTEST_TOO_DEEP = 2 * (MAX_JSON_DEPTH + 1) - 1


class PayloadNestingError(KinesisDStreamError, ValueError):
    """A JSON payload nested deeper than :data:`MAX_JSON_DEPTH`; the message is the reason."""

    def __init__(self) -> None:
        super().__init__(f"JSON nests deeper than {MAX_JSON_DEPTH} levels")


def decode_json_payload(data: bytes) -> Any:
    """``data`` decoded (:data:`decode_json`); :class:`PayloadNestingError` when it nests
    deeper than :data:`MAX_JSON_DEPTH`, msgspec's error when it is not JSON."""
    try:
        value = decode_json(data)
    except RecursionError:  # deeper than the stack allows: past the bound too
        raise PayloadNestingError() from None
    # A payload nesting past the bound is at least that many bracket pairs long, and holds
    # that many opening brackets: a length and two byte counts (C, no per-byte Python)
    # spare the walk for nearly every payload.
    if (
        len(data) > _SHORTEST_TOO_DEEP
        and data.count(b"[") + data.count(b"{") > MAX_JSON_DEPTH
        and _deeper_than(value, MAX_JSON_DEPTH)
    ):
        raise PayloadNestingError()
    return value


def _deeper_than(value: Any, bound: int) -> bool:
    """Whether a decoded value nests deeper than ``bound``: a walk with a list, not the
    stack (it must not recurse on what it is measuring)."""
    pending = [(value, 1)] if isinstance(value, (dict, list)) else []
    while pending:
        item, depth = pending.pop()
        children = item.values() if isinstance(item, dict) else item
        if depth > bound:
            return True
        pending.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))
    return False
