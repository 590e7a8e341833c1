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

import json
import re
from datetime import datetime, timedelta, timezone
from typing import Optional, Union

from ..esn import LATEST, SHARD_END, TRIM_HORIZON
from ..isotime import parse_datetime
from ..retrieval.reader import StartPosition

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
#: Java DateTimeFormatter letters -> strptime directives (zone letters handled apart).
_JAVA_TOKENS = [
    ("yyyy", "%Y"),
    ("uuuu", "%Y"),
    ("MM", "%m"),
    ("dd", "%d"),
    ("HH", "%H"),
    ("mm", "%M"),
    ("ss", "%S"),
    ("SSSSSS", "%f"),
    ("SSS", "%f"),
]
_JAVA_ZONE = re.compile(r"(Z{1,5}|X{1,5}|x{1,5}|z{1,4}|VV|O{1,4})")


class PositionError(ValueError):
    """A starting position or timestamp that cannot be understood; names option and value."""


def seq_position(sequence_number: str, sub_sequence_number: int) -> dict:
    return {"seq": str(sequence_number), "sub": int(sub_sequence_number)}


def ts_position(timestamp: datetime) -> dict:
    return {"ts": format_timestamp(timestamp)}


def format_timestamp(timestamp: datetime) -> str:
    """UTC ISO-8601 with microseconds: one spelling, so offsets compare as strings."""
    return timestamp.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_utc(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)


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
            f"{option}: {text!r} is not an ISO-8601 timestamp (e.g. 2023-08-30T19:00:05Z "
            "or 2023-08-30T19:00:05-08:00)"
        ) from None
    if parsed.tzinfo is None:
        raise PositionError(
            f"{option}: timestamp {text!r} has no zone; add Z or an offset like +00:00"
        )
    return parsed


def _databricks_timestamp(text: str, option: str) -> datetime:
    try:
        spec = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PositionError(f"{option}: {text!r} is not valid JSON ({exc.msg})") from None
    if not isinstance(spec, dict) or not isinstance(spec.get("at_timestamp"), str):
        raise PositionError(
            f'{option}: {text!r} must be a JSON object like {{"at_timestamp": '
            '"06/25/2020 10:23:45 PDT", "format": "MM/dd/yyyy HH:mm:ss ZZZ"}'
        )
    unknown = sorted(set(spec) - {"at_timestamp", "format"})
    if unknown:
        raise PositionError(f"{option}: unknown field(s) {unknown} in {text!r}")
    fmt = spec.get("format", DATABRICKS_DEFAULT_FORMAT)
    if not isinstance(fmt, str):
        raise PositionError(f"{option}: format must be a string, got {fmt!r}")
    return parse_java_format(spec["at_timestamp"], fmt, option)


def parse_java_format(value: str, pattern: str, option: str) -> datetime:
    """Parse ``value`` with a Java DateTimeFormatter pattern (the common letters)."""
    zones = _JAVA_ZONE.findall(pattern)
    if len(zones) != 1 or not pattern.rstrip().endswith(zones[0]):
        raise PositionError(
            f"{option}: format {pattern!r} must end with one zone field (Z, X, z...), so the "
            "timestamp means one instant"
        )
    prefix = pattern.rstrip()[: -len(zones[0])]
    body_pattern = prefix.rstrip()
    if prefix.endswith(" "):
        body, _, zone = value.strip().rpartition(" ")
    else:  # zone glued to the time, e.g. "...ss.SSSXXX"
        match = re.match(r"^(.*?)((?:UTC|GMT)?[+-]\d{2}:?\d{2}|[A-Za-z]{1,5})$", value.strip())
        if not match:
            raise PositionError(f"{option}: timestamp {value!r} does not match format {pattern!r}")
        body, zone = match.group(1), match.group(2)
    strptime_format = body_pattern.replace("'T'", "T")
    for java, python in _JAVA_TOKENS:
        strptime_format = strptime_format.replace(java, python)
    try:
        naive = datetime.strptime(body.strip(), strptime_format)
    except ValueError:
        raise PositionError(
            f"{option}: timestamp {value!r} does not match format {pattern!r}"
        ) from None
    return naive.replace(tzinfo=_zone(zone, value, option))


def _zone(zone: str, value: str, option: str) -> timezone:
    name = zone.strip().upper()
    if name in ZONE_ABBREVIATIONS:
        return timezone(timedelta(hours=ZONE_ABBREVIATIONS[name]))
    match = re.match(r"^(?:UTC|GMT)?([+-])(\d{2}):?(\d{2})$", name)
    if match:
        sign = 1 if match.group(1) == "+" else -1
        return timezone(sign * timedelta(hours=int(match.group(2)), minutes=int(match.group(3))))
    raise PositionError(
        f"{option}: unknown time zone {zone!r} in {value!r}; use an offset like -07:00 or one "
        f"of {', '.join(sorted(ZONE_ABBREVIATIONS))}"
    )


def now_utc() -> datetime:
    return datetime.now(timezone.utc)
