"""Per-shard write pacing for the producer (Glue's and the KPL's ``producerRateLimit``).

A Kinesis shard takes 1,000 records and 1 MiB a second. The KPL (and Glue, which uses it)
limits what one producer sends each shard to a percentage of that (default 150 %: the
service's own buckets absorb short bursts), so one hot producer is throttled locally
instead of by the service. :class:`ShardRateLimiter` keeps two token buckets per shard and
says how long to wait before a PutRecords batch may go; pure logic with an injected clock.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Callable

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
        self._buckets: dict = {}  # shard id -> [records, bytes, at]

    def delay_s(self, usage: Iterable[tuple]) -> float:
        """Seconds to wait before sending ``usage``: (shard id, records, bytes) tuples.

        Takes the tokens (the caller sends right after waiting); a batch larger than a
        bucket waits for what it lacks at the rate.
        """
        now = self._clock()
        wait = 0.0
        for shard_id, records, size in usage:
            bucket = self._buckets.get(shard_id)
            if bucket is None:
                bucket = self._buckets[shard_id] = [self.records_per_s, self.bytes_per_s, now]
            elapsed = now - bucket[2]
            bucket[0] = min(self.records_per_s, bucket[0] + elapsed * self.records_per_s)
            bucket[1] = min(self.bytes_per_s, bucket[1] + elapsed * self.bytes_per_s)
            bucket[2] = now
            bucket[0] -= records
            bucket[1] -= size
            lack = max(-bucket[0] / self.records_per_s, -bucket[1] / self.bytes_per_s, 0.0)
            wait = max(wait, lack)
        return wait
