"""Offsets as Spark's offset log hands them back: the offsets the library writes (its
``to_json``), mutated, and any JSON.

The rule (docs/reliability.md#options-positions-and-files): an offset every part of the
source can use (its positions start a read, its ranges have keys), or one
CorruptOffsetError naming where it was read and saying it is not a kinesis_dstream
offset; never another exception.
"""

from __future__ import annotations

import json
from datetime import timezone

from hypothesis import given
from hypothesis import strategies as st

from kinesis_dstream.sql.driver.multi import split_offset
from kinesis_dstream.sql.offsets import (
    CorruptOffsetError,
    Offset,
    ShardRange,
    make_offset,
    range_key,
)
from kinesis_dstream.sql.positions import (
    SHARD_END,
    TRIM_HORIZON,
    describe,
    format_timestamp,
    seq_position,
    start_position,
    ts_position,
)

from .json_mutations import json_values, mutated_json

WHERE = "offsets/9"

sequence_numbers = st.integers(0, 10**56).map(str)
positions = st.one_of(
    st.just(TRIM_HORIZON),
    st.just(SHARD_END),
    st.datetimes(timezones=st.just(timezone.utc)).map(ts_position),
    st.tuples(sequence_numbers, st.integers(-1, 2**31)).map(lambda p: seq_position(*p)),
)
entries = st.one_of(
    positions,
    st.builds(
        ShardRange,
        positions,
        st.integers(0, 10**6),
        st.none() | st.datetimes().map(format_timestamp),
    ),
)
#: Offsets as the source writes them.
written = st.builds(
    make_offset,
    st.text(min_size=1, max_size=8),
    st.text(min_size=1, max_size=16),
    st.integers(0, 2**40),
    st.dictionaries(st.text(min_size=1, max_size=20), entries, max_size=5),
).map(lambda offset: offset.to_json())


def assert_usable(offset: Offset) -> None:
    """What the runner and the executors do with an offset's parts."""
    for shard_id, entry in offset.shards:
        if isinstance(entry, ShardRange):
            range_key(offset, shard_id, entry)
            entry = entry.start
        start_position(entry)
        describe(entry)
    assert Offset.from_json(json.loads(json.dumps(offset.to_json()))) == offset


@given(written)
def test_the_offsets_the_library_writes_read_back(value):
    assert_usable(Offset.from_json(value, WHERE))


@given(st.one_of(written.flatmap(mutated_json), json_values))
def test_a_mutated_offset_is_usable_or_one_error_naming_where(value):
    try:
        offset = Offset.from_json(value, WHERE)
    except CorruptOffsetError as exc:
        message = str(exc)
        assert message.startswith(f"{WHERE}: not a kinesis_dstream offset (version 1): ")
        assert len(message) < 1000
        return
    assert_usable(offset)


@given(st.one_of(st.lists(written, max_size=3).map(lambda parts: {"v": 1, "streams": parts})
                 .flatmap(mutated_json), json_values))  # fmt: skip
def test_a_mutated_offset_of_several_streams_splits_or_is_one_error(value):
    try:
        parts = split_offset(value, WHERE)
    except CorruptOffsetError as exc:
        assert str(exc).startswith(f"{WHERE}: not a kinesis_dstream offset of several streams")
        return
    for part in parts:
        try:
            assert_usable(Offset.from_json(part, WHERE))
        except CorruptOffsetError:
            pass
