"""Leases in the JVM KCL's table format: model, stores, renewer, taker, coordinator, sync."""

from .coordinator import LeaseCoordinator
from .dynamodb import LeaseTable
from .held import LeaseState
from .lease import Lease
from .listeners import LeaseListeners
from .memory import InMemoryLeaseRefresher
from .refresher import LeaseRefresher
from .renewer import RenewalStats
from .shard_sync import ShardSync
from .timing import DEFAULT_FAILOVER_TIME_S, LeaseManagementConfig, LeaseTimings

__all__ = [
    "DEFAULT_FAILOVER_TIME_S",
    "InMemoryLeaseRefresher",
    "Lease",
    "LeaseCoordinator",
    "LeaseListeners",
    "LeaseManagementConfig",
    "LeaseRefresher",
    "LeaseState",
    "LeaseTable",
    "LeaseTimings",
    "RenewalStats",
    "ShardSync",
]
