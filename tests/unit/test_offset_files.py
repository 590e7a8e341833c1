"""A corrupted offset or range end is one error naming where it was read (Spark's offset
log, an end store's file) and saying it is not a kinesis_dstream offset or end, with what
was wrong: never a KeyError, TypeError or AttributeError from deep in the source."""

from __future__ import annotations

import json
import os

import pytest

from kinesis_dstream.sql.config.end_store_options import EndStoreOptions
from kinesis_dstream.sql.config.options import SourceOptions
from kinesis_dstream.sql.driver.multi import MultiStreamRunner
from kinesis_dstream.sql.ends.opening import resolve_deferred
from kinesis_dstream.sql.ends.store import DirectoryEndStore, EndStoreError
from kinesis_dstream.sql.offsets import (
    MAX_END_BYTES,
    CorruptOffsetError,
    Offset,
    RangeEnd,
    ShardRange,
    make_offset,
)
from kinesis_dstream.sql.positions import SHARD_END, TRIM_HORIZON

GOOD = make_offset(
    "s",
    "q",
    3,
    {
        "shardId-0": {"seq": "4959", "sub": 2},
        "shardId-1": ShardRange({"ts": "2026-11-23T08:00:00.000000Z"}, 100, None),
        "shardId-2": SHARD_END,
    },
).to_json()


def with_shards(shards):
    return {**GOOD, "shards": shards}


@pytest.mark.parametrize(
    "value, what",
    [
        # the three: KeyError 'pos', TypeError, AttributeError before
        (with_shards({"shardId-0": {}}), "shard 'shardId-0': {} is not a position nor a range"),
        (None, "not an object"),
        (with_shards([]), "'shards' is not an object"),
        ({**GOOD, "v": 2}, "'v' is 2"),
        ({**GOOD, "gen": "3"}, "'gen' is '3', not an integer >= 0"),
        ({**GOOD, "stream": None}, "'stream' is not a string"),
        (with_shards({"a": {"pos": "LATEST"}}), "'LATEST' is not a shard position"),
        (with_shards({"a": {"pos": {"seq": 5, "sub": 0}}}), "'seq' is 5, not a sequence number"),
        (with_shards({"a": {"pos": {"seq": "5", "sub": True}}}), "'sub' is True"),
        (with_shards({"a": {"pos": {"ts": "yesterday"}}}), "'ts' is 'yesterday'"),
        (with_shards({"a": {"range": {"from": TRIM_HORIZON}}}), "'limit' is None"),
        (with_shards({"a": {"range": [1]}}), "a range is [1], not an object"),
        (
            with_shards({"a": {"range": {"from": TRIM_HORIZON, "limit": 1, "cutoff": 5}}}),
            "'cutoff' is 5",
        ),
    ],
)
def test_a_corrupted_offset_is_one_error_naming_where_and_what(value, what):
    with pytest.raises(CorruptOffsetError) as info:
        Offset.from_json(value, "offsets/7")
    message = str(info.value)
    assert message.startswith("offsets/7: not a kinesis_dstream offset (version 1): ")
    assert what in message, message


def test_the_offsets_the_library_writes_read_back():
    assert Offset.from_json(json.loads(json.dumps(GOOD))).to_json() == GOOD


def test_a_corrupted_offset_spark_hands_the_source_names_its_offset_log(tmp_path):
    # the runner's module needs PySpark's Data Source API (>= 4.2; 3.5 in the matrix)
    pytest.importorskip("pyspark.sql.streaming.datasource")
    from kinesis_dstream.sql.driver.runner import SourceRunner

    options = SourceOptions.parse({"streamName": "s", "region": "us-east-1"})
    runner = SourceRunner(options, DirectoryEndStore(str(tmp_path)), client=None)
    for call in (
        lambda: runner.latest_offset(with_shards({"shardId-0": {}}), None),
        lambda: runner.commit(None),
        lambda: runner.partitions(with_shards([])),
    ):
        with pytest.raises(CorruptOffsetError, match=r"^Spark's offset log .*, stream 's': not a"):
            call()
    several = MultiStreamRunner([runner])
    with pytest.raises(CorruptOffsetError, match=r"^Spark's offset log .*several streams"):
        several.latest_offset({"v": 1, "streams": [None]}, None)


END = RangeEnd(3, {"seq": "5", "sub": 0}, {"seq": "5", "sub": 0}, children=("c",))


@pytest.mark.parametrize(
    "text, what",
    [
        ("null", "not an object"),
        ("", "not JSON (Expecting value"),
        (json.dumps(END.to_json())[:-5], "not JSON"),
        ("[" * 1000 + "]" * 1000, "nested 1000 deep"),
        ('{"count": 1}', "'next':"),
        (json.dumps({**END.to_json(), "count": -1}), "'count' is -1"),
        (json.dumps({**END.to_json(), "children": "c"}), "'children' is 'c'"),
        (json.dumps({**END.to_json(), "throttled": "no"}), "'throttled' is 'no'"),
        (json.dumps({**END.to_json(), "last": 5}), "'last' is 5"),
        (json.dumps({**END.to_json(), "subscribedAt": "now"}), "'subscribedAt' is 'now'"),
        (json.dumps({**END.to_json(), "outsideShard": 1.5}), "'outsideShard' is 1.5"),
        ("x" * (MAX_END_BYTES + 1), f"at most {MAX_END_BYTES}"),
        ('{"count": NaN}', "NaN is not a JSON value"),
    ],
)
def test_a_corrupted_end_store_file_is_one_error_naming_the_file(tmp_path, text, what):
    store = DirectoryEndStore(str(tmp_path))
    key = "ab" + "0" * 38
    store.put_if_absent(key, END)
    assert store.get(key) == END
    path = os.path.join(str(tmp_path), "ab", key + ".json")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
    with pytest.raises(CorruptOffsetError) as info:
        store.get(key)
    message = str(info.value)
    assert message.startswith(f"end-store file {path}: not a kinesis_dstream range end")
    assert what in message, message
    assert len(message) < 500


@pytest.mark.parametrize("text", ["", "null", "[]", '{"metadataPath": 5}', "{" * 100])
def test_a_corrupted_place_file_of_the_glue_layer_names_the_file(tmp_path, text):
    place = tmp_path / "place.json"
    place.write_text(text)
    with pytest.raises(EndStoreError, match=f"place file {place} is not one forEachBatch writes"):
        resolve_deferred(EndStoreOptions("deferred", path=str(place)))
    place.write_text(json.dumps({"metadataPath": str(tmp_path / "ends")}))
    assert resolve_deferred(EndStoreOptions("deferred", path=str(place))).path == str(
        tmp_path / "ends"
    )
