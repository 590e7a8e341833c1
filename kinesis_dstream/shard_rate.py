"""Per-shard write pacing for the producer (Glue's and the KPL's ``producerRateLimit``).

A Kinesis shard takes 1,000 records and 1 MiB a second. The KPL (and Glue, which uses it)
limits what one producer sends each shard to a percentage of that (default 150 %: the
service's own buckets absorb short bursts), so one hot producer is throttled locally
instead of by the service. :class:`ShardRateLimiter` keeps two token buckets per shard
(:class:`~.token_bucket.TokenBucket`) and says how long to wait before a PutRecords batch
may go; pure logic with an injected clock.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Callable

from .token_bucket import TokenBucket

#: A shard's write limits.
SHARD_RECORDS_PER_S = 1000.0
SHARD_BYTES_PER_S = 1024.0 * 1024.0


class ShardRateLimiter:
    """Token buckets per shard (records and bytes), refilled at ``percent`` of the limits.

    Each bucket holds at most one second of its rate, so after an idle spell a producer
    may send a second's worth at once, then the rate. Not thread-safe: the producer holds
    its lock while it sends.
    """

    def __init__(self, percent: float, clock: Callable[[], float] = time.monotonic) -> None:
        if percent <= 0:
            raise ValueError(f"producerRateLimit must be > 0 (percent), got {percent}")
        self.records_per_s = SHARD_RECORDS_PER_S * percent / 100.0
        self.bytes_per_s = SHARD_BYTES_PER_S * percent / 100.0
        self._clock = clock
        self._buckets: dict = {}  # shard id -> (records bucket, bytes bucket)

    def delay_s(self, usage: Iterable[tuple]) -> float:
        """Seconds to wait before sending ``usage``: (shard id, records, bytes) tuples.

        Takes the tokens (the caller sends right after waiting); a batch larger than a
        bucket waits for what it lacks at the rate.
        """
        wait = 0.0
        for shard_id, records, size in usage:
            buckets = self._buckets.get(shard_id)
            if buckets is None:
                buckets = self._buckets[shard_id] = (
                    TokenBucket(self.records_per_s, clock=self._clock),
                    TokenBucket(self.bytes_per_s, clock=self._clock),
                )
            wait = max(wait, buckets[0].take(records), buckets[1].take(size))
        return wait
