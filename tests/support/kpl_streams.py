"""Streams holding aggregates from AWS's own (not shard-aware) aggregator, with the counts
a reader must report: how many user records lie outside the shard Kinesis stored them in.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kinesis_dstream.kpl import effective_hash_key
from kinesis_dstream.retrieval.streams import list_shards


@dataclass
class AggregatedStream:
    """What was put, and what a reader of each shard must find."""

    sent: list = field(default_factory=list)  # every user record's data (str)
    outside_by_shard: dict = field(default_factory=dict)  # shard id -> user records outside
    aggregates_outside: int = 0  # aggregates holding at least one record outside
    records_in_those: int = 0  # user records in those aggregates

    @property
    def outside(self) -> int:
        return sum(self.outside_by_shard.values())

    def counts(self, drop: bool) -> tuple:
        """(user records outside, aggregates dropped, user records dropped) to report."""
        if drop:
            return self.outside, self.aggregates_outside, self.records_in_those
        return self.outside, 0, 0

    def kept_by_kcl_rule(self) -> int:
        """User records the KCL's drop keeps: all but those of straddling aggregates."""
        return len(self.sent) - self.records_in_those


def shard_ranges(kinesis, stream: str) -> list:
    """``(shard id, starting hash key, ending hash key)`` of each shard, keys as ints."""
    return [
        (
            s["ShardId"],
            int(s["HashKeyRange"]["StartingHashKey"]),
            int(s["HashKeyRange"]["EndingHashKey"]),
        )
        for s in list_shards(kinesis, stream)
    ]


def put_agg_aggregates(kinesis, stream: str, aggregates: int, per: int, plain: int = 0):
    """``aggregates`` aws-kinesis-agg aggregates of ``per`` user records each (keys spread
    over the whole hash space), then ``plain`` plain records; returns the expectations."""
    from aws_kinesis_agg.aggregator import RecordAggregator

    ranges = shard_ranges(kinesis, stream)

    def shard_of(hash_key: int) -> tuple:
        return next(r for r in ranges if r[1] <= hash_key <= r[2])

    out = AggregatedStream()
    for a in range(aggregates):
        aggregator = RecordAggregator()
        keys = []
        for i in range(per):
            key = f"key-{a}-{i}"
            data = f"agg-{a}-{i}"
            keys.append(key)
            out.sent.append(data)
            assert aggregator.add_user_record(key, data.encode()) is None
        pk, ehk, blob = aggregator.clear_and_get().get_contents()
        args = {"ExplicitHashKey": ehk} if ehk else {}
        stored = kinesis.put_record(StreamName=stream, Data=blob, PartitionKey=pk, **args)
        shard_id, low, high = next(r for r in ranges if r[0] == stored["ShardId"])
        assert shard_of(effective_hash_key(pk, ehk))[0] == shard_id
        outside = sum(1 for k in keys if not low <= effective_hash_key(k) <= high)
        out.outside_by_shard[shard_id] = out.outside_by_shard.get(shard_id, 0) + outside
        if outside:
            out.aggregates_outside += 1
            out.records_in_those += per
    for i in range(plain):
        data = f"plain-{i}"
        out.sent.append(data)
        kinesis.put_record(StreamName=stream, Data=data.encode(), PartitionKey=f"p-{i}")
    out.outside_by_shard = {s: n for s, n in out.outside_by_shard.items() if n}
    return out
