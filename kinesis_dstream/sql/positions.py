"""Shard positions and the three connectors' spellings of a starting position.

A *position* is where a shard's next read starts, as a JSON value (it lives in Spark's
offset log, so it must be plain JSON with a fixed key order):

- ``"TRIM_HORIZON"``: the shard's oldest record;
- ``{"ts": "<ISO-8601 UTC>"}``: records that arrived at or after the timestamp. The
  ``latest`` option is pinned this way when the query starts (LATEST itself names a
  moving point, so records put before the first read, or while the driver is down,
  would be skipped);
- ``{"seq": "<sequence number>", "sub": n}``: records *after* this extended sequence
  number (the last included record, or ``WHOLE_RECORD``: every user record of it).
  ``sub`` -1 means "from this sequence number on, inclusive";
- ``"SHARD_END"``: the shard is closed and every record in it was read.

Resume *after* the last included position: that is where off-by-one bugs live, so every
conversion to a Kinesis iterator is here, in :func:`start_position`.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from typing import Any, Optional, Union

from ..errors import shown
from ..esn import LATEST, SHARD_END, TRIM_HORIZON, is_sequence_number
from ..isotime import parse_datetime
from ..retrieval.reader import StartPosition
from .config.connection import OptionError
from .config.option_values import json_value

__all__ = ["LATEST", "SHARD_END", "TRIM_HORIZON"]  # re-exported sentinels (see ..esn)

Position = Union[str, dict]

#: Zone abbreviations accepted in Databricks' default ``MM/dd/yyyy HH:mm:ss ZZZ`` format.
ZONE_ABBREVIATIONS = {
    "UTC": 0,
    "GMT": 0,
    "Z": 0,
    "EST": -5,
    "EDT": -4,
    "CST": -6,
    "CDT": -5,
    "MST": -7,
    "MDT": -6,
    "PST": -8,
    "PDT": -7,
    "CET": 1,
    "CEST": 2,
    "BST": 1,
    "IST": 5.5,
    "JST": 9,
}
DATABRICKS_DEFAULT_FORMAT = "MM/dd/yyyy HH:mm:ss ZZZ"
#: Java DateTimeFormatter letter runs -> strptime directives, and the field each sets
#: (a field given twice is refused, as strptime cannot read it). Zone letters are apart.
_JAVA_FIELDS = {
    "yyyy": ("%Y", "year"), "yyy": ("%Y", "year"), "y": ("%Y", "year"), "yy": ("%y", "year"),
    "uuuu": ("%Y", "year"), "uuu": ("%Y", "year"), "u": ("%Y", "year"), "uu": ("%y", "year"),
    "M": ("%m", "month"), "MM": ("%m", "month"), "MMM": ("%b", "month"), "MMMM": ("%B", "month"),
    "L": ("%m", "month"), "LL": ("%m", "month"), "LLL": ("%b", "month"), "LLLL": ("%B", "month"),
    "d": ("%d", "day"), "dd": ("%d", "day"), "D": ("%j", "day"), "DDD": ("%j", "day"),
    "E": ("%a", "weekday"), "EEE": ("%a", "weekday"), "EEEE": ("%A", "weekday"),
    "H": ("%H", "hour"), "HH": ("%H", "hour"), "h": ("%I", "hour"), "hh": ("%I", "hour"),
    "a": ("%p", "am/pm"),
    "m": ("%M", "minute"), "mm": ("%M", "minute"),
    "s": ("%S", "second"), "ss": ("%S", "second"),
}  # fmt: skip
_JAVA_FIELDS.update({"S" * n: ("%f", "fraction") for n in range(1, 7)})
#: Zone letters and the run lengths Java's DateTimeFormatter takes.
_JAVA_ZONES = {"Z": 5, "X": 5, "x": 5, "z": 4, "V": 2, "O": 4}
# A pattern's tokens: a quoted literal ('' is a quote), a run of one letter, anything else.
_JAVA_TOKEN = re.compile(r"'(?:[^']|'')*'?|([A-Za-z])\1*|[^A-Za-z']+")
#: A Kinesis sequence number (its API's pattern allows up to 129 digits).
_EXAMPLE_TS = "2026-11-23T08:00:00.000000Z"
#: Java's ZoneOffset: at most 18 hours from UTC.
MAX_ZONE_OFFSET = timedelta(hours=18)


class PositionError(OptionError):
    """A starting position or timestamp that cannot be understood; names option and value."""


def seq_position(sequence_number: str, sub_sequence_number: int) -> dict:
    return {"seq": str(sequence_number), "sub": int(sub_sequence_number)}


def ts_position(timestamp: datetime) -> dict:
    return {"ts": format_timestamp(timestamp)}


def format_timestamp(timestamp: datetime) -> str:
    """UTC ISO-8601 with microseconds: one spelling, so offsets compare as strings (the
    year written with 4 digits: strftime's ``%Y`` writes year 5 as ``5`` on Linux)."""
    utc = timestamp.astimezone(timezone.utc)
    return f"{utc.year:04d}-" + utc.strftime("%m-%dT%H:%M:%S.%fZ")


def instant(timestamp: datetime, text: str, option: str) -> datetime:
    """``timestamp`` (given as ``text``) when it is an instant the offsets can hold: in
    UTC, within years 1-9999; else the option's PositionError."""
    try:
        timestamp.astimezone(timezone.utc)
    except OverflowError:
        raise PositionError(
            f"{option}: timestamp {shown(text)} is out of range (years 1-9999 in UTC)"
        ) from None
    return timestamp


def epoch_ms_instant(text: str, option: str) -> datetime:
    """Milliseconds since the epoch (Kafka's timestamps) as an instant, in range."""
    try:
        return datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(milliseconds=int(text))
    except (OverflowError, ValueError):  # past a timedelta's or a datetime's range
        raise PositionError(
            f"{option}: {shown(text)} milliseconds since the epoch is out of range "
            "(years 1-9999); Kafka's timestamps are milliseconds, not micro- or nanoseconds"
        ) from None


def parse_utc(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)


def position_problem(value: Any) -> Optional[str]:
    """What makes ``value`` not a shard position as offsets and range ends hold one (see
    the module docstring); None when it is one."""
    if isinstance(value, str) and value in (TRIM_HORIZON, SHARD_END):
        return None
    if isinstance(value, dict) and set(value) == {"ts"}:
        try:
            parse_utc(value["ts"])
            return None
        except (TypeError, ValueError):
            return f"'ts' is {shown(value['ts'])}, not a UTC timestamp like {_EXAMPLE_TS}"
    if isinstance(value, dict) and set(value) == {"seq", "sub"}:
        seq, sub = value["seq"], value["sub"]
        if not is_sequence_number(seq):
            return f"'seq' is {shown(seq)}, not a sequence number (a string of digits)"
        if not (isinstance(sub, int) and not isinstance(sub, bool) and sub >= -1):
            return f"'sub' is {shown(sub)}, not an integer >= -1"
        return None
    return (
        f"{shown(value)} is not a shard position (TRIM_HORIZON, SHARD_END, "
        '{"ts": ...} or {"seq": ..., "sub": ...})'
    )


def start_position(position: Position) -> Optional[StartPosition]:
    """The reader's start for records after ``position``; None at SHARD_END."""
    if position == SHARD_END:
        return None
    if position == TRIM_HORIZON:
        return StartPosition.trim_horizon()
    if isinstance(position, dict) and "ts" in position:
        return StartPosition.at_timestamp(parse_utc(position["ts"]))
    if isinstance(position, dict) and "seq" in position:
        seq, sub = position["seq"], int(position["sub"])
        if sub < 0:
            return StartPosition.at_sequence_number(seq)
        return StartPosition.after_checkpoint(seq, sub)
    raise ValueError(f"not a shard position: {position!r}")


def describe(position: Position) -> str:
    """A position as a person reads it, for errors and logs."""
    if isinstance(position, dict) and "seq" in position:
        sub = position["sub"]
        return f"at {position['seq']}" if sub < 0 else f"after {position['seq']}/{sub}"
    if isinstance(position, dict) and "ts" in position:
        return f"AT_TIMESTAMP {position['ts']}"
    return str(position)


# -- the connectors' spellings of a starting position -----------------------------------


def parse_initial_position(value: str, option: str) -> Position:
    """``latest`` / ``trim_horizon`` / ``earliest`` or AT_TIMESTAMP in any connector's form.

    Databricks: ``{"at_timestamp": "06/25/2020 10:23:45 PDT", "format": "..."}``;
    awslabs: ``AT_TIMESTAMP 2023-08-30T19:00:05Z``; Glue: a bare ISO-8601 timestamp with
    an offset. A timestamp without a zone is refused: it would mean different instants
    on the driver and on the executors.
    """
    text = value.strip()
    word = text.upper()
    if word == "LATEST":
        return LATEST
    if word in ("TRIM_HORIZON", "EARLIEST"):
        return TRIM_HORIZON
    if text.startswith("{"):
        return ts_position(_databricks_timestamp(text, option))
    if word.startswith("AT_TIMESTAMP"):
        rest = text[len("AT_TIMESTAMP") :].strip()
        if not rest:
            raise PositionError(f"{option}: {value!r} needs a timestamp: AT_TIMESTAMP <ISO-8601>")
        return ts_position(parse_iso(rest, option))
    if text[:1].isdigit():
        return ts_position(parse_iso(text, option))
    raise PositionError(
        f"{option}: {value!r} is not a starting position; use latest, trim_horizon, earliest, "
        'AT_TIMESTAMP <ISO-8601>, an ISO-8601 timestamp, or {"at_timestamp": "...", '
        '"format": "..."}'
    )


def parse_iso(text: str, option: str) -> datetime:
    """ISO-8601 with a zone (``Z`` or ``+hh:mm``); fractional seconds allowed."""
    raw = text.strip()
    candidate = raw[:-1] + "+00:00" if raw.endswith(("Z", "z")) else raw
    try:
        parsed = parse_datetime(candidate)
    except ValueError:
        raise PositionError(
            f"{option}: {shown(text)} is not an ISO-8601 timestamp (e.g. "
            "2023-08-30T19:00:05Z or 2023-08-30T19:00:05-08:00)"
        ) from None
    if parsed.tzinfo is None:
        raise PositionError(
            f"{option}: timestamp {shown(text)} has no zone; add Z or an offset like +00:00"
        )
    return instant(parsed, text, option)


def _databricks_timestamp(text: str, option: str) -> datetime:
    spec = json_value(text, option, error=PositionError)
    if not isinstance(spec, dict) or not isinstance(spec.get("at_timestamp"), str):
        raise PositionError(
            f'{option}: {shown(text)} must be a JSON object like {{"at_timestamp": '
            '"06/25/2020 10:23:45 PDT", "format": "MM/dd/yyyy HH:mm:ss ZZZ"}'
        )
    unknown = sorted(set(spec) - {"at_timestamp", "format"})
    if unknown:
        raise PositionError(f"{option}: unknown field(s) {shown(unknown)} in {shown(text)}")
    fmt = spec.get("format", DATABRICKS_DEFAULT_FORMAT)
    if not isinstance(fmt, str):
        raise PositionError(f"{option}: format must be a string, got {shown(fmt)}")
    return parse_java_format(spec["at_timestamp"], fmt, option)


def parse_java_format(value: str, pattern: str, option: str) -> datetime:
    """Parse ``value`` with a Java DateTimeFormatter pattern (the common letters)."""
    tokens = [m.group() for m in _JAVA_TOKEN.finditer(pattern.rstrip())]
    zones = [i for i, t in enumerate(tokens) if t[0] in _JAVA_ZONES]
    if (
        len(zones) != 1
        or zones[0] != len(tokens) - 1
        or len(tokens[-1]) > _JAVA_ZONES[tokens[-1][0]]
    ):
        raise PositionError(
            f"{option}: format {shown(pattern)} must end with one zone field (Z, X, z...), "
            "so the timestamp means one instant"
        )
    body_pattern = _strptime_format(tokens[:-1], pattern, option)
    if tokens[:-1] and tokens[-2].endswith(" "):
        body, _, zone = value.strip().rpartition(" ")
    else:  # zone glued to the time, e.g. "...ss.SSSXXX"
        match = re.match(
            r"^(.*?)((?:UTC|GMT)?[+-]\d{2}:?\d{2}|[A-Za-z]{1,5})$", value.strip(), re.ASCII
        )
        if not match:
            raise PositionError(
                f"{option}: timestamp {shown(value)} does not match format {shown(pattern)}"
            )
        body, zone = match.group(1), match.group(2)
    try:
        naive = datetime.strptime(body.strip(), body_pattern.strip())
    except ValueError:
        raise PositionError(
            f"{option}: timestamp {shown(value)} does not match format {shown(pattern)}"
        ) from None
    return instant(naive.replace(tzinfo=_zone(zone, value, option)), value, option)


def _strptime_format(tokens: list, pattern: str, option: str) -> str:
    """strptime's format for a Java pattern's tokens (its zone apart)."""
    parts, fields = [], set()
    for token in tokens:
        if token[0] == "'":  # a quoted literal; '' is a quote, in one or not
            if len(token) < 2 or not token.endswith("'"):
                raise PositionError(f"{option}: format {shown(pattern)} leaves a quote open")
            literal = "'" if token == "''" else token[1:-1].replace("''", "'")
            parts.append(literal.replace("%", "%%"))
        elif token[0].isalpha():
            directive, field = _JAVA_FIELDS.get(token, (None, None))
            if directive is None:
                raise PositionError(
                    f"{option}: format {shown(pattern)}: {token!r} is not a field this source "
                    f"reads ({', '.join(sorted(_JAVA_FIELDS, key=str.lower)[:12])}...)"
                )
            if field in fields:
                raise PositionError(f"{option}: format {shown(pattern)} gives the {field} twice")
            fields.add(field)
            parts.append(directive)
        else:
            parts.append(token.replace("%", "%%"))
    return "".join(parts)


def _zone(zone: str, value: str, option: str) -> timezone:
    name = zone.strip().upper()
    if name in ZONE_ABBREVIATIONS:
        return timezone(timedelta(hours=ZONE_ABBREVIATIONS[name]))
    match = re.match(r"^(?:UTC|GMT)?([+-])(\d{2}):?(\d{2})$", name, re.ASCII)
    if match:
        offset = timedelta(hours=int(match.group(2)), minutes=int(match.group(3)))
        if int(match.group(3)) >= 60 or offset > MAX_ZONE_OFFSET:
            raise PositionError(
                f"{option}: zone offset {zone!r} in {shown(value)} is out of range (at most "
                "18:00 from UTC, as Java's ZoneOffset)"
            )
        return timezone(offset if match.group(1) == "+" else -offset)
    raise PositionError(
        f"{option}: unknown time zone {shown(zone)} in {shown(value)}; use an offset like "
        f"-07:00 or one of {', '.join(sorted(ZONE_ABBREVIATIONS))}"
    )


def now_utc() -> datetime:
    return datetime.now(timezone.utc)
