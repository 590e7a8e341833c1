"""ISO-8601 timestamps and dates read the same on every supported Python.

``datetime.fromisoformat`` accepts the whole ISO-8601 profile only from Python 3.11; on
3.9 and 3.10 it reads back no more than ``isoformat()`` writes, so ``Z``, fractional
seconds of other than 3 or 6 digits, ``+hhmm`` offsets, basic and week dates all fail.
``Z`` is the commonest shape in JSON, and a payload field that fails to parse makes its
record corrupt: on those Pythons records would be lost to the corrupt column. Below 3.11
this module parses the 3.11 profile itself; from 3.11 it is the standard library's.

The other way round, 3.9 and 3.10 are lax where 3.11 is not (``+01:3000`` reads there as
``+01:30``), so below 3.11 their ``fromisoformat`` is not used at all: what this module
reads is what Python 3.11 documents (each part extended or basic throughout), never more
than 3.11 reads, and the same instant (``tests/fuzz/test_times.py`` checks both against
3.11's own parser).
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
# Offset: Z, or +hh[:mm[:ss[.f]]] or +hh[mm[ss[.f]]] (one form throughout, as 3.11).
_OFFSET = (
    r"(?P<zulu>Z)|(?P<sign>[+-])(?P<offset>\d{2}(?::\d{2}(?::\d{2}(?:[.,]\d+)?)?"
    r"|\d{2}(?:\d{2}(?:[.,]\d+)?)?)?)"
)
_CLOCK = re.compile(rf"{_TIME}(?:\s?(?:{_OFFSET}))?", re.ASCII)
_DATE_ONLY = re.compile(_DATE, re.ASCII)


def parse_datetime(text: str) -> dt.datetime:
    """``datetime.fromisoformat`` as Python 3.11 reads it, on any supported Python.

    Raises ``ValueError`` for text that is not ISO-8601, as the standard library does.
    """
    if _NATIVE:
        return dt.datetime.fromisoformat(text)
    cut = _date_length(text)
    day = _DATE_ONLY.fullmatch(text, 0, cut)
    clock = _CLOCK.fullmatch(text, cut + 1) if len(text) > cut else None  # any separator
    if not day or (len(text) > cut and not clock):
        raise ValueError(f"Invalid isoformat string: {text!r}")
    date = _date_of(day)
    if clock is None:
        return dt.datetime(date.year, date.month, date.day)
    fields = clock.groupdict()
    hour, minute, second, micros = _clock(fields["time"])
    return dt.datetime(
        date.year, date.month, date.day, hour, minute, second, micros, tzinfo=_offset(fields)
    )


def _date_length(text: str) -> int:
    """Where the date of ``text`` ends, as Python 3.11 decides it (a week date followed by
    a time is ambiguous: ``2026-W48-1000`` is week 48 at 10:00, not its Monday at 00:00)."""
    size = len(text)
    if size <= 8 or text[4] not in "-W":
        return min(size, 8)  # too short for more, or YYYYMMDD
    if text[4] == "W":  # YYYYWww or YYYYWwwd, then digits of the time
        end = 7
        while end < size and "0" <= text[end] <= "9":
            end += 1
        return end if end < 9 else 7 + end % 2
    if text[5] != "W":
        return 10  # YYYY-MM-DD
    if text[8] != "-":
        return 8  # YYYY-Www
    return 8 if size > 10 and "0" <= text[10] <= "9" else 10  # YYYY-Www-D


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


def _clock(text: Optional[str]) -> tuple:
    """(hours, minutes, seconds, microseconds) of ``hh[:mm[:ss[.f]]]`` or its basic form."""
    clock, _, fraction = (text or "").replace(",", ".").partition(".")
    digits = clock.replace(":", "")
    # Digits past the sixth are dropped, not rounded, as Python 3.11 does.
    micros = int((fraction or "0")[:6].ljust(6, "0"))
    return int(digits[0:2] or 0), int(digits[2:4] or 0), int(digits[4:6] or 0), micros


def _offset(f: dict) -> Optional[dt.tzinfo]:
    if f["zulu"]:
        return dt.timezone.utc
    if not f["sign"]:
        return None
    hours, minutes, seconds, micros = _clock(f["offset"])
    if not (hours or minutes or seconds):
        return dt.timezone.utc  # -00:00, +00:00:00.5: UTC, as 3.11 makes them
    delta = dt.timedelta(hours=hours, minutes=minutes, seconds=seconds, microseconds=micros)
    return dt.timezone(-delta if f["sign"] == "-" else delta)
