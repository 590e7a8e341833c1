"""ISO-8601 timestamps and dates read the same on every supported Python.

``datetime.fromisoformat`` accepts the whole ISO-8601 profile only from Python 3.11; on
3.9 and 3.10 it reads back no more than ``isoformat()`` writes, so ``Z``, fractional
seconds of other than 3 or 6 digits, ``+hhmm`` offsets, basic and week dates all fail.
``Z`` is the commonest shape in JSON, and a payload field that fails to parse makes its
record corrupt: on those Pythons records would be lost to the corrupt column. Below 3.11
this module parses the 3.11 profile itself; from 3.11 it is the standard library's.
"""

from __future__ import annotations

import datetime as dt
import re
import sys
from typing import Optional

_NATIVE = sys.version_info >= (3, 11)

# Date: extended (2026-11-23, 2026-W48-1) or basic (20261123, 2026W481), one form throughout.
_DATE = (
    r"(?P<year>\d{4})(?:"
    r"-(?P<month>\d{2})-(?P<day>\d{2})|(?P<bmonth>\d{2})(?P<bday>\d{2})"
    r"|-W(?P<week>\d{2})(?:-(?P<weekday>\d))?|W(?P<bweek>\d{2})(?P<bweekday>\d)?)"
)
# Time: hh[:mm[:ss[.f]]] or hh[mm[ss[.f]]]; any number of fraction digits, '.' or ','.
_TIME = r"(?P<time>\d{2}(?::\d{2}(?::\d{2}(?:[.,]\d+)?)?|\d{2}(?:\d{2}(?:[.,]\d+)?)?)?)"
_OFFSET = (
    r"(?P<zulu>Z)|(?P<sign>[+-])(?P<ohour>\d{2})(?::?(?P<ominute>\d{2})"
    r"(?::?(?P<osecond>\d{2})(?:[.,](?P<ofraction>\d{1,6}))?)?)?"
)
_DATETIME = re.compile(rf"{_DATE}(?:.{_TIME}(?:\s?(?:{_OFFSET}))?)?", re.ASCII | re.DOTALL)
_DATE_ONLY = re.compile(_DATE, re.ASCII)


def parse_datetime(text: str) -> dt.datetime:
    """``datetime.fromisoformat`` as Python 3.11 reads it, on any supported Python.

    Raises ``ValueError`` for text that is not ISO-8601, as the standard library does.
    """
    if _NATIVE:
        return dt.datetime.fromisoformat(text)
    try:
        return dt.datetime.fromisoformat(text)  # the fast path: isoformat()'s own output
    except ValueError:
        pass
    match = _DATETIME.fullmatch(text)
    if not match:
        raise ValueError(f"Invalid isoformat string: {text!r}")
    date = _date_of(match)
    fields = match.groupdict()
    clock, _, fraction = (fields["time"] or "").replace(",", ".").partition(".")
    digits = clock.replace(":", "")
    return dt.datetime(
        date.year,
        date.month,
        date.day,
        int(digits[0:2] or 0),
        int(digits[2:4] or 0),
        int(digits[4:6] or 0),
        _micros(fraction),
        tzinfo=_offset(fields),
    )


def parse_date(text: str) -> dt.date:
    """``date.fromisoformat`` as Python 3.11 reads it (basic and week dates too)."""
    if _NATIVE:
        return dt.date.fromisoformat(text)
    match = _DATE_ONLY.fullmatch(text)
    if not match:
        raise ValueError(f"Invalid isoformat string: {text!r}")
    return _date_of(match)


def _date_of(match: re.Match) -> dt.date:
    f = match.groupdict()
    year = int(f["year"])
    week = f["week"] or f["bweek"]
    if week:
        return dt.date.fromisocalendar(year, int(week), int(f["weekday"] or f["bweekday"] or 1))
    return dt.date(year, int(f["month"] or f["bmonth"]), int(f["day"] or f["bday"]))


def _micros(fraction: Optional[str]) -> int:
    # Digits past the sixth are dropped, not rounded, as Python 3.11 does.
    return int((fraction or "0")[:6].ljust(6, "0"))


def _offset(f: dict) -> Optional[dt.tzinfo]:
    if f["zulu"]:
        return dt.timezone.utc
    if not f["sign"]:
        return None
    delta = dt.timedelta(
        hours=int(f["ohour"]),
        minutes=int(f["ominute"] or 0),
        seconds=int(f["osecond"] or 0),
        microseconds=_micros(f["ofraction"]),
    )
    return dt.timezone(-delta if f["sign"] == "-" else delta)
