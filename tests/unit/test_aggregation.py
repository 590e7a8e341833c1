"""KPL aggregation: interop with aws-kinesis-agg both ways, round trips, the KCL's rules."""

import base64
import hashlib
from datetime import datetime, timezone

import pytest
from aws_kinesis_agg import deaggregator as agg_deaggregator
from aws_kinesis_agg.aggregator import RecordAggregator as AggRecordAggregator
from hypothesis import given, settings
from hypothesis import strategies as st

from kinesis_dstream.kpl import (
    MAGIC,
    MAX_HASH_KEY,
    AggregatedRecord,
    DeaggregationStats,
    RecordAggregator,
    ShardMap,
    deaggregate,
    effective_hash_key,
    is_aggregated,
)

ARRIVAL = datetime(2026, 11, 21, 12, 0, tzinfo=timezone.utc)


def outer(
    data,
    partition_key="outer-pk",
    sequence_number="49000000000000000000000000000000000000000000000000000001",
):
    return {
        "Data": data,
        "PartitionKey": partition_key,
        "SequenceNumber": sequence_number,
        "ApproximateArrivalTimestamp": ARRIVAL,
    }


def ours_aggregate(user_records, **kwargs):
    aggregator = RecordAggregator(**kwargs)
    entries = []
    for data, key, ehk in user_records:
        entries += aggregator.add(data, key, ehk)
    return entries + aggregator.flush()


def their_aggregates(user_records, max_size=1024 * 1024):
    aggregator = AggRecordAggregator(max_size=max_size)
    entries = []
    for data, key, ehk in user_records:
        done = aggregator.add_user_record(key, data, ehk)
        if done is not None:
            entries.append(done.get_contents())
    if aggregator.get_num_user_records():
        entries.append(aggregator.clear_and_get().get_contents())
    return [outer(data, pk, str(n)) for n, (pk, _ehk, data) in enumerate(entries)]


def encode(body_message):
    body = body_message.SerializeToString()
    return MAGIC + body + hashlib.md5(body).digest()


def hand_built(partition_keys, explicit_hash_keys, *records):
    """An aggregate with exactly these tables and records (dicts of Record fields)."""
    message = AggregatedRecord()
    message.partition_key_table.extend(partition_keys)
    message.explicit_hash_key_table.extend(explicit_hash_keys)
    for fields in records:
        message.records.add(**fields)
    return encode(message)


def user_view(records):
    return [(r.data, r.partition_key, r.explicit_hash_key) for r in records]


SAMPLE = [
    (f"payload-{i}".encode() * (i % 5), f"key-{i % 13}", str(i * 7919) if i % 4 == 0 else None)
    for i in range(250)
]


# -- interop -------------------------------------------------------------------------


def test_aws_kinesis_agg_aggregates_decode_with_ours_to_the_same_user_records():
    # aws-kinesis-agg writes an explicit hash key index only for records that have one.
    records = their_aggregates(SAMPLE, max_size=4096)
    assert len(records) > 1
    ours = deaggregate(records)
    assert user_view(ours) == SAMPLE
    by_aggregate = {}
    for r in ours:
        by_aggregate.setdefault(r.sequence_number, []).append(r.sub_sequence_number)
    assert all(subs == list(range(len(subs))) for subs in by_aggregate.values())


def test_ours_decode_with_aws_kinesis_agg():
    entries = ours_aggregate(SAMPLE, max_bytes=4096)
    assert len(entries) > 1 and all(is_aggregated(e["Data"]) for e in entries)
    records = [outer(e["Data"], e["PartitionKey"], str(n)) for n, e in enumerate(entries)]
    theirs = list(agg_deaggregator.iter_deaggregate_records(records, data_format="Boto3"))
    # aws-kinesis-agg reads index 0 of the key table when the index field is absent (a
    # known bug), so compare explicit hash keys only where we wrote one.
    assert [
        (base64.b64decode(t["kinesis"]["data"]), t["kinesis"]["partitionKey"]) for t in theirs
    ] == [(d, k) for d, k, _ in SAMPLE]
    for t, (_, _, ehk) in zip(theirs, SAMPLE):
        if ehk is not None:
            assert t["kinesis"]["explicitHashKey"] == ehk


def test_our_aggregates_parse_with_the_plain_protobuf_message():
    entry = ours_aggregate(SAMPLE[:10])[0]
    message = AggregatedRecord.FromString(entry["Data"][4:-16])
    assert len(message.records) == 10
    assert list(message.partition_key_table) == [f"key-{i}" for i in range(10)]


