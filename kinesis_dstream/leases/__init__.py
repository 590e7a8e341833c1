"""Leases in the JVM KCL's table format: model, stores, renewer, taker, coordinator, sync."""

from .coordinator import DEFAULT_FAILOVER_TIME_S, LeaseCoordinator
from .dynamodb import LeaseTable
from .held import LeaseState
from .lease import Lease
from .memory import InMemoryLeaseRefresher
from .refresher import LeaseRefresher
from .renewer import RenewalStats
from .shard_sync import ShardSync
from .timing import LeaseTimings

__all__ = [
    "DEFAULT_FAILOVER_TIME_S",
    "InMemoryLeaseRefresher",
    "Lease",
    "LeaseCoordinator",
    "LeaseRefresher",
    "LeaseState",
    "LeaseTable",
    "LeaseTimings",
    "RenewalStats",
    "ShardSync",
]
