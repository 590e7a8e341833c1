"""When the next fetch round starts: one round ends just before each batch time.

Batch ``t`` holds the rounds recorded before Spark cuts it, at wall-clock time ``t``
(batch times are multiples of the batch interval in epoch milliseconds, also after a
restart from a checkpoint). A round that ends just after a batch time waits a whole
batch interval for the next one, so free-running rounds add up to one fetch interval to
a record's latency for nothing. The pacer keeps rounds about ``fetch_interval_s`` apart
and times the last round before each batch time (its *closing* round) to end
:data:`MARGIN_S` before it: a free round that would still be running then is moved (by
less than a round's length) to become it, so rounds may come closer than the interval,
never closer than Kinesis allows (``maxRate``'s budget follows :attr:`RoundPacer.gap_s`).
Rounds as long as the interval run free, as does the one after a round that filled a
shard's read (a backlog is read back to back); a wall clock stepping back never makes a
wait. How long a round takes is estimated from the last few rounds that ran a Spark job (their 75th
percentile: one slow round does not move the plan).

Without a batch interval (rounds driven by hand, or before it is known) rounds run
``fetch_interval_s`` apart from each start, as before. Pure logic: the caller passes
the wall-clock time in.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Optional

from .settings import MIN_FETCH_INTERVAL_S

#: A closing round is planned to end this long before its batch time: Spark cuts the
#: batch at that time or just after it, never before.
MARGIN_S = 0.05
#: Assumed length of a round before any has run.
FIRST_ROUND_ESTIMATE_S = 0.3
#: How many recent rounds the estimate of a round's length looks at.
HISTORY = 8


class RoundPacer:
    """Start times of fetch rounds (epoch seconds); owned by the round thread."""

    def __init__(self, fetch_interval_s: float) -> None:
        self.fetch_interval_s = fetch_interval_s
        self.batch_interval_s: Optional[float] = None
        self._lengths: deque = deque(maxlen=HISTORY)
        self._last_start: Optional[float] = None
        #: The last round filled a shard's read (a backlog): the next starts as soon as
        #: Kinesis allows (:data:`MIN_FETCH_INTERVAL_S` after the last), unaligned.
        self.backlog = False
        #: Seconds from the last round's start to this one's (None: the first round).
        self.gap_s: Optional[float] = None

    def align(self, batch_interval_s: float) -> None:
        """Align rounds to batches ``batch_interval_s`` apart."""
        if not batch_interval_s > 0:
            raise ValueError(f"the batch interval must be > 0 s, got {batch_interval_s!r}")
        self.batch_interval_s = batch_interval_s

    def round_took(self, seconds: float) -> None:
        """A round that ran a Spark job took ``seconds`` from plan to record."""
        self._lengths.append(max(0.0, seconds))

    def round_length_s(self) -> float:
        """The expected length of the next round: the 75th percentile of recent ones."""
        if not self._lengths:
            return FIRST_ROUND_ESTIMATE_S
        ordered = sorted(self._lengths)
        return ordered[(3 * (len(ordered) - 1)) // 4]

    def next_start(self, now: float) -> float:
        """When the next round starts (epoch seconds, never before ``now``); also sets
        :attr:`gap_s`, the time since the last start (``maxRate`` budgets by it)."""
        last = self._last_start
        if last is not None and last > now + self.fetch_interval_s:
            last = None  # the wall clock stepped back: start afresh, never wait for it
        if last is None:
            free = now
        elif self.backlog:
            free = max(now, last + MIN_FETCH_INTERVAL_S)
        else:
            free = max(now, last + self.fetch_interval_s)
        batch_s = self.batch_interval_s
        length = self.round_length_s()
        if batch_s is not None and not self.backlog and length < self.fetch_interval_s:
            # Never two rounds closer than Kinesis allows (5 reads a second per shard).
            earliest = now if last is None else max(now, last + MIN_FETCH_INTERVAL_S)
            lead = length + MARGIN_S
            # The next batch time whose closing round can still start on time.
            batch_time = math.ceil((earliest + lead) / batch_s - 1e-6) * batch_s  # noise
            closing = max(earliest, batch_time - lead)
            # A free round now would still run then, or hold the closing round back by
            # the rate limit: it becomes the closing round (moved by less than a round).
            busy = min(max(length, MIN_FETCH_INTERVAL_S), self.fetch_interval_s)
            if closing <= free + busy:
                free = closing
        self.gap_s = None if last is None else free - last
        self._last_start = free
        return free
