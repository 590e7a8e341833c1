"""KPL de-aggregation (``kpl/deaggregation.py``) against anything a stream can hold.

Inputs: aggregates written by the library's own aggregator (``RecordAggregator``) and by
hand (key tables of any bytes, tags, explicit hash keys of any text), then mutated: bits
flipped and bytes cut, inserted or dropped, with the MD5 recomputed (so the protobuf
parse is reached, not only the digest check) or left wrong; and random records.

The rule (docs/reliability.md#stream-payloads): ``deaggregate`` never raises. Each
Kinesis record comes out either whole (a plain record, sub-sequence number 0, its data
unchanged: not an aggregate, or a malformed one, counted) or as its user records
(sub-sequence numbers 0, 1, 2, ..., text keys, data no larger than the record); an
aggregate dropped by the KCL's rule (asked for) is counted with its user records.
"""

from __future__ import annotations

from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from kinesis_dstream.kpl import (
    MAGIC,
    MAX_HASH_KEY,
    DeaggregationStats,
    RecordAggregator,
    deaggregate,
    is_aggregated,
)
from kinesis_dstream.kpl.format import md5_digest

from ..support.kpl_bytes import aggregate, user_record
from .mutations import mutate

#: Explicit hash keys: numbers in and out of range, huge, signed, other scripts' digits,
#: spaces, underscores, not numbers at all.
HASH_KEYS = st.one_of(
    st.integers(min_value=-5, max_value=MAX_HASH_KEY + 5).map(str),
    st.sampled_from(["9" * 50, "0" * 60 + "7", "-1", "+3", " 5", "1_0", "\u0665\u0660", "x", ""]),
    st.text(max_size=8),
)
KEY_BYTES = st.one_of(st.text(max_size=6).map(str.encode), st.binary(max_size=6))


@st.composite
def written_by_the_aggregator(draw) -> bytes:
    """The library's own aggregate of 2-20 user records (text keys, some explicit)."""
    aggregator = RecordAggregator(max_bytes=1024 * 1024)
    entries: list = []
    for _ in range(draw(st.integers(2, 20))):
        ehk = draw(st.none() | st.integers(0, MAX_HASH_KEY).map(str))
        entries += aggregator.add(draw(st.binary(max_size=40)), draw(st.text(max_size=8)), ehk)
    entries += aggregator.flush()
    data = entries[0]["Data"]
    return data if is_aggregated(data) else aggregate([b"k"], [user_record(0, data)])


@st.composite
def written_by_hand(draw) -> bytes:
    """Key tables of any bytes and explicit hash keys of any text, indexes in and past the
    tables, optional tags: what no aggregator writes but any producer can."""
    pks = draw(st.lists(KEY_BYTES, min_size=1, max_size=5))
    ehks = [k.encode("utf-8", "surrogatepass") for k in draw(st.lists(HASH_KEYS, max_size=4))]
    records = []
    for _ in range(draw(st.integers(1, 8))):
        pki = draw(st.integers(0, len(pks)))  # one past the end: malformed
        ehki = draw(st.none() | st.integers(0, max(len(ehks), 1)))
        record = user_record(pki, draw(st.binary(max_size=30)), ehki)
        if draw(st.booleans()):
            record += b"\x22\x03\x0a\x01t"  # a tag: the record-by-record path
        records.append(record)
    return aggregate(pks, records, ehks)


@st.composite
def mutated(draw, source) -> bytes:
    """``source``'s protobuf edited (:mod:`.mutations`); the MD5 made right again, or not."""
    data = draw(source)
    body = mutate(draw, data[4:-16])
    if draw(st.booleans()):
        return MAGIC + body + md5_digest(body)
    return data[:4] + body + data[-16:]


PAYLOADS = st.one_of(
    written_by_the_aggregator(),
    written_by_hand(),
    mutated(written_by_the_aggregator()),
    mutated(written_by_hand()),
    st.binary(max_size=64).map(lambda b: MAGIC + b + md5_digest(b)),
    st.binary(max_size=64),
)
RANGES = st.one_of(
    st.just(()),
    st.just((0, MAX_HASH_KEY)),
    st.integers(0, MAX_HASH_KEY).flatmap(
        lambda low: st.integers(low, MAX_HASH_KEY).map(lambda high: (low, high))
    ),
    st.just(("0", str(2**128))),  # older moto's last shard
)


@given(st.lists(PAYLOADS, min_size=1, max_size=6), RANGES, st.booleans())
def test_deaggregate_never_raises_and_keeps_or_counts_every_record(payloads, bounds, drop):
    records = [
        {"Data": data, "PartitionKey": "outer", "SequenceNumber": str(1000 + n)}
        for n, data in enumerate(payloads)
    ]
    stats = DeaggregationStats()
    out = deaggregate(records, *bounds, stats=stats, drop_outside_shard=drop, shard_id="s-1")

    by_record = Counter(r.sequence_number for r in out)
    passed_through = 0
    for n, data in enumerate(payloads):
        mine = [r for r in out if r.sequence_number == str(1000 + n)]
        assert [r.sub_sequence_number for r in mine] == list(range(len(mine)))
        whole = len(mine) == 1 and mine[0].data == data and mine[0].partition_key == "outer"
        if whole:
            passed_through += 1
        for r in mine:
            assert isinstance(r.partition_key, str) and isinstance(r.data, bytes)
            assert r.explicit_hash_key is None or isinstance(r.explicit_hash_key, str)
            assert r.shard_id == "s-1"
        if not whole:  # user records: pieces of the aggregate's bytes
            assert sum(len(r.data) for r in mine) <= len(data)
    assert sum(by_record.values()) == len(out)
    assert stats.malformed_aggregates <= passed_through
    assert stats.user_records + passed_through + stats.user_records_dropped >= len(out)
    if not drop:
        assert stats.aggregates_dropped == stats.user_records_dropped == 0
    if not bounds:
        assert stats.user_records_outside_shard == 0
