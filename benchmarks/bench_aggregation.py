"""KPL de-aggregation and aggregation: ours against aws-kinesis-agg, in one run.

    python -m benchmarks.bench_aggregation

De-aggregation, for every shape below (aggregates x user records x bytes, each user
record with its own partition key, best of 5): ours on the full hash range (what a
one-shard stream or a range check that cannot fail costs) and aws-kinesis-agg's
``iter_deaggregate_records(..., "Boto3")``, both materialising their user records in a
list; the ratio is ours / theirs. The first shape also runs with our hash-range check on
(the shard's range: a quarter of the key space, as on 4 shards, with the aggregates built
by shard, so every key is hashed), and both generators (ours ``iter_deaggregate``,
aws-kinesis-agg's ``iter_deaggregate_records``) consumed one record at a time and
discarded (they then keep little alive). The shapes:

- 1,000 x 100 x 100 B: the earlier single shape;
- 200 x 500 x 10 B: tiny records, key tables past 128 entries (two-byte indexes);
- 100 x 50 x 1 KiB: the KPL's default 50 KiB aggregates of 1 KiB records;
- 5,000 x 10 x 100 B: small aggregates, where per-aggregate costs dominate;
- 50 x 1,000 x 100 B: large aggregates;
- 1,000 x 100 x 100 B with one user record in three carrying an explicit hash key (as
  producers that route by hash key write them), also consumed as generators (ours
  iterated, theirs consumed one record at a time, both discarding the records).

Aggregation: 100,000 user records of 100 bytes.
"""

from __future__ import annotations

import random
import time
from datetime import datetime, timezone

from aws_kinesis_agg import deaggregator as agg_deaggregator
from aws_kinesis_agg.aggregator import RecordAggregator as AggRecordAggregator
from google.protobuf.internal import api_implementation

from benchmarks import results
from kinesis_dstream.kpl import (
    MAX_HASH_KEY,
    RecordAggregator,
    ShardMap,
    deaggregate,
    iter_deaggregate,
)

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


def best_rates(fns: list, count: int, runs: int = 5) -> list:
    """Like best_rate for several functions, their runs interleaved: on a busy machine a
    burst of load then slows each alike instead of one of them."""
    best = [float("inf")] * len(fns)
    for _ in range(runs):
        for i, fn in enumerate(fns):
            start = time.perf_counter()
            assert fn() == count
            best[i] = min(best[i], time.perf_counter() - start)
    return [count / b for b in best]


def user_records(n: int, seed: int) -> list:
    rng = random.Random(seed)
    return [(rng.randbytes(100), f"pk-{rng.getrandbits(64):x}") for _ in range(n)]


#: One user record in three with an explicit hash key.
EHK_SHAPE = (1000, 100, 100, 3)
SHAPES = [
    (1000, 100, 100),
    (200, 500, 10),
    (100, 50, 1024),
    (5000, 10, 100),
    (50, 1000, 100),
    EHK_SHAPE,
]


def user_records_of(n: int, size: int, seed: int, ehk_every: int = 0) -> list:
    """(data, partition key, explicit hash key or None): every ``ehk_every``-th record
    (none when 0) has an explicit hash key."""
    rng = random.Random(seed)
    return [
        (
            rng.randbytes(size),
            f"pk-{rng.getrandbits(64):x}",
            str(rng.getrandbits(128)) if ehk_every and i % ehk_every == 0 else None,
        )
        for i in range(n)
    ]


def aggregates_of(pool: list, count: int, per_aggregate: int) -> list:
    """GetRecords-shaped records: ``count`` aggregates of ``per_aggregate`` user records."""
    records = []
    for n in range(count):
        aggregator = RecordAggregator(max_bytes=1024 * 1024)
        for data, key, *ehk in pool[n * per_aggregate : (n + 1) * per_aggregate]:
            assert not aggregator.add(data, key, *ehk)
        [entry] = aggregator.flush()
        records.append(
            {
                "Data": entry["Data"],
                "PartitionKey": entry["PartitionKey"],
                "SequenceNumber": str(10**55 + n),
                "ApproximateArrivalTimestamp": ARRIVAL,
            }
        )
    return records


