"""A token bucket: how long to wait before using an amount of a rate, with an injected
clock (pure logic; the caller sleeps).

The bucket holds at most ``capacity`` tokens (one second of the rate by default) and
starts full, so after an idle spell a writer may use that much at once, then the rate.
:meth:`TokenBucket.take` takes the tokens at once, even into debt: the caller sends right
after waiting the time the debt takes to refill. Used by the producer's per-shard pace
(:mod:`.shard_rate`) and the Glue DynamoDB sink's write pace.
"""

from __future__ import annotations

import time
from typing import Callable, Optional


class TokenBucket:
    """``rate_per_s`` tokens a second, at most ``capacity`` held. Not thread-safe: each
    writer keeps its own (or holds its lock while it sends)."""

    def __init__(
        self,
        rate_per_s: float,
        capacity: Optional[float] = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if rate_per_s <= 0:
            raise ValueError(f"a token bucket's rate must be > 0, got {rate_per_s}")
        self.rate_per_s = rate_per_s
        self.capacity = rate_per_s if capacity is None else capacity
        self._clock = clock
        self._tokens = self.capacity
        self._at = clock()

    def take(self, amount: float) -> float:
        """Take ``amount`` tokens; the seconds to wait before using them (0 when the
        bucket held them)."""
        now = self._clock()
        self._tokens = min(self.capacity, self._tokens + (now - self._at) * self.rate_per_s)
        self._at = now
        self._tokens -= amount
        return max(0.0, -self._tokens / self.rate_per_s)
