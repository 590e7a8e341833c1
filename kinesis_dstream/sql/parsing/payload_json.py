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
from ...json_text import NestingError, decode_bounded

#: The one JSON decoder (parsing, inferSchema, the Glue layer's record text).
decode_json = msgspec.json.decode

#: The deepest nesting of arrays and objects a JSON payload may have (``{"a": 1}`` is 1).
MAX_JSON_DEPTH = 100


class PayloadNestingError(KinesisDStreamError, NestingError):
    """A JSON payload nested deeper than :data:`MAX_JSON_DEPTH`; the message is the reason."""

    def __init__(self) -> None:
        NestingError.__init__(self, MAX_JSON_DEPTH)


def decode_json_payload(data: bytes) -> Any:
    """``data`` decoded (:data:`decode_json`); :class:`PayloadNestingError` when it nests
    deeper than :data:`MAX_JSON_DEPTH` (the one nesting rule: :mod:`kinesis_dstream.json_text`),
    msgspec's error when it is not JSON."""
    try:
        return decode_bounded(decode_json, data, MAX_JSON_DEPTH)
    except NestingError:
        raise PayloadNestingError() from None
