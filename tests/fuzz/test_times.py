"""Times from outside the process: ISO-8601 text (payload fields, options), the three
connectors' starting positions, Kafka's epoch milliseconds, Databricks' Java formats.

The rule (docs/reliability.md#options-positions-and-files): a position or an instant
the offsets can hold, or the option's PositionError naming it; never another exception.
Below Python 3.11 :mod:`kinesis_dstream.isotime` reads ISO-8601 itself: it must never
read what 3.11 refuses, nor read another instant than 3.11 does.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kinesis_dstream import isotime
from kinesis_dstream.sql.config.options import OptionError
from kinesis_dstream.sql.positions import (
    LATEST,
    TRIM_HORIZON,
    PositionError,
    epoch_ms_instant,
    parse_initial_position,
    position_problem,
    start_position,
)

from .json_mutations import mutated_text

OPTION = "option 'initialPosition'"


@contextlib.contextmanager
def pre_311_reader():
    """isotime as it reads below Python 3.11 (its own parser), on this Python."""
    native = isotime._NATIVE
    isotime._NATIVE = False
    try:
        yield
    finally:
        isotime._NATIVE = native


def two(low: int = 0, high: int = 99) -> st.SearchStrategy:
    """Two digits, the lowest often (an offset of zero hours, minutes and seconds)."""
    return st.integers(low, high).map(lambda n: f"{n:02d}") | st.just(f"{low:02d}")


# -- ISO-8601 text: the documented profile, then anything near it ----------------------

years = st.integers(1, 9999).map(lambda n: f"{n:04d}")
dates = st.one_of(
    st.tuples(years, two(1, 12), two(1, 28)).map(lambda p: "-".join(p)),
    st.tuples(years, two(1, 12), two(1, 28)).map("".join),
    st.tuples(years, two(1, 52), st.integers(1, 7)).map(lambda p: f"{p[0]}-W{p[1]}-{p[2]}"),
    st.tuples(years, two(1, 52), st.integers(1, 7)).map(lambda p: f"{p[0]}W{p[1]}{p[2]}"),
)
fractions = st.tuples(st.sampled_from(".,"), st.text("0123456789", min_size=1, max_size=9)).map(
    "".join
)


@st.composite
def clocks(draw, hour_high: int = 23, mixed: bool = False) -> str:
    """hh, hh:mm, hh:mm:ss[.f] or the basic forms, one form throughout (``mixed``: each
    separator drawn apart, as in ``+01:3000``, which 3.11 refuses)."""
    parts = [draw(two(0, hour_high)), draw(two(0, 59)), draw(two(0, 59))]
    count = draw(st.integers(1, 3))
    separator = draw(st.sampled_from([":", ""]))
    text = parts[0]
    for part in parts[1:count]:
        text += (draw(st.sampled_from([":", ""])) if mixed else separator) + part
    if count == 3 and draw(st.booleans()):
        text += draw(fractions)
    return text


zones = st.one_of(
    st.just(""),
    st.just("Z"),
    st.tuples(st.sampled_from("+-"), clocks(hour_high=23)).map("".join),
)
well_formed = st.one_of(
    dates,
    st.tuples(dates, st.sampled_from("T t"), clocks(), zones).map("".join),
)


mixed_forms = st.tuples(
    dates,
    st.sampled_from("T "),
    clocks(),
    st.sampled_from("+-"),
    clocks(mixed=True),
).map("".join)


#: Well-formed or mixed-form text with characters inserted, removed or replaced.
near_iso = (well_formed | mixed_forms).flatmap(
    lambda text: (
        st.just(text)
        | mutated_text(text, st.sampled_from("0123456789:+-.,TZWz ") | st.characters())
    )
)


def same_instant(ours: dt.datetime, theirs: dt.datetime) -> bool:
    return ours == theirs and ours.utcoffset() == theirs.utcoffset()


needs_311 = pytest.mark.skipif(
    sys.version_info < (3, 11), reason="compares with Python 3.11's fromisoformat"
)


@needs_311
@given(well_formed)
def test_the_pre_311_reader_reads_the_documented_profile_as_311_does(text):
    theirs = dt.datetime.fromisoformat(text)
    with pre_311_reader():
        ours = isotime.parse_datetime(text)
    assert same_instant(ours, theirs)


@needs_311
@given(st.one_of(mixed_forms, near_iso, st.text(max_size=40)))
def test_the_pre_311_reader_never_reads_what_311_refuses_nor_another_instant(text):
    with pre_311_reader():
        try:
            ours = isotime.parse_datetime(text)
        except ValueError:
            return  # refused: 3.11 may read a few undocumented shapes ("10:30:00.Z")
    theirs = dt.datetime.fromisoformat(text)  # raises if 3.11 refuses what we read
    assert same_instant(ours, theirs)


# -- starting positions: every connector's spelling ------------------------------------


def java_value(moment: dt.datetime, zone: str) -> tuple:
    return moment.strftime("%m/%d/%Y %H:%M:%S") + " " + zone, "MM/dd/yyyy HH:mm:ss ZZZ"


@st.composite
def positions(draw) -> str:
    """Starting positions as the docs show them (library-valid), sometimes mutated."""
    moment = draw(st.datetimes(dt.datetime(1, 1, 2), dt.datetime(9999, 12, 30)))
    iso = moment.isoformat() + draw(st.sampled_from(["Z", "+00:00", "-08:00", "+05:30", ""]))
    zone = draw(st.sampled_from(["PDT", "UTC", "+02:00", "-0700", "+99:00", "XYZ"]))
    value, pattern = java_value(moment, zone)
    pattern = draw(
        st.sampled_from(
            [pattern, "MMMM dd yyyy HH:mm:ss ZZZ", "yyyy-MM-dd'T'HH:mm:ssXXX", "MMMM MM yyyy Z"]
        )
        | st.text(max_size=30)
    )
    spelled = draw(
        st.sampled_from(
            [
                "latest",
                "TRIM_HORIZON",
                "earliest",
                iso,
                f"AT_TIMESTAMP {iso}",
                json.dumps({"at_timestamp": value}),
                json.dumps({"at_timestamp": value, "format": pattern}),
            ]
        )
    )
    return draw(st.just(spelled) | mutated_text(spelled, st.text(max_size=3)))


@given(st.one_of(positions(), st.text(max_size=60), st.from_regex(r"\{.*\}", fullmatch=True)))
def test_a_starting_position_is_a_position_or_the_options_error(text):
    try:
        position = parse_initial_position(text, OPTION)
    except PositionError as exc:
        assert isinstance(exc, OptionError)
        assert str(exc).startswith(OPTION)
        assert len(str(exc)) < 1000
        return
    if position not in (LATEST, TRIM_HORIZON):
        assert position_problem(position) is None  # what the offsets can hold
        assert start_position(position).iterator_type == "AT_TIMESTAMP"


@given(st.one_of(st.integers(-(10**30), 10**30), st.integers()).map(str))
def test_epoch_milliseconds_are_an_instant_or_the_options_error(text):
    try:
        moment = epoch_ms_instant(text, "option 'endingTimestamp'")
    except PositionError as exc:
        assert "'endingTimestamp'" in str(exc) and "out of range" in str(exc)
        return
    assert moment.tzinfo is not None and 1 <= moment.year <= 9999