# -- round trips (property tests) ----------------------------------------------------

keys = st.text(min_size=1, max_size=256)
hash_keys = st.integers(min_value=0, max_value=MAX_HASH_KEY).map(str)
user_records = st.lists(
    st.tuples(st.binary(max_size=2000), keys, st.one_of(st.none(), hash_keys)),
    min_size=1,
    max_size=60,
)


@settings(max_examples=150, deadline=None)
@given(user_records, st.integers(min_value=200, max_value=20_000))
def test_round_trip_any_keys_data_and_sizes(records, max_bytes):
    entries = ours_aggregate(records, max_bytes=max_bytes)
    for e in entries:
        size = len(e["Data"]) + len(e["PartitionKey"].encode())
        if is_aggregated(e["Data"]):
            assert size <= max_bytes
    got = deaggregate([outer(e["Data"], e["PartitionKey"], str(n)) for n, e in enumerate(entries)])
    assert [(d, k) for d, k, _ in user_view(got)] == [(d, k) for d, k, _ in records]
    for user, (_, _, ehk) in zip(got, records):
        entry = entries[int(user.sequence_number)]
        if is_aggregated(entry["Data"]):
            assert user.explicit_hash_key == ehk  # carried inside the aggregate
        else:
            assert entry.get("ExplicitHashKey") == ehk  # sent plain: on the outer record


def test_an_aggregate_can_fill_the_one_mib_limit_exactly():
    from kinesis_dstream.kpl import MAX_AGGREGATE_BYTES

    records = [(bytes([i % 251]) * 9000, f"k{i}", None) for i in range(200)]
    entries = ours_aggregate(records, max_bytes=MAX_AGGREGATE_BYTES)
    sizes = [len(e["Data"]) + len(e["PartitionKey"]) for e in entries]
    assert max(sizes) <= MAX_AGGREGATE_BYTES
    assert sizes[0] > MAX_AGGREGATE_BYTES - 9100  # no room left for one more record
    got = deaggregate([outer(e["Data"], e["PartitionKey"], str(n)) for n, e in enumerate(entries)])
    assert [(r.data, r.partition_key) for r in got] == [(d, k) for d, k, _ in records]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.binary(max_size=300), keys), min_size=1, max_size=200))
def test_grouped_by_shard_every_user_record_is_kept_by_its_shard(records):
    shard_map = ShardMap(
        [
            ("shardId-0", 0, 2**126 - 1),
            ("shardId-1", 2**126, 2**127 - 1),
            ("shardId-2", 2**127, MAX_HASH_KEY),
        ]
    )
    entries = ours_aggregate([(d, k, None) for d, k in records], shard_map=shard_map)
    got = []
    for n, e in enumerate(entries):
        shard_id, start, end = shard_map.shard_for(
            effective_hash_key(e["PartitionKey"], e.get("ExplicitHashKey"))
        )
        got += deaggregate(
            [outer(e["Data"], e["PartitionKey"], str(n))], start, end, shard_id=shard_id
        )
    assert sorted((r.data, r.partition_key) for r in got) == sorted(records)


def test_size_and_count_limits_split_aggregates():
    entries = ours_aggregate([(b"x" * 100, f"k{i}", None) for i in range(1000)], max_bytes=5000)
    assert all(len(e["Data"]) + len(e["PartitionKey"]) <= 5000 for e in entries)
    assert len(entries) >= 1000 * 100 // 5000
    counted = ours_aggregate([(b"x", f"k{i}", None) for i in range(10)], max_records=3)
    assert [len(deaggregate([outer(e["Data"], e["PartitionKey"])])) for e in counted] == [
        3,
        3,
        3,
        1,
    ]


def test_a_record_too_big_to_share_goes_plain_and_single_records_are_not_wrapped():
    entries = ours_aggregate([(b"a", "k1", None), (b"b" * 60_000, "k2", "77"), (b"c", "k3", None)])
    assert entries[0] == {"Data": b"a", "PartitionKey": "k1"}
    assert entries[1] == {"Data": b"b" * 60_000, "PartitionKey": "k2", "ExplicitHashKey": "77"}
    assert entries[2] == {"Data": b"c", "PartitionKey": "k3"}


def test_key_tables_are_deduplicated():
    entry = ours_aggregate([(b"d", "same", "5")] * 50)[0]
    message = AggregatedRecord.FromString(entry["Data"][4:-16])
    assert list(message.partition_key_table) == ["same"]
    assert list(message.explicit_hash_key_table) == ["5"]


