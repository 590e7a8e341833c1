"""One KCL-style worker's lease side, assembled once: lease table, shard sync, coordinator.

``createStream``'s receiver and the ``kinesis-dstream kcl`` daemon both hold leases
through a :class:`LeaseWorker`, so what a worker is (its timings, the read timeout of its
DynamoDB client, how it syncs shards and balances leases) is decided here for both: a
change to how our workers join a fleet is made once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Protocol

from .coordinator import LeaseCoordinator, default_worker_id
from .dynamodb import LeaseTable
from .fleet import FleetWatch
from .listeners import LeaseListeners
from .shard_sync import ShardSync
from .timing import LeaseManagementConfig


class WorkerSettings(Protocol):
    """Settings that name a worker's fields as :class:`LeaseWorkerConfig` and
    :class:`~.timing.LeaseManagementConfig` do (createStream's StreamSettings, the kcl
    daemon's MultiLangConfig); read only."""

    @property
    def stream_name(self) -> str: ...

    @property
    def initial_position(self) -> str: ...

    @property
    def worker_id(self) -> Optional[str]: ...

    @property
    def failover_time_s(self) -> float: ...

    @property
    def max_leases_for_worker(self) -> Optional[int]: ...

    @property
    def max_leases_to_steal(self) -> int: ...

    @property
    def shard_sync_interval_s(self) -> float: ...


@dataclass(frozen=True)
class LeaseWorkerConfig:
    """Who the worker is and what it reads (the identity half of the KCL's
    ``LeaseManagementConfig``); how it holds and balances leases is ``lease_management``."""

    #: The lease table's name (the KCL's application name).
    application_name: str
    stream_name: str
    #: Where a new lease starts: LATEST, TRIM_HORIZON or AT_TIMESTAMP.
    initial_position: str
    worker_id: Optional[str] = None
    lease_management: LeaseManagementConfig = field(default_factory=LeaseManagementConfig)
    #: The lease table; None: the application name (the KCL's ``tableName`` default).
    table_name: Optional[str] = None

    @classmethod
    def of(
        cls, application_name: str, settings: WorkerSettings, table_name: Optional[str] = None
    ) -> LeaseWorkerConfig:
        """From settings that name the worker's fields as this class and
        :class:`~.timing.LeaseManagementConfig` do (createStream's StreamSettings, the kcl
        daemon's MultiLangConfig)."""
        lease_management = LeaseManagementConfig.from_failover(
            settings.failover_time_s,
            max_leases_for_worker=settings.max_leases_for_worker,
            max_leases_to_steal=settings.max_leases_to_steal,
            shard_sync_interval_s=settings.shard_sync_interval_s,
        )
        return cls(
            application_name,
            settings.stream_name,
            settings.initial_position,
            settings.worker_id,
            lease_management,
            table_name,
        )

    @property
    def lease_table_name(self) -> str:
        return self.table_name or self.application_name


class LeaseWorker:
    """Builds (does not start) a worker's lease table, shard sync, fleet watch and
    coordinator.

    ``kinesis`` is the worker's Kinesis client; ``listeners`` are told of the leases it
    gains, loses and hands off. ``dynamodb_client`` builds its DynamoDB client for a read
    timeout: lease calls must end well inside a renewal interval
    (:mod:`.timing`), so the timeout comes from the worker's failover time. The
    coordinator is started and stopped by the owner (``worker.coordinator.start()``).
    """

    def __init__(
        self,
        config: LeaseWorkerConfig,
        kinesis: Any,
        dynamodb_client: Callable[[float], Any],
        listeners: Optional[LeaseListeners] = None,
    ) -> None:
        timings = config.lease_management.timings
        self.config = config
        self.dynamodb = dynamodb_client(timings.client_read_timeout_s)
        self.table = LeaseTable(
            self.dynamodb, config.lease_table_name, renew_backoff=timings.renew_backoff
        )
        worker_id = config.worker_id or default_worker_id()
        #: Which KCL fleet the table belongs to (2.x: take and steal; 3.x: follow).
        self.fleet = FleetWatch(
            self.dynamodb, config.application_name, config.lease_table_name, worker_id
        )
        self.shard_sync = ShardSync(
            kinesis, config.stream_name, self.table, config.initial_position
        )
        self.coordinator = LeaseCoordinator(
            self.table,
            worker_id,
            config.lease_management,
            listeners=listeners,
            shard_sync=self.shard_sync,
            fleet=self.fleet,
        )
