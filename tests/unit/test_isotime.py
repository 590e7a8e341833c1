"""ISO-8601 text reads the same on every supported Python (kinesis_dstream/isotime.py).

Python 3.9 and 3.10's ``fromisoformat`` refuses ``Z``, 1-, 2-, 4- and 5-digit fractions,
``+hhmm`` and basic dates; a JSON or CSV payload's ``2026-11-23T08:00:00Z`` was then a
corrupt record there. Each case runs twice: through the function as this Python uses it,
and through the pre-3.11 parser (forced), so the fallback is checked on every Python.
"""

from __future__ import annotations

import datetime as dt
import json

import pytest
from pyspark.sql.types import StructField, StructType, TimestampType

from kinesis_dstream import isotime
from kinesis_dstream.sql.parsing.payload import (
    CORRUPT_RECORD_COLUMN,
    PayloadFormat,
    infer_schema,
    output_schema,
    parse_batch,
)
from kinesis_dstream.sql.positions import parse_iso

from .test_payload import records

UTC = dt.timezone.utc
T0 = dt.datetime(2026, 11, 23, 8, 0, tzinfo=UTC)


@pytest.fixture(params=["this Python", "pre-3.11 parser"])
def parser(request, monkeypatch):
    if request.param == "pre-3.11 parser":
        monkeypatch.setattr(isotime, "_NATIVE", False)
    return isotime


@pytest.mark.parametrize(
    "text, expected",
    [
        ("2026-11-23T08:00:00Z", T0),
        ("2026-11-23T08:00:00+00:00", T0),
        ("2026-11-23T08:00:00+0000", T0),
        ("2026-11-23T08:00:00+00", T0),
        ("2026-11-23T09:30:00+01:30", T0.astimezone(dt.timezone(dt.timedelta(minutes=90)))),
        ("2026-11-23T00:00:00-0800", T0.astimezone(dt.timezone(dt.timedelta(hours=-8)))),
        ("2026-11-23T08:00:00.5Z", T0.replace(microsecond=500000)),
        ("2026-11-23T08:00:00.123Z", T0.replace(microsecond=123000)),
        ("2026-11-23T08:00:00.123456Z", T0.replace(microsecond=123456)),
        ("2026-11-23T08:00:00.123456789Z", T0.replace(microsecond=123456)),  # truncated
        ("2026-11-23T08:00:00,25+00:00", T0.replace(microsecond=250000)),
        ("2026-11-23 08:00:00Z", T0),
        ("20261123T080000Z", T0),
        ("2026-W48-1T08:00Z", T0),
        ("2026-11-23T08:00:00", T0.replace(tzinfo=None)),
        ("2026-11-23T08", T0.replace(tzinfo=None)),
        ("2026-11-23", dt.datetime(2026, 11, 23)),
        # a week date, then a time: 3.11 reads week 48's Monday at 08:00
        ("2026-W48-0800", T0.replace(tzinfo=None)),
        ("2026-11-23T08:00:00-00:00:00.5", T0),  # zero hours, minutes and seconds: UTC
    ],
)
def test_iso_timestamps_as_python_3_11_reads_them(parser, text, expected):
    parsed = parser.parse_datetime(text)
    assert parsed == expected
    assert parsed.utcoffset() == expected.utcoffset()


@pytest.mark.parametrize(
    "text",
    [
        "2026-11-23T08:00:00z",  # lower-case z: refused by 3.11 too (parse_iso accepts it)
        "2026-11-23T24:00:00",
        "2026-02-30T08:00:00Z",
        "2026-11-23T08:0000",  # extended and basic mixed
        "2026-1123",
        "2026-11-23T08:00:00+24:00",
        "23/11/2026 08:00",
        "",
        # an offset's extended and basic forms mixed: 3.11 refuses them, 3.9 and 3.10's
        # fromisoformat read the first as +01:30
        "2026-11-23T10:00:00+01:3000",
        "2026-11-23T10:00:00+0130:00",
    ],
)
def test_what_is_not_iso_8601_is_a_value_error(parser, text):
    with pytest.raises(ValueError):
        parser.parse_datetime(text)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("2026-11-23", dt.date(2026, 11, 23)),
        ("20261123", dt.date(2026, 11, 23)),
        ("2026-W48-1", dt.date(2026, 11, 23)),
    ],
)
def test_iso_dates(parser, text, expected):
    assert parser.parse_date(text) == expected


def test_a_date_with_a_time_is_not_a_date(parser):
    with pytest.raises(ValueError):
        parser.parse_date("2026-11-23T08:00:00Z")


def test_json_timestamps_in_every_common_shape_are_read_not_corrupt(parser):
    payload = StructType([StructField("at", TimestampType())])
    schema = output_schema(payload, [])
    shapes = ["2026-11-23T08:00:00Z", "2026-11-23T08:00:00+00:00", "2026-11-23T08:00:00.000Z"]
    n = len(shapes)
    batch = records([json.dumps({"at": s}).encode() for s in shapes])
    out, corrupt = parse_batch(
        batch, PayloadFormat.parse("json", "(given as a StructType here)"), schema, []
    )
    assert corrupt == 0
    assert out.column("at").to_pylist() == [T0] * n
    assert out.column(CORRUPT_RECORD_COLUMN).to_pylist() == [None] * n


def test_csv_inference_takes_a_z_timestamp_for_a_timestamp(parser):
    fmt = PayloadFormat.parse("csv", None, ",", True)
    assert infer_schema([b"2026-11-23T08:00:00Z,2026-11-23T08:00:00.5+0100"], fmt) == (
        "`_c0` timestamp, `_c1` timestamp"
    )


def test_a_starting_position_with_z_and_a_fraction(parser):
    assert parse_iso("2026-11-23T08:00:00.25z", "startingPosition") == T0.replace(
        microsecond=250000
    )
