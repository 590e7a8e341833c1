"""KPL de-aggregation and aggregation: ours against aws-kinesis-agg, in one run.

    python -m benchmarks.bench_aggregation

De-aggregation: 1,000 aggregates x 100 user records x 100 bytes (each with its own
partition key, so the hash-range check hashes every key), best of 5. Ours runs with the
hash-range check on (the shard's range: a quarter of the key space, as on 4 shards, with
the aggregates built by shard); aws-kinesis-agg has no such check. Both materialise their
user records in a list (aws-kinesis-agg's ``iter_deaggregate_records(..., "Boto3")``
consumed by ``list``); the figure for aws-kinesis-agg's generator consumed one record at
a time and discarded is printed too. Aggregation: 100,000 user records of 100 bytes.
"""

from __future__ import annotations

import random
import time
from datetime import datetime, timezone

from aws_kinesis_agg import deaggregator as agg_deaggregator
from aws_kinesis_agg.aggregator import RecordAggregator as AggRecordAggregator
from google.protobuf.internal import api_implementation

from kinesis_dstream.kpl import MAX_HASH_KEY, RecordAggregator, ShardMap, deaggregate

QUARTER = (MAX_HASH_KEY + 1) // 4
SHARDS = ShardMap([(f"shardId-{i:012d}", i * QUARTER, (i + 1) * QUARTER - 1) for i in range(4)])
ARRIVAL = datetime(2026, 11, 21, tzinfo=timezone.utc)


def best_rate(fn, count: int, runs: int = 5) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        assert fn() == count
        best = min(best, time.perf_counter() - start)
    return count / best


def user_records(n: int, seed: int) -> list:
    rng = random.Random(seed)
    return [(rng.randbytes(100), f"pk-{rng.getrandbits(64):x}") for _ in range(n)]


def aggregates_for_shard0(count: int, per_aggregate: int) -> list:
    """GetRecords-shaped aggregates whose user records all hash into shard 0."""
    _, start, end = SHARDS.shard_for(0)
    pool = [r for r in user_records(count * per_aggregate * 5, 1) if start <= _hk(r[1]) <= end]
    records = []
    for n in range(count):
        aggregator = RecordAggregator(max_bytes=1024 * 1024)
        for data, key in pool[n * per_aggregate : (n + 1) * per_aggregate]:
            assert not aggregator.add(data, key)
        [entry] = aggregator.flush()
        records.append(
            {
                "Data": entry["Data"],
                "PartitionKey": entry["PartitionKey"],
                "SequenceNumber": str(10**55 + n),
                "ApproximateArrivalTimestamp": ARRIVAL,
            }
        )
    return records, start, end


def _hk(key: str) -> int:
    from kinesis_dstream.kpl import effective_hash_key

    return effective_hash_key(key)


def main() -> None:
    print(f"protobuf backend: {api_implementation.Type()}")
    records, start, end = aggregates_for_shard0(1000, 100)
    n = 100 * len(records)
    ours = best_rate(
        lambda: len(deaggregate(records, start, end, shard_id="shardId-000000000000")), n
    )
    theirs_list = best_rate(
        lambda: len(list(agg_deaggregator.iter_deaggregate_records(records, data_format="Boto3"))),
        n,
    )
    theirs_stream = best_rate(
        lambda: sum(
            1 for _ in agg_deaggregator.iter_deaggregate_records(records, data_format="Boto3")
        ),
        n,
    )
    print("de-aggregation, 1,000 aggregates x 100 user records x 100 bytes, best of 5:")
    print(f"  ours (hash-range check on), list of KinesisRecord: {ours:12,.0f} user records/s")
    print(
        f"  aws-kinesis-agg, list of dicts:                    {theirs_list:12,.0f} user records/s"
    )
    label = "aws-kinesis-agg, generator, records discarded:"
    print(f"  {label:51}{theirs_stream:12,.0f} user records/s")
    print(f"  ratio ours / aws-kinesis-agg (list):      {ours / theirs_list:.2f}")
    print(f"  ratio ours / aws-kinesis-agg (generator): {ours / theirs_stream:.2f}")

    users = user_records(100_000, 2)

    def ours_aggregate() -> int:
        aggregator = RecordAggregator(shard_map=SHARDS)
        entries = []
        for data, key in users:
            entries += aggregator.add(data, key)
        entries += aggregator.flush()
        return len(users)

    def theirs_aggregate() -> int:
        aggregator = AggRecordAggregator()
        entries = []
        for data, key in users:
            done = aggregator.add_user_record(key, data)
            if done is not None:
                entries.append(done.get_contents())
        entries.append(aggregator.clear_and_get().get_contents())
        return len(users)

    ours_agg = best_rate(ours_aggregate, len(users), runs=3)
    theirs_agg = best_rate(theirs_aggregate, len(users), runs=3)
    print("aggregation, 100,000 user records x 100 bytes (51,200-byte aggregates), best of 3:")
    print(f"  ours (grouped by shard over 4 shards): {ours_agg:12,.0f} user records/s")
    print(f"  aws-kinesis-agg (no shard grouping):   {theirs_agg:12,.0f} user records/s")
    print(f"  ratio ours / aws-kinesis-agg: {ours_agg / theirs_agg:.2f}")


if __name__ == "__main__":
    main()
