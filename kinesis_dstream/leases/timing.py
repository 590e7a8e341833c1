"""A worker's lease-management settings, as the KCL's ``LeaseManagementConfig`` groups
them (:class:`LeaseManagementConfig`), and every lease timing derived from one number:
the failover time (:class:`LeaseTimings`, as the KCL derives its intervals from
``failoverTimeMillis``).

- Renew every ``failover / 3``; take every ``2 x (failover + 25 ms)``.
- A renewal call must end within ``renewal_timeout_s = failover / 6``, half a renewal
  interval: then a hung call is over before the next pass tries its lease again, so one
  hang costs one renewal, never the lease. Its worst case is the renewal retry budget
  plus two reads (the write, and the read-back after a retried write, see
  :meth:`~.dynamodb.LeaseTable.renew`), so the lease client's read timeout is
  ``failover / 20`` and the budget ``0.035 x failover``: 1.35 s at 10 s, inside 1.67 s.
  Not counted there: a renewal after a write of ours that got no answer first reads the
  lease back (:func:`~.lease_writes.settle_unanswered`), a third read, 1.85 s at 10 s. That
  is over the renewal timeout but under the interval (3.33 s): the call still ends
  before the next pass, so one hang still costs one renewal, never the lease.
  The read timeout never goes below 0.5 s: shorter failover times are for tests against
  local servers, where a smaller timeout would only add spurious failures.
- A lease waiting on its parents has them read every ``parent_poll_interval_s``
  (0.5 s, or the renewal interval if shorter) for its first
  ``parent_poll_fast_for_s`` (60 s) of waiting, then every renewal interval. A parent
  ends while it is read at its tip, so a child usually waits seconds: it starts within
  half a second of its last parent's end, and a long wait (a parent with a backlog)
  costs no more reads than before. The KCL polls every ``parentShardPollIntervalMillis``
  (10 s).
- :meth:`LeaseCoordinator.stop <.coordinator.LeaseCoordinator.stop>` returns within
  ``release_timeout_s + join_timeout_s`` (``failover + failover / 2``): releases get
  the failover time at most, since a release that cannot land by then is moot (every
  other worker judges the lease expired anyway), and thread joins get the rest.

The receiver builds its DynamoDB client and lease table from these values::

    timings = LeaseTimings.from_failover(settings.failover_time_s)
    spec = ClientSpec("dynamodb", region, endpoint, credentials,
                      read_timeout_s=timings.client_read_timeout_s)
    table = LeaseTable(spec.client(), app_name, renew_backoff=timings.renew_backoff)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from ..backoff import Backoff

#: The KCL's default failover time (``failoverTimeMillis`` 10000).
DEFAULT_FAILOVER_TIME_S = 10.0
#: How often shard sync lists the stream's shards (createStream's and the daemon's default).
DEFAULT_SHARD_SYNC_INTERVAL_S = 60.0
#: The KCL's ``maxLeasesToStealAtOneTime`` default.
DEFAULT_MAX_LEASES_TO_STEAL = 1
#: The KCL's ``gracefulLeaseHandoffTimeoutMillis`` default.
DEFAULT_HANDOFF_TIMEOUT_S = 30.0
#: The KCL adds this to the failover time for its taker interval.
TAKER_EPSILON_S = 0.025
#: The KCL renews on a pool of 20 threads.
DEFAULT_RENEWAL_THREADS = 20
_MIN_READ_TIMEOUT_S = 0.5
#: A lease whose gained listener failed is not taken again for this many taker passes.
_REJECTED_PASSES = 3
#: How often a lease that has just begun to wait on its parents has them read, and for
#: how long after it began to wait (then every renewal interval).
PARENT_POLL_FAST_S = 0.5
PARENT_POLL_FAST_FOR_S = 60.0


@dataclass(frozen=True)
class LeaseTimings:
    """The lease protocol's intervals, timeouts and retry budget, in seconds."""

    failover_time_s: float
    renewal_interval_s: float
    taker_interval_s: float
    renewal_timeout_s: float
    client_read_timeout_s: float
    renew_backoff: Backoff
    join_timeout_s: float
    release_timeout_s: float
    rejected_retry_s: float
    parent_poll_interval_s: float = PARENT_POLL_FAST_S
    parent_poll_fast_for_s: float = PARENT_POLL_FAST_FOR_S

    def __post_init__(self) -> None:
        for name in (
            "failover_time_s",
            "renewal_interval_s",
            "taker_interval_s",
            "renewal_timeout_s",
            "client_read_timeout_s",
            "join_timeout_s",
            "release_timeout_s",
            "parent_poll_interval_s",
        ):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be > 0, got {getattr(self, name)}")
        if self.renewal_interval_s >= self.failover_time_s:
            raise ValueError(
                f"renewal_interval_s ({self.renewal_interval_s}) must be below the failover "
                f"time ({self.failover_time_s}), or every lease is fenced between renewals"
            )

    @classmethod
    def from_failover(cls, failover_time_s: float = DEFAULT_FAILOVER_TIME_S) -> LeaseTimings:
        """The timings for a failover time, as the module docstring derives them."""
        if failover_time_s <= 0:
            raise ValueError(f"failover_time_s must be > 0, got {failover_time_s}")
        f = failover_time_s
        taker_interval_s = 2 * (f + TAKER_EPSILON_S)
        return cls(
            failover_time_s=f,
            renewal_interval_s=f / 3,
            taker_interval_s=taker_interval_s,
            renewal_timeout_s=f / 6,
            client_read_timeout_s=max(_MIN_READ_TIMEOUT_S, f / 20),
            renew_backoff=Backoff(
                initial_delay_s=f / 500,
                max_delay_s=f / 50,
                max_attempts=3,
                max_elapsed_s=0.035 * f,
            ),
            join_timeout_s=max(1.0, f / 2),
            release_timeout_s=f,
            rejected_retry_s=_REJECTED_PASSES * taker_interval_s,
            parent_poll_interval_s=min(PARENT_POLL_FAST_S, f / 3),
        )

    def parent_read_interval_s(self, waited_s: float) -> float:
        """How often a lease that has waited ``waited_s`` on its parents reads them."""
        if waited_s < self.parent_poll_fast_for_s:
            return self.parent_poll_interval_s
        return self.renewal_interval_s

    @property
    def renewal_call_bound_s(self) -> float:
        """Worst case of one renewal with this budget and read timeout (write + read-back).
        Not counted: one more read timeout after a write that got no answer (module doc)."""
        return self.renew_backoff.max_elapsed_s + 2 * self.client_read_timeout_s


