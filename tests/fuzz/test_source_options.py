"""Options of the source, the sink and a batch read: the three connectors' names with the
values their documents show, mutated, and hostile values (numbers past a Java long,
JSON nested a thousand deep, digits that are not ASCII, times no thread can wait).

The rule (docs/reliability.md#options-positions-and-files): parsed options, or one
OptionError naming the option as the user spelled it; never another exception, never a
message past a few lines.
"""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from kinesis_dstream.sql.batch.bounds import BatchBounds
from kinesis_dstream.sql.config.options import OptionError, SinkOptions, SourceOptions

from ..unit.test_option_table import (
    AWSLABS_SINK,
    AWSLABS_SOURCE,
    DATABRICKS_SOURCE,
    GLUE_SINK,
    GLUE_SOURCE,
)
from .json_mutations import mutated_text

BASE = {"streamName": "s", "region": "us-east-1"}
#: Kafka's names for a batch read's bounds, as its documents show them.
BATCH = {
    "startingOffsets": ('{"s": {"shardId-000000000000": "49590338271490256608559692538361"}}', {}),
    "endingOffsets": ('{"s": {"shardId-000000000000": "latest"}}', {}),
    "startingTimestamp": ("1764244800000", {}),
    "endingTimestamp": ("2026-11-27T13:00:00+01:00", {}),
}
#: A class path is imported (awslabs' credentialProviderClass): never a random module.
IMPORTED = {"credentialProviderClass", "kinesis.credentialProviderClass"}
#: Glue's payload options: their hostile values are the payload parsers' (tests/fuzz of
#: stream payloads); here they are documented or mutated.
PAYLOAD = {"classification", "schema", "inferSchema", "delimiter", "avroSchema"}
#: Longest message: the unknown-option error lists every known name.
MAX_MESSAGE = 4000

UNITS = ["s", "ms", "min", "h", "d", "us", "kb", "gb", "tb", "x"]
#: Short edits of a documented value.
edited = st.text(max_size=2)
hostile = st.one_of(
    st.sampled_from(["", " ", "-1", "0", "nan", "inf", "-inf", "1e999", "1_000", "\u0663"]),
    st.integers(1, 2000).map(lambda n: "9" * n),
    st.integers(1, 1500).map(lambda n: "[" * n + "]" * n),
    st.integers(1, 1500).map(lambda n: '{"s": ' * n + "1" + "}" * n),
    st.tuples(
        st.integers(0, 10**30),
        st.sampled_from(["s", "ms", "min", "h", "d", "us", "kb", "gb", "tb", "x"]),
    ).map(lambda pair: f"{pair[0]}{pair[1]}"),
    st.sampled_from(["+99:00", "-18:01", "+01:3000", "0001-01-01T00:00:00+01:00"]),
    st.text(max_size=40),
    st.binary(max_size=20).map(lambda b: b.decode("latin-1")),
)


@st.composite
def option_maps(draw, tables: tuple) -> dict:
    """BASE plus documented options (and what they need), some values mutated or hostile,
    sometimes an option name no connector has."""
    table = {name: entry for t in tables for name, entry in t.items()}
    options = dict(BASE)
    for name in draw(st.lists(st.sampled_from(sorted(table)), min_size=1, max_size=4)):
        value, needs = table[name]
        options.update(needs)
        if name in IMPORTED:
            options[name] = draw(st.sampled_from([value, ".x.Y", "a..b", "", "x"]))
        elif name in PAYLOAD:
            options[name] = draw(st.just(value) | mutated_text(value, edited))
        else:
            options[name] = draw(st.just(value) | mutated_text(value, edited) | hostile)
    if draw(st.integers(0, 9)) == 0:
        options[draw(st.text(min_size=1, max_size=12))] = draw(hostile)
    return options


def assert_the_options_error(exc: OptionError, options: dict) -> None:
    message = str(exc)
    assert "option" in message, message
    assert len(message) <= MAX_MESSAGE, message[:300]


@given(option_maps((DATABRICKS_SOURCE, AWSLABS_SOURCE, GLUE_SOURCE)))
def test_source_options_parse_or_are_the_options_error(options):
    try:
        parsed = SourceOptions.parse(options)
    except OptionError as exc:
        assert_the_options_error(exc, options)
        return
    assert parsed.connection.stream_names
    for millis in (parsed.min_fetch_period_ms, parsed.describe_shard_interval_ms):
        assert 0 <= millis <= 9.3e15  # a wait a thread can make


@given(option_maps((AWSLABS_SINK, GLUE_SINK)))
def test_sink_options_parse_or_are_the_options_error(options):
    try:
        SinkOptions.parse(options)
    except OptionError as exc:
        assert_the_options_error(exc, options)


@given(option_maps((BATCH, DATABRICKS_SOURCE)), st.sampled_from([("s",), ("s", "t")]))
def test_batch_bounds_parse_or_are_the_options_error(options, streams):
    try:
        bounds = BatchBounds.parse(options, streams)
    except OptionError as exc:
        assert_the_options_error(exc, options)
        return
    for _, seq in bounds.end_shards:
        assert seq is None or (seq.isascii() and seq.isdigit())


@given(st.recursive(st.none() | st.text(max_size=5) | st.integers(), st.lists, max_leaves=30))
def test_any_json_as_starting_offsets_is_read_or_the_options_error(value):
    options = {**BASE, "startingOffsets": json.dumps({"s": {"shardId-0": value}})}
    try:
        BatchBounds.parse(options, ("s",))
    except OptionError as exc:
        assert "'startingOffsets'" in str(exc)
