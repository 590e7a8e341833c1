"""Parsing one option's value, with the option's name (as the user spelled it) in errors.

``found`` is :func:`.options.canonical_options`' result: canonical name -> (spelling
used, value). Each parser returns the default when the option was not given.
"""

from __future__ import annotations

import re
from typing import Optional

from ...spark_conf import parse_time_ms
from .connection import OptionError

_BYTES = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?i?b?)\s*$")
_BYTE_UNITS = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def int_value(found: dict, name: str, default: int, low: int, high: Optional[int] = None) -> int:
    if name not in found:
        return default
    key, value = found[name]
    try:
        number = int(str(value).strip())
    except ValueError:
        raise OptionError(f"option {key!r}: {value!r} is not an integer") from None
    if number < low or (high is not None and number > high):
        bound = f"in [{low}, {high}]" if high is not None else f">= {low}"
        raise OptionError(f"option {key!r} must be {bound}, got {number}")
    return number


def float_value(found: dict, name: str, low: float, high: float) -> Optional[float]:
    if name not in found:
        return None
    key, value = found[name]
    try:
        number = float(str(value).strip())
    except ValueError:
        raise OptionError(f"option {key!r}: {value!r} is not a number") from None
    if not low < number <= high:
        raise OptionError(f"option {key!r} must be in ({low}, {high}], got {number}")
    return number


def bool_value(found: dict, name: str, default: bool) -> bool:
    if name not in found:
        return default
    key, value = found[name]
    text = str(value).strip().lower()
    if text not in ("true", "false"):
        raise OptionError(f"option {key!r} must be true or false, got {value!r}")
    return text == "true"


def time_ms(found: dict, name: str, default_ms: float, unit_ms: float = 1.0) -> float:
    """A Spark time string ("10s", "400ms"); a bare number is in ``unit_ms`` units."""
    if name not in found:
        return default_ms
    key, value = found[name]
    try:
        if re.match(r"^\s*\d+(\.\d+)?\s*$", str(value)):
            return float(str(value)) * unit_ms
        return parse_time_ms(value, f"option {key!r}")
    except ValueError as exc:
        raise OptionError(str(exc)) from None


def positive_time_ms(found: dict, name: str, default_ms: float, unit_ms: float = 1.0) -> float:
    value = time_ms(found, name, default_ms, unit_ms)
    if value <= 0:
        raise OptionError(f"option {found[name][0]!r} must be > 0, got {found[name][1]!r}")
    return value


def bytes_value(found: dict, name: str) -> Optional[int]:
    """A byte string as Databricks writes it: "20gb", "10mb", "512k", or a number."""
    if name not in found:
        return None
    key, value = found[name]
    match = _BYTES.match(str(value).lower())
    if not match:
        raise OptionError(f"option {key!r}: {value!r} is not a size (e.g. '10mb', '2gb')")
    number = int(float(match.group(1)) * _BYTE_UNITS[match.group(2)[:1]])
    if number < 1:
        raise OptionError(f"option {key!r} must be > 0, got {value!r}")
    return number


def optional_int(found: dict, name: str, low: int, high: int) -> Optional[int]:
    return int_value(found, name, 0, low, high) if name in found else None
