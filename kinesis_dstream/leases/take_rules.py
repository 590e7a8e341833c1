"""Which leases a worker should take: expiry by observation and the KCL 2.x rules.

Pure logic with an injected clock, so the arithmetic is tested without DynamoDB.

Expiry never compares clocks between machines. A worker remembers, for each lease, the
counter it last saw and when (by its own monotonic clock) it saw the counter change. A
lease is expired when it has no owner, or when its counter has not moved for
``failover_time_s``. A lease seen for the first time with an owner counts as just renewed,
so a new worker waits a full failover period before taking it.
"""

from __future__ import annotations

import math
import random
import time
from collections import Counter
from collections.abc import Iterable
from typing import Callable, Optional

from .lease import Lease


class LeaseObserver:
    """Remembers when each lease's counter last changed, as seen by this worker."""

    def __init__(self, failover_time_s: float, clock: Callable[[], float] = time.monotonic):
        self.failover_time_s = failover_time_s
        self._clock = clock
        self._seen: dict = {}  # lease key -> (counter, monotonic time of last change)

    def observe(self, leases: Iterable[Lease]) -> None:
        """Record a scan of the table; leases no longer present are forgotten."""
        now = self._clock()
        seen = {}
        for lease in leases:
            previous = self._seen.get(lease.lease_key)
            if previous is not None and previous[0] == lease.lease_counter:
                seen[lease.lease_key] = previous
            else:
                seen[lease.lease_key] = (lease.lease_counter, now)
        self._seen = seen

    def is_expired(self, lease: Lease) -> bool:
        if lease.lease_owner is None:
            return True
        seen = self._seen.get(lease.lease_key)
        if seen is None or seen[0] != lease.lease_counter:
            return False  # not observed long enough to judge
        return self._clock() - seen[1] > self.failover_time_s


def lease_counts(leases: Iterable[Lease], expired: set, worker_id: str) -> Counter:
    """Leases per live owner (owners of leases that are not expired), with us at 0 or more."""
    counts: Counter = Counter()
    counts[worker_id] = 0
    for lease in leases:
        if lease.lease_key not in expired and lease.lease_owner is not None:
            counts[lease.lease_owner] += 1
    return counts


def leases_to_take(
    leases: list,
    expired: set,
    worker_id: str,
    *,
    max_leases_for_worker: Optional[int] = None,
    max_leases_to_steal: int = 1,
    rng: Optional[random.Random] = None,
) -> list:
    """The leases ``worker_id`` should try to take now (KCL 2.x's DynamoDBLeaseTaker).

    ``leases`` are the leases that need a reader (finished ones left out); ``expired`` the
    keys of those that are expired or unowned. Target = ceil(leases / live workers), at
    least 1, at most ``max_leases_for_worker``. Expired leases are taken first; only when
    there are none, steal from the single most-loaded worker: up to what it holds over
    the target, or 1 if it holds exactly the target and we need more than 1; never more
    than ``max_leases_to_steal`` a pass.
    """
    rng = rng or random.Random()
    if not leases:
        return []
    counts = lease_counts(leases, expired, worker_id)
    workers = len(counts)
    target = 1 if workers >= len(leases) else math.ceil(len(leases) / workers)
    if max_leases_for_worker is not None:
        target = min(target, max_leases_for_worker)
    needed = target - counts[worker_id]
    if needed <= 0:
        return []
    available = [lease for lease in leases if lease.lease_key in expired]
    if available:
        rng.shuffle(available)  # so that workers starting together spread out
        return available[:needed]
    most_loaded, most = max(counts.items(), key=lambda item: (item[1], item[0]))
    if most_loaded == worker_id or most < target:
        return []
    steal = min(needed, most - target)
    if needed > 1 and steal == 0:
        steal = 1
    steal = min(steal, max_leases_to_steal)
    candidates = [lease for lease in leases if lease.lease_owner == most_loaded]
    rng.shuffle(candidates)
    return candidates[:steal]