def renewal_pool_width(client_connections: Optional[int]) -> int:
    """The KCL's 20 threads, but fewer than the client's connections: two stay free for
    the taker's scan and for checkpoints, so no call waits for (or reopens) a connection."""
    if client_connections is None:
        return DEFAULT_RENEWAL_THREADS
    return max(1, min(DEFAULT_RENEWAL_THREADS, client_connections - 2))


@dataclass(frozen=True)
class LeaseManagementConfig:
    """How a worker holds and balances its leases (the KCL's ``LeaseManagementConfig``);
    units in the names, defaults the KCL's. Who the worker is, the stores it writes and
    the listeners it tells are the coordinator's other arguments."""

    #: Every interval and bound, from the failover time (:meth:`from_failover`).
    timings: LeaseTimings = field(default_factory=LeaseTimings.from_failover)
    #: The KCL's ``maxLeasesForWorker`` (None: no cap).
    max_leases_for_worker: Optional[int] = None
    #: The KCL's ``maxLeasesToStealAtOneTime``: steals a taker pass, from one worker.
    max_leases_to_steal: int = DEFAULT_MAX_LEASES_TO_STEAL
    #: How often a taker pass runs the shard sync (when the coordinator has one).
    shard_sync_interval_s: float = DEFAULT_SHARD_SYNC_INTERVAL_S
    #: The lease-write pool's width (the KCL's ``maxLeaseRenewalThreads``); None: 20, but
    #: fewer than the lease client's connections (:func:`renewal_pool_width`).
    renewal_threads: Optional[int] = None
    #: The KCL's ``gracefulLeaseHandoffTimeoutMillis``: a KCL 3.x handoff not finished
    #: by then is transferred anyway.
    handoff_timeout_s: float = DEFAULT_HANDOFF_TIMEOUT_S

    def __post_init__(self) -> None:
        if self.max_leases_for_worker is not None and self.max_leases_for_worker < 1:
            raise ValueError(
                f"max_leases_for_worker must be >= 1, got {self.max_leases_for_worker}"
            )
        if self.max_leases_to_steal < 0:
            raise ValueError(f"max_leases_to_steal must be >= 0, got {self.max_leases_to_steal}")
        if self.renewal_threads is not None and self.renewal_threads < 1:
            raise ValueError(f"renewal_threads must be >= 1, got {self.renewal_threads}")

    @classmethod
    def from_failover(
        cls, failover_time_s: float = DEFAULT_FAILOVER_TIME_S, **settings: Any
    ) -> LeaseManagementConfig:
        """The timings derived from ``failover_time_s``; ``settings`` the other fields."""
        return cls(LeaseTimings.from_failover(failover_time_s), **settings)

    @property
    def failover_time_s(self) -> float:
        return self.timings.failover_time_s
