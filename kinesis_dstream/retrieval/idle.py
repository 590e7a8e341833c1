"""Quiet shards are read less often: how long an idle shard waits before its next read.

A read that found no record while the shard was at its tip (``MillisBehindLatest`` 0)
says the shard is *idle*. On a stream of hundreds of mostly quiet shards, reading every
idle shard every period is where the time goes (a GetRecords call per shard per round,
data or not). The KCL waits ``idleTimeBetweenReadsInMillis`` after an empty GetRecords;
here the wait doubles with each idle read in a row, from one poll period up to
``max_wait_s``, and the first record, any lag or a shard's end resets it. So a busy
shard is never slowed, and a shard that wakes up waits at most ``max_wait_s`` for its
first read. Used by createStream's fetch rounds and by the source's peeks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

#: Default longest wait of an idle shard between two reads: 0, off. An idle shard is read
#: every period, as the KCL reads it every ``idleTimeBetweenReadsInMillis``; reading quiet
#: shards less often saves calls but delays a waking shard's first record by up to the
#: wait, so it is the user's choice (``idleShardPollMs``), not the default.
DEFAULT_MAX_IDLE_WAIT_S = 0.0
#: The largest allowed: shard iterators expire after 5 minutes, and an iterator renewed
#: from a position that never moved (LATEST) would skip what arrived meanwhile.
MAX_IDLE_WAIT_S = 60.0


def is_idle_read(records: int, millis_behind_latest: Optional[int], shard_ended: bool) -> bool:
    """A read that makes a shard idle: nothing, not behind, not the shard's end.

    An unknown lag (``None``: a failed or partial read) is not idle: the shard may hold
    records it could not return.
    """
    return records == 0 and millis_behind_latest == 0 and not shard_ended


@dataclass(frozen=True)
class IdlePolling:
    """The wait between two reads of a shard after ``idle_reads`` idle reads in a row.

    ``period_s`` is the normal poll period (the fetch interval, ``minFetchPeriod``);
    ``max_wait_s`` at or below it turns idle polling off.
    """

    period_s: float
    max_wait_s: float = DEFAULT_MAX_IDLE_WAIT_S

    def __post_init__(self) -> None:
        if not self.period_s > 0:
            raise ValueError(f"the poll period must be > 0 s, got {self.period_s!r}")
        if not 0 <= self.max_wait_s <= MAX_IDLE_WAIT_S:
            raise ValueError(
                f"the longest idle wait must be in [0, {MAX_IDLE_WAIT_S:.0f}] s, "
                f"got {self.max_wait_s!r}"
            )

    def wait_s(self, idle_reads: int) -> float:
        """Seconds from a read to the next one: one period, doubling from the second
        idle read in a row, at most ``max_wait_s`` (never less than one period)."""
        if idle_reads <= 1 or self.max_wait_s <= self.period_s:
            return self.period_s
        return min(self.max_wait_s, self.period_s * 2.0 ** min(idle_reads - 1, 32))

    def next_read_at(self, read_planned_at: float, idle_reads: int) -> float:
        """When a shard read (planned at ``read_planned_at``) may be read next: the wait
        less a quarter period, so that the round one wait later is not missed by jitter."""
        return read_planned_at + self.wait_s(idle_reads) - self.period_s / 4
