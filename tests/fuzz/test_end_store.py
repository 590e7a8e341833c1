"""Files the source and the Glue layer read back: range ends in an end-store directory
(written by the store itself, then corrupted), the Glue layer's place file, and the keys
of a checkpoint restored from S3.

The rule (docs/reliability.md#options-positions-and-files): a range end the runner can
use, or one error naming the file and saying it is not a kinesis_dstream range end (or
place file); a restored key lands inside the checkpoint or is refused; never another
exception, never more read than a range end can be.
"""

from __future__ import annotations

import os
import tempfile

from hypothesis import given
from hypothesis import strategies as st

from kinesis_dstream.glue.streaming.checkpoint_plan import restored_path
from kinesis_dstream.sql.config.end_store_options import EndStoreOptions
from kinesis_dstream.sql.config.options import OptionError
from kinesis_dstream.sql.ends.opening import resolve_deferred
from kinesis_dstream.sql.ends.store import DirectoryEndStore, EndStoreError
from kinesis_dstream.sql.offsets import MAX_END_BYTES, CorruptOffsetError, RangeEnd
from kinesis_dstream.sql.positions import describe, start_position

from .json_mutations import json_values, mutated_document
from .test_offsets import positions

KEY = "ab" + "0" * 38

ends = st.builds(
    RangeEnd,
    count=st.integers(0, 10**6),
    next=positions,
    last=st.none() | st.builds(dict, seq=st.integers(0, 10**40).map(str), sub=st.integers(0, 99)),
    shard_end=st.booleans(),
    children=st.lists(st.text(min_size=1, max_size=20), max_size=2).map(tuple),
    millis_behind_latest=st.none() | st.integers(0, 10**9),
    throttled=st.booleans(),
    stopped_at_cutoff=st.booleans(),
    caught_up=st.booleans(),
    outside_shard=st.integers(0, 100),
    max_consumer_lag_ms=st.none() | st.integers(0, 10**9),
    subscribed_at=st.none() | st.floats(0, 2e9),
    next_iterator=st.none() | st.text(max_size=40),
)


def file_contents() -> st.SearchStrategy:
    """A range end's file as the store writes it, corrupted; or any bytes."""
    written = ends.map(lambda end: end.to_json()).flatmap(mutated_document)
    return st.one_of(
        # a lone surrogate the text edits put in is written as the bytes it would be
        written.map(lambda text: text.encode("utf-8", "surrogatepass")),
        st.binary(max_size=200),
        json_values.map(lambda value: repr(value).encode()),
        st.integers(1, 3000).map(lambda n: b"[" * n),
        st.just(b" " * (MAX_END_BYTES + 1)),
    )


@given(ends)
def test_the_ends_the_store_writes_read_back(end):
    with tempfile.TemporaryDirectory() as root:
        store = DirectoryEndStore(root)
        assert store.put_if_absent(KEY, end) == end
        assert store.get(KEY) == end


@given(ends, file_contents())
def test_a_corrupted_end_store_file_is_a_range_end_or_one_error_naming_it(end, data):
    with tempfile.TemporaryDirectory() as root:
        store = DirectoryEndStore(root)
        store.put_if_absent(KEY, end)
        path = os.path.join(root, KEY[:2], KEY + ".json")
        with open(path, "wb") as handle:
            handle.write(data)
        try:
            read = store.get(KEY)
        except CorruptOffsetError as exc:
            message = str(exc)
            assert message.startswith(f"end-store file {path}: not a kinesis_dstream range end")
            assert len(message) < 1000
            return
    start_position(read.next)  # what the runner does with it
    describe(read.next)
    assert RangeEnd.from_json(read.to_json()) == read


@given(st.one_of(st.binary(max_size=100), json_values.map(lambda v: repr(v).encode())))
def test_the_glue_layers_place_file_names_a_place_or_is_one_error_naming_it(data):
    with tempfile.TemporaryDirectory() as root:
        path = os.path.join(root, "place.json")
        with open(path, "wb") as handle:
            handle.write(data)
        try:
            place = resolve_deferred(EndStoreOptions("deferred", path=path))
        except EndStoreError as exc:
            assert f"place file {path}" in str(exc)
            return
        except OptionError as exc:  # a place that is no directory nor S3
            assert "the range ends' place" in str(exc)
            return
    assert place.kind in ("local", "s3")


segments = st.sampled_from(["..", ".", "", "offsets", "0", "commits", "kinesis-ends", "a\x00b"])


@given(st.lists(segments | st.text(max_size=8), max_size=6).map("/".join))
def test_a_restored_checkpoint_key_lands_inside_the_checkpoint_or_is_refused(key):
    root = "/tmp/checkpoint-root"
    try:
        path = restored_path(root, "prefix", "prefix/" + key, ("kinesis-ends",))
    except ValueError as exc:
        assert "is not a path inside the checkpoint" in str(exc)
        return
    if path is not None:
        assert os.path.commonpath([root, os.path.normpath(path)]) == root
        assert "\x00" not in path
