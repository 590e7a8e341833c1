"""De-aggregation's fast paths against a record-by-record reference, and the generator.

The reference parses every user record with the full protobuf message and applies the
module's rules one record at a time; the fast paths (common layout, explicit hash key
indexes, two-byte varints, index past a table) must give the same records and counts.
"""

import hashlib
from datetime import datetime, timezone

from hypothesis import given, settings
from hypothesis import strategies as st

from kinesis_dstream.kpl import (
    MAGIC,
    MAX_HASH_KEY,
    AggregatedRecord,
    DeaggregationStats,
    deaggregate,
    iter_deaggregate,
)

ARRIVAL = datetime(2026, 11, 25, tzinfo=timezone.utc)


def outer(data, n=0):
    return {
        "Data": data,
        "PartitionKey": "outer-pk",
        "SequenceNumber": str(49 * 10**50 + n),
        "ApproximateArrivalTimestamp": ARRIVAL,
    }


def reference(records, low, high, drop):
    """(user records as tuples, outside count, malformed count), one record at a time."""
    out, outside_total, malformed = [], 0, 0
    for record in records:
        data = record["Data"]
        body = data[4:-16]
        message = AggregatedRecord.FromString(body)
        try:
            users, outside = [], 0
            for sub, user in enumerate(message.records):
                pk = message.partition_key_table[user.partition_key_index]
                if user.HasField("explicit_hash_key_index"):
                    ehk = message.explicit_hash_key_table[user.explicit_hash_key_index]
                    hash_key = int(ehk)
                else:
                    ehk = None
                    hash_key = int.from_bytes(hashlib.md5(pk.encode()).digest(), "big")
                outside += not low <= hash_key <= high
                users.append((user.data, pk, record["SequenceNumber"], sub, ehk))
            # The module checks every explicit hash key in the table, used or not.
            for key in message.explicit_hash_key_table:
                int(key)
        except (IndexError, ValueError):
            malformed += 1
            out.append((data, "outer-pk", record["SequenceNumber"], 0, None))
            continue
        outside_total += outside
        if not (outside and drop):
            out.append(users)
    flat = []
    for item in out:
        flat.extend(item if isinstance(item, list) else [item])
    return flat, outside_total, malformed


KEYS = st.text(min_size=0, max_size=4)
HASHES = st.integers(min_value=0, max_value=MAX_HASH_KEY + 3).map(str)


@st.composite
def aggregates(draw):
    pks = draw(st.lists(KEYS, min_size=1, max_size=140))
    ehks = draw(st.lists(HASHES, min_size=0, max_size=140))
    ehks += draw(st.sampled_from([[], [], [], ["not-a-number"]]))
    message = AggregatedRecord()
    message.partition_key_table.extend(pks)
    message.explicit_hash_key_table.extend(ehks)
    for _ in range(draw(st.integers(min_value=1, max_value=30))):
        fields = {
            # Now and then an index one past the table: a malformed aggregate.
            "partition_key_index": draw(st.integers(min_value=0, max_value=len(pks))),
            "data": draw(st.binary(max_size=300)),
        }
        if ehks and draw(st.booleans()):
            fields["explicit_hash_key_index"] = draw(st.integers(min_value=0, max_value=len(ehks)))
        message.records.add(**fields)
    body = message.SerializeToString()
    return MAGIC + body + hashlib.md5(body).digest()


@settings(max_examples=300, deadline=None)
@given(
    st.lists(aggregates(), min_size=1, max_size=5),
    st.sampled_from([(0, MAX_HASH_KEY), (0, MAX_HASH_KEY // 2), (MAX_HASH_KEY // 3, MAX_HASH_KEY)]),
    st.booleans(),
)
def test_fast_paths_match_the_record_by_record_reference(datas, bounds, drop):
    records = [outer(d, n) for n, d in enumerate(datas)]
    low, high = bounds
    expected, outside, malformed = reference(records, low, high, drop)
    for run in (deaggregate, lambda *a, **k: list(iter_deaggregate(*a, **k))):
        stats = DeaggregationStats()
        got = run(records, low, high, stats=stats, drop_outside_shard=drop, shard_id="s")
        assert [r[:5] for r in got] == expected
        assert all(r.shard_id == "s" and r.approximate_arrival_timestamp == ARRIVAL for r in got)
        assert stats.user_records_outside_shard == outside
        assert stats.malformed_aggregates == malformed


def test_iter_deaggregate_yields_what_deaggregate_returns_in_order_with_the_same_counts():
    message = AggregatedRecord()
    message.partition_key_table.extend(["a", "b"])
    message.explicit_hash_key_table.extend(["7"])
    for i in range(10):
        fields = {"partition_key_index": i % 2, "data": bytes([i])}
        if i % 3 == 0:
            fields["explicit_hash_key_index"] = 0
        message.records.add(**fields)
    body = message.SerializeToString()
    aggregate = MAGIC + body + hashlib.md5(body).digest()
    records = [outer(aggregate if n % 2 else b"plain %d" % n, n) for n in range(40)]
    listed, streamed = DeaggregationStats(), DeaggregationStats()
    expected = deaggregate(records, 0, 100, stats=listed)
    got = list(iter_deaggregate(iter(records), 0, 100, stats=streamed))
    assert got == expected and len(got) == 20 + 20 * 10
    assert streamed == listed and listed.user_records_outside_shard == 20 * 6  # 6 of 10 by md5
