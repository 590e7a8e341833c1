import pickle
from datetime import datetime, timezone

import pytest

from kinesis_dstream import KinesisRecord


def make(data=b"x" * 100):
    return KinesisRecord(
        data=data,
        partition_key="pk",
        sequence_number="49590338271490256608559692538361571095921575989136588898",
        sub_sequence_number=3,
        explicit_hash_key="42",
        approximate_arrival_timestamp=datetime(2026, 11, 21, tzinfo=timezone.utc),
        shard_id="shardId-000000000000",
        stream_name="s",
    )


def test_record_is_immutable():
    record = make()
    with pytest.raises(AttributeError):
        record.data = b"y"


def test_record_pickles_to_an_equal_record():
    record = make()
    assert pickle.loads(pickle.dumps(record)) == record


def test_repr_truncates_data_and_shows_its_length():
    text = repr(make(b"a" * 1000))
    assert "...(1000 bytes)" in text
    assert "a" * 33 not in text
    assert "sub_sequence_number=3" in text and "shardId-000000000000" in text


def test_short_data_is_shown_whole():
    assert "data=b'hi')" in repr(make(b"hi"))


def test_defaults_describe_a_plain_record():
    record = KinesisRecord(b"d", "pk", "1")
    assert record.sub_sequence_number == 0
    assert record.explicit_hash_key is None
