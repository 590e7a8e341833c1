"""A fetch round's partition holding several shards: what a batch takes from it (pure)."""

from kinesis_dstream.dstream.fetch import RangeHeader, deliver
from kinesis_dstream.dstream.rounds import group_plans


def header(shard, records, first=(1, 0), last=(9, 0)):
    return RangeHeader(0, shard, records, first, last, 0, None, False, (), None, 1, 0.0)


def test_plans_are_grouped_consecutively():
    assert group_plans(5, 2) == [[0, 1], [2, 3], [4]]
    assert group_plans(3, 1) == [[0], [1], [2]]
    assert group_plans(3, 8) == [[0, 1, 2]]


def test_a_batch_takes_only_its_shards_records_from_a_shared_partition():
    headers = [header("s0", 2), header("s1", 1), header("s2", 1)]
    items = [headers[0], "a0", "a1", headers[1], "b0", headers[2], "c0"]
    take = deliver([None] * 3, headers, frozenset({0, 2}), [[0, 1, 2]])
    assert list(take(0, iter(items))) == ["a0", "a1", "c0"]
    everything = deliver([None] * 3, headers, None, [[0, 1, 2]])
    assert list(everything(0, iter(items))) == ["a0", "a1", "b0", "c0"]
    # a partition none of whose shards is in the batch yields nothing
    assert list(deliver([None] * 3, headers, frozenset({5}), [[0, 1, 2]])(0, iter(items))) == []


def test_an_empty_range_recomputed_with_records_delivers_nothing():
    recorded = [header("s0", 0, None, None), header("s1", 1)]
    recomputed = [header("s0", 2, (5, 0), (6, 0)), "new0", "new1", recorded[1], "b0"]
    take = deliver([None, None], recorded, None, [[0, 1]])
    assert list(take(0, iter(recomputed))) == ["b0"]