# -- corrupt input: the KCL's outcome for each rule -----------------------------------


def good_aggregate():
    return ours_aggregate([(b"one", "a", None), (b"two", "b", None)])[0]["Data"]


def assert_passed_through_plain(data):
    stats = DeaggregationStats()
    [record] = deaggregate([outer(data)], stats=stats)
    assert (record.data, record.partition_key, record.sub_sequence_number) == (data, "outer-pk", 0)
    return stats


def test_plain_records_pass_with_sub_sequence_zero():
    [record] = deaggregate([outer(b"just data")], shard_id="shardId-000000000001", stream_name="s")
    assert record.sub_sequence_number == 0 and record.shard_id == "shardId-000000000001"
    assert record.approximate_arrival_timestamp == ARRIVAL


def test_bad_md5_passes_the_outer_record_through():
    data = good_aggregate()
    assert_passed_through_plain(data[:-1] + bytes([data[-1] ^ 1]))


def test_truncated_aggregate_passes_through():
    assert_passed_through_plain(good_aggregate()[:-5])
    assert_passed_through_plain(MAGIC + b"\x00" * 16)  # nothing but a digest after the magic
    assert_passed_through_plain(MAGIC[:3])


def test_unparsable_protobuf_with_a_good_md5_passes_through():
    body = b"\x1a\xff\xff\xff"  # a length past the end
    assert_passed_through_plain(MAGIC + body + hashlib.md5(body).digest())


def test_missing_required_field_passes_through():
    body = b"\x0a\x01k" + b"\x1a\x03\x1a\x01x"  # a record without partition_key_index
    assert_passed_through_plain(MAGIC + body + hashlib.md5(body).digest())


def test_missing_required_field_in_a_slow_path_record_passes_through():
    body = b"\x0a\x01k" + b"\x1a\x05\x10\x00\x1a\x01x"  # explicit hash key index, no pk index
    assert (
        assert_passed_through_plain(MAGIC + body + hashlib.md5(body).digest()).malformed_aggregates
        == 1
    )


def test_index_outside_the_key_table_passes_through_counted():
    aggregate = hand_built(
        ["k"],
        [],
        {"partition_key_index": 0, "data": b"ok"},
        {"partition_key_index": 5, "data": b"bad index"},
    )
    stats = assert_passed_through_plain(aggregate)
    assert stats.malformed_aggregates == 1


def _straddling_aggregate():
    """An aggregate of two keys, and the hash range holding only the first."""
    low, high = sorted((effective_hash_key("a"), effective_hash_key("b")))
    inside = "a" if effective_hash_key("a") == low else "b"
    outside = "b" if inside == "a" else "a"
    aggregate = hand_built(
        [inside, outside],
        [],
        {"partition_key_index": 0, "data": b"in"},
        {"partition_key_index": 1, "data": b"out"},
    )
    return aggregate, low, high


def test_a_user_record_outside_the_shard_range_is_delivered_and_counted(caplog):
    aggregate, low, high = _straddling_aggregate()
    stats = DeaggregationStats()
    kept = deaggregate(
        [outer(aggregate), outer(b"plain", sequence_number="2")],
        low,
        low,
        shard_id="shardId-000000000003",
        stats=stats,
    )
    assert [(r.data, r.sub_sequence_number) for r in kept] == [
        (b"in", 0),
        (b"out", 1),
        (b"plain", 0),
    ]
    assert stats.user_records_outside_shard == 1
    assert stats.aggregates_dropped == 0 and stats.user_records_dropped == 0
    assert stats.aggregates == 1 and stats.user_records == 2
    assert "outside" not in caplog.text  # counted here; the owner warns once per interval
    # A shard whose range holds both keys counts nothing.
    whole = DeaggregationStats()
    assert [r.data for r in deaggregate([outer(aggregate)], low, high, stats=whole)] == [
        b"in",
        b"out",
    ]
    assert whole.user_records_outside_shard == 0


def test_the_kcl_drop_is_opt_in_and_counts_exactly():
    aggregate, low, _ = _straddling_aggregate()
    stats = DeaggregationStats()
    kept = deaggregate(
        [outer(aggregate), outer(b"plain", sequence_number="2"), outer(aggregate)],
        low,
        low,
        stats=stats,
        drop_outside_shard=True,
    )
    assert [r.data for r in kept] == [b"plain"]
    assert stats.aggregates_dropped == 2 and stats.user_records_dropped == 4
    assert stats.user_records_outside_shard == 2


