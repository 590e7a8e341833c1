"""Parsing one option's value, with the option's name (as the user spelled it) in errors.

``found`` is :func:`.options.canonical_options`' result: canonical name -> (spelling
used, value). Each parser returns the default when the option was not given.

This is the one place a hostile number, time or JSON becomes the option's error: a
number past Java's ``long`` (the JVM connectors read integers and sizes as longs), a
time no thread can wait, JSON nested past :data:`~kinesis_dstream.json_text.MAX_DEPTH`
are each an :class:`OptionError` naming the option, never an ``OverflowError`` or a
``RecursionError``, whichever option takes them. An error shows at most
:data:`~kinesis_dstream.errors.SHOWN_CHARS` characters of a value.
"""

from __future__ import annotations

import re
import threading
from typing import Any, Optional

from ... import json_text
from ...errors import shown
from ...spark_conf import parse_time_ms
from .connection import OptionError

_BYTES = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?i?b?)\s*$", re.ASCII)
_BYTE_UNITS = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
_INTEGER = re.compile(r"[+-]?[0-9]+", re.ASCII)
#: Java's Long.MAX_VALUE: the JVM connectors refuse a larger integer, size or time.
JAVA_LONG_MAX = 2**63 - 1
#: The longest wait a Python thread can make (threading.TIMEOUT_MAX: ~292 years), in ms.
MAX_TIME_MS = threading.TIMEOUT_MAX * 1000.0


def json_value(text: str, option: str, example: str = "", error: type = OptionError) -> Any:
    """The JSON of an option (``option``: how errors name it, e.g. "option 'x'"), read
    within :mod:`~kinesis_dstream.json_text`'s bounds; ``error`` (an OptionError) names
    the option, the value and what was wrong, then ``example``."""
    try:
        return json_text.loads(text)
    except ValueError as exc:
        hint = f"; e.g. {example}" if example else ""
        raise error(f"{option}: {shown(text)} is {exc}{hint}") from None


def int_value(found: dict, name: str, default: int, low: int, high: int = JAVA_LONG_MAX) -> int:
    if name not in found:
        return default
    key, value = found[name]
    text = str(value).strip()
    bound = (
        f"in [{low}, {high}]" if high != JAVA_LONG_MAX else f">= {low} (and a Java long: <= {high})"
    )
    try:
        number = int(text)
    except ValueError:
        if _INTEGER.fullmatch(text):  # past Python's digit limit for int()
            raise OptionError(f"option {key!r} must be {bound}, got {shown(text)}") from None
        raise OptionError(f"option {key!r}: {shown(value)} is not an integer") from None
    if not low <= number <= high:
        raise OptionError(f"option {key!r} must be {bound}, got {shown(text)}")
    return number


def float_value(found: dict, name: str, low: float, high: float) -> Optional[float]:
    if name not in found:
        return None
    key, value = found[name]
    try:
        number = float(str(value).strip())
    except ValueError:
        raise OptionError(f"option {key!r}: {shown(value)} is not a number") from None
    if not low < number <= high:  # also refuses nan
        raise OptionError(f"option {key!r} must be in ({low}, {high}], got {number}")
    return number


def bool_value(found: dict, name: str, default: bool) -> bool:
    if name not in found:
        return default
    key, value = found[name]
    text = str(value).strip().lower()
    if text not in ("true", "false"):
        raise OptionError(f"option {key!r} must be true or false, got {shown(value)}")
    return text == "true"


def time_ms(found: dict, name: str, default_ms: float, unit_ms: float = 1.0) -> float:
    """A Spark time string ("10s", "400ms"); a bare number is in ``unit_ms`` units."""
    if name not in found:
        return default_ms
    key, value = found[name]
    try:
        if re.match(r"^\s*\d+(\.\d+)?\s*$", str(value), re.ASCII):
            millis = float(str(value)) * unit_ms
        else:
            millis = parse_time_ms(value, f"option {key!r}")
    except ValueError as exc:
        raise OptionError(str(exc)) from None
    if not millis <= MAX_TIME_MS:  # also refuses inf and nan
        raise OptionError(
            f"option {key!r}: {shown(value)} is longer than any wait ({MAX_TIME_MS / 3.6e6:.0f} h)"
        )
    return millis


def positive_time_ms(found: dict, name: str, default_ms: float, unit_ms: float = 1.0) -> float:
    value = time_ms(found, name, default_ms, unit_ms)
    if value <= 0:
        raise OptionError(f"option {found[name][0]!r} must be > 0, got {shown(found[name][1])}")
    return value


def bytes_value(found: dict, name: str) -> Optional[int]:
    """A byte string as Databricks writes it: "20gb", "10mb", "512k", or a number."""
    if name not in found:
        return None
    key, value = found[name]
    match = _BYTES.match(str(value).lower())
    if not match:
        raise OptionError(f"option {key!r}: {shown(value)} is not a size (e.g. '10mb', '2gb')")
    size = float(match.group(1)) * _BYTE_UNITS[match.group(2)[:1]]
    if not 1 <= size <= JAVA_LONG_MAX:  # also refuses inf
        raise OptionError(
            f"option {key!r} must be in [1, {JAVA_LONG_MAX}] bytes (a Java long), got "
            f"{shown(value)}"
        )
    return int(size)


def optional_int(found: dict, name: str, low: int, high: int) -> Optional[int]:
    return int_value(found, name, 0, low, high) if name in found else None