def aggregates_for_shard0(count: int, per_aggregate: int) -> tuple:
    """Aggregates whose user records all hash into shard 0, and shard 0's range."""
    _, start, end = SHARDS.shard_for(0)
    pool = [r for r in user_records(count * per_aggregate * 5, 1) if start <= _hk(r[1]) <= end]
    return aggregates_of(pool, count, per_aggregate), start, end


def theirs_into_list(records: list) -> int:
    return len(list(agg_deaggregator.iter_deaggregate_records(records, data_format="Boto3")))


def theirs_discarded(records: list) -> int:
    return sum(1 for _ in agg_deaggregator.iter_deaggregate_records(records, data_format="Boto3"))


def ours_discarded(records: list) -> int:
    return sum(1 for _ in iter_deaggregate(records, 0, MAX_HASH_KEY, shard_id="s"))


def deaggregation_shapes() -> None:
    print("de-aggregation, every shape, best of 5 (user records/s; both build a list):")
    for count, per, size, *ehk in SHAPES:
        records = aggregates_of(user_records_of(count * per, size, 3, *ehk), count, per)
        n = count * per
        ours, theirs = best_rates(
            [
                lambda r=records: len(deaggregate(r, 0, MAX_HASH_KEY, shard_id="s")),
                lambda r=records: theirs_into_list(r),
            ],
            n,
        )
        shape = f"{count:,} x {per:,} x {size:,} B" + (f", 1/{ehk[0]} EHK" if ehk else "")
        print(
            f"  {shape:32} ours {ours:12,.0f}  aws-kinesis-agg {theirs:12,.0f}  "
            f"ratio {ours / theirs:.2f}"
        )
    count, per, size, every = EHK_SHAPE
    records = aggregates_of(user_records_of(count * per, size, 3, every), count, per)
    ours, theirs = best_rates(
        [lambda: ours_discarded(records), lambda: theirs_discarded(records)], count * per
    )
    shape = f"{count:,} x {per:,} x {size:,} B, 1/{every} EHK, generators"
    print(
        f"  {shape:32} ours {ours:12,.0f}  aws-kinesis-agg {theirs:12,.0f}  "
        f"ratio {ours / theirs:.2f}"
    )


def _hk(key: str) -> int:
    from kinesis_dstream.kpl import effective_hash_key

    return effective_hash_key(key)


def main() -> None:
    print(f"protobuf backend: {api_implementation.Type()}")
    deaggregation_shapes()
    records, start, end = aggregates_for_shard0(1000, 100)
    n = 100 * len(records)
    ours, theirs_list, theirs_stream, ours_stream = best_rates(
        [
            lambda: len(deaggregate(records, start, end, shard_id="shardId-000000000000")),
            lambda: len(
                list(agg_deaggregator.iter_deaggregate_records(records, data_format="Boto3"))
            ),
            lambda: sum(
                1 for _ in agg_deaggregator.iter_deaggregate_records(records, data_format="Boto3")
            ),
            lambda: sum(1 for _ in iter_deaggregate(records, start, end, shard_id="shardId-0")),
        ],
        n,
    )
    print("de-aggregation, 1,000 x 100 x 100 B with the hash-range check on, best of 5:")
    print(f"  ours (hash-range check on), list of KinesisRecord: {ours:12,.0f} user records/s")
    print(
        f"  aws-kinesis-agg, list of dicts:                    {theirs_list:12,.0f} user records/s"
    )
    label = "aws-kinesis-agg, generator, records discarded:"
    print(f"  {label:51}{theirs_stream:12,.0f} user records/s")
    print(f"  ratio ours / aws-kinesis-agg (list):      {ours / theirs_list:.2f}")
    label = "ours, iter_deaggregate, records discarded:"
    print(f"  {label:51}{ours_stream:12,.0f} user records/s")
    print(f"  ratio ours / aws-kinesis-agg (generator): {ours_stream / theirs_stream:.2f}")

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
    results.run(main, "aggregation", "KPL de-aggregation and aggregation against aws-kinesis-agg")