def test_explicit_hash_key_decides_the_range_only_when_its_index_is_present():
    aggregate = hand_built(
        ["k"],
        ["5"],
        {"partition_key_index": 0, "explicit_hash_key_index": 0, "data": b"routed by 5"},
        {"partition_key_index": 0, "data": b"routed by md5(k)"},
    )
    md5_k = effective_hash_key("k")
    both = deaggregate([outer(aggregate)], 0, MAX_HASH_KEY)
    assert [(r.data, r.explicit_hash_key) for r in both] == [
        (b"routed by 5", "5"),
        (b"routed by md5(k)", None),
    ]

    def outside(lo, hi):
        stats = DeaggregationStats()
        assert len(deaggregate([outer(aggregate)], lo, hi, stats=stats)) == 2  # delivered
        dropped = deaggregate([outer(aggregate)], lo, hi, drop_outside_shard=True)
        return stats.user_records_outside_shard, len(dropped)

    assert md5_k > 5
    assert outside(0, 10) == (1, 0)  # md5(k) is far above 10: the KCL drops the aggregate
    assert outside(5, md5_k) == (0, 2)
    assert outside(6, md5_k) == (1, 0)  # the explicit hash key 5 is below 6


def test_non_numeric_explicit_hash_key_passes_through_when_range_checked():
    aggregate = hand_built(
        ["k"],
        ["not-a-number"],
        {"partition_key_index": 0, "explicit_hash_key_index": 0, "data": b"x"},
        {"partition_key_index": 0, "data": b"y"},
    )
    stats = DeaggregationStats()
    [record] = deaggregate([outer(aggregate)], 0, MAX_HASH_KEY, stats=stats)
    assert record.sub_sequence_number == 0 and is_aggregated(record.data)
    assert stats.malformed_aggregates == 1


def test_large_user_records_take_the_two_byte_length_path_and_multibyte_indexes_the_slow_path():
    records = [(bytes([i % 256]) * (1000 + i), f"key-{i}", None) for i in range(300)]
    entries = ours_aggregate(records, max_bytes=1024 * 1024)
    assert len(entries) == 1  # 300 keys: indexes >= 128 need two-byte varints
    got = deaggregate([outer(entries[0]["Data"])], 0, MAX_HASH_KEY)
    assert [(r.data, r.partition_key) for r in got] == [(d, k) for d, k, _ in records]
    assert [r.sub_sequence_number for r in got] == list(range(300))


@pytest.mark.parametrize("bound", ["0", 0])
def test_hash_range_accepts_strings_and_ints(bound):
    assert len(deaggregate([outer(good_aggregate())], bound, str(MAX_HASH_KEY))) == 2


def test_a_last_shard_ending_one_past_the_hash_space_as_older_moto_gives_it():
    """moto before 5.2 ends a stream's last shard at 2**128 (real Kinesis: 2**128 - 1), the
    newest moto on Python 3.9; every record of that shard was a read failure."""
    aggregate, low, _ = _straddling_aggregate()
    stats = DeaggregationStats()
    kept = deaggregate([outer(aggregate)], low, str(2**128), stats=stats)
    assert [r.data for r in kept] == [b"in", b"out"]
    assert stats.user_records_outside_shard == 0


# -- key tables that are not UTF-8 (issue 52): read as the KCL's protobuf-java reads them -


def _key_digest(text):
    return int.from_bytes(hashlib.md5(text.encode()).digest(), "big")


@pytest.mark.parametrize("common_layout", [True, False])
def test_a_partition_key_that_is_not_utf8_is_the_kcls_text_with_and_without_a_range(
    common_layout,
):
    from ..support.kpl_bytes import aggregate, user_record

    key = b"a\xffb"
    records = [user_record(0, b"x"), user_record(1, b"y")]
    if not common_layout:  # a third field: the record-by-record path
        records[1] += b"\x22\x03\x0a\x01t"  # a tag
    data = aggregate([key, b"ok"], records)
    text = "a\ufffdb"
    for bounds in ((), (0, 2**127), (2**127, MAX_HASH_KEY), (0, MAX_HASH_KEY)):
        stats = DeaggregationStats()
        got = deaggregate([outer(data)], *bounds, stats=stats)
        assert [(r.data, r.partition_key) for r in got] == [(b"x", text), (b"y", "ok")]
        assert all(isinstance(r.partition_key, str) for r in got)
        assert stats.malformed_aggregates == 0
        if bounds:  # outside by the MD5 of the text's UTF-8 bytes, as the KCL counts it
            low, high = bounds
            expected = sum(not low <= _key_digest(k) <= high for k in (text, "ok"))
            assert stats.user_records_outside_shard == expected


def test_the_kcls_range_check_takes_the_md5_of_the_decoded_text_not_of_the_bytes_written():
    from ..support.kpl_bytes import aggregate, user_record

    # a key whose bytes and whose decoded text hash into different halves of the space
    key = next(
        k
        for k in (b"\xff" + str(n).encode() for n in range(100))
        if (int.from_bytes(hashlib.md5(k).digest(), "big") < 2**127)
        != (_key_digest(k.decode("utf-8", "replace")) < 2**127)
    )
    low_half, high_half = (0, 2**127 - 1), (2**127, MAX_HASH_KEY)
    text_half = low_half if _key_digest(key.decode("utf-8", "replace")) < 2**127 else high_half
    data = aggregate([key], [user_record(0, b"x"), user_record(0, b"y")])
    assert len(deaggregate([outer(data)], *text_half, drop_outside_shard=True)) == 2
    other = low_half if text_half == high_half else high_half
    stats = DeaggregationStats()
    assert deaggregate([outer(data)], *other, stats=stats, drop_outside_shard=True) == []
    assert (stats.aggregates_dropped, stats.user_records_dropped) == (1, 2)


@pytest.mark.parametrize(
    "written,text",
    [
        (b"\xed\xa0\x80", "\ufffd"),  # an encoded surrogate: one U+FFFD in Java, three in Python
        (b"\xed\xa0A", "\ufffdA"),
        (b"x\xed\xa0", "x\ufffd"),
        (b"\xed\x9f\xbf", "\ud7ff"),
        (b"\xe2\x82", "\ufffd"),
        (b"\xf0\x90\x80A", "\ufffdA"),
        (b"\xf4\x90\x80\x80", "\ufffd" * 4),
        (b"\xc0\x80", "\ufffd" * 2),
        (b"\xe0\x80\x80", "\ufffd" * 3),
    ],
)
def test_key_text_replaces_as_javas_utf8_decoder_does(written, text):
    from kinesis_dstream.kpl.format import key_text

    assert key_text(written) == text


def test_an_explicit_hash_key_that_is_not_utf8_passes_the_aggregate_through_counted():
    from ..support.kpl_bytes import aggregate, user_record

    data = aggregate([b"k"], [user_record(0, b"x", 0), user_record(0, b"y")], [b"12\xff"])
    stats = DeaggregationStats()
    [record] = deaggregate([outer(data)], 0, MAX_HASH_KEY, stats=stats)
    assert record.data == data and stats.malformed_aggregates == 1
    got = deaggregate([outer(data)])  # no range: nothing is checked, the key is text
    assert [(r.data, r.explicit_hash_key) for r in got] == [(b"x", "12\ufffd"), (b"y", None)]


@pytest.mark.parametrize(
    "key,value",
    [
        ("5", 5),
        ("+5", 5),
        ("-5", -5),
        ("\u0665", 5),  # ARABIC-INDIC DIGIT FIVE: a decimal digit to Java too
        ("0" * 5000 + "7", 7),
        ("9" * 5000, MAX_HASH_KEY + 1),  # past 2**128: outside every range, not an error
        ("-" + "9" * 5000, -1),
    ],
)
def test_explicit_hash_keys_are_read_as_javas_biginteger_reads_them(key, value):
    from kinesis_dstream.kpl.format import parse_hash_key

    assert parse_hash_key(key) == value


@pytest.mark.parametrize("key", ["", "-", " 5", "5 ", "1_000", "\u00b2", "0x10", "5.0", "1e3"])
def test_explicit_hash_keys_java_refuses_are_malformed(key):
    from kinesis_dstream.kpl.format import MalformedAggregate, parse_hash_key

    with pytest.raises(MalformedAggregate, match="is not a number"):
        parse_hash_key(key)


def test_an_explicit_hash_key_past_the_hash_space_is_outside_every_shard_not_malformed():
    from ..support.kpl_bytes import aggregate, user_record

    huge = ("9" * 5000).encode()  # past int()'s 4,300 digits: Java's BigInteger reads it
    data = aggregate([b"k"], [user_record(0, b"x", 0), user_record(0, b"y")], [huge])
    stats = DeaggregationStats()
    got = deaggregate([outer(data)], 0, MAX_HASH_KEY, stats=stats)
    assert [r.data for r in got] == [b"x", b"y"]
    assert (stats.user_records_outside_shard, stats.malformed_aggregates) == (1, 0)
