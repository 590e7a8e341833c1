"""One KCL-style worker's lease side, assembled once: lease table, shard sync, coordinator.

``createStream``'s receiver and the ``kinesis-dstream kcl`` daemon both hold leases
through a :class:`LeaseWorker`, so what a worker is (its timings, the read timeout of its
DynamoDB client, how it syncs shards and balances leases) is decided here for both: a
change to how our workers join a fleet is made once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional, Protocol

from .coordinator import LeaseCoordinator, default_worker_id
from .dynamodb import LeaseTable
from .fleet import FleetWatch
from .lease import Lease
from .shard_sync import ShardSync
from .timing import DEFAULT_FAILOVER_TIME_S, DEFAULT_SHARD_SYNC_INTERVAL_S, LeaseTimings


class WorkerSettings(Protocol):
    """Settings that name a worker's fields as :class:`LeaseWorkerConfig` does
    (createStream's StreamSettings, the kcl daemon's MultiLangConfig); read only."""

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
    """Who the worker is and how it takes part in the fleet; units in the names."""

    #: The lease table's name (the KCL's application name).
    application_name: str
    stream_name: str
    #: Where a new lease starts: LATEST, TRIM_HORIZON or AT_TIMESTAMP.
    initial_position: str
    worker_id: Optional[str] = None
    failover_time_s: float = DEFAULT_FAILOVER_TIME_S
    max_leases_for_worker: Optional[int] = None
    max_leases_to_steal: int = 1
    shard_sync_interval_s: float = DEFAULT_SHARD_SYNC_INTERVAL_S
    #: The lease table; None: the application name (the KCL's ``tableName`` default).
    table_name: Optional[str] = None

    @classmethod
    def of(
        cls, application_name: str, settings: WorkerSettings, table_name: Optional[str] = None
    ) -> LeaseWorkerConfig:
        """From settings that name the worker's fields as this class does (createStream's
        StreamSettings, the kcl daemon's MultiLangConfig)."""
        return cls(
            application_name,
            settings.stream_name,
            settings.initial_position,
            settings.worker_id,
            settings.failover_time_s,
            settings.max_leases_for_worker,
            settings.max_leases_to_steal,
            settings.shard_sync_interval_s,
            table_name,
        )

    @property
    def lease_table_name(self) -> str:
        return self.table_name or self.application_name

    @property
    def timings(self) -> LeaseTimings:
        return LeaseTimings.from_failover(self.failover_time_s)


class LeaseWorker:
    """Builds (does not start) a worker's lease table, shard sync, fleet watch and
    coordinator.

    ``kinesis`` is the worker's Kinesis client. ``dynamodb_client`` builds its DynamoDB
    client for a read timeout: lease calls must end well inside a renewal interval
    (:mod:`.timing`), so the timeout comes from the worker's failover time. The
    coordinator is started and stopped by the owner (``worker.coordinator.start()``).
    """

    def __init__(
        self,
        config: LeaseWorkerConfig,
        kinesis: Any,
        dynamodb_client: Callable[[float], Any],
        *,
        on_lease_gained: Optional[Callable[[Lease], None]] = None,
        on_lease_lost: Optional[Callable[[str, str], None]] = None,
        on_lease_handoff: Optional[Callable[[str, str], None]] = None,
    ) -> None:
        timings = config.timings
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
            timings=timings,
            fleet=self.fleet,
            on_lease_handoff=on_lease_handoff,
            max_leases_for_worker=config.max_leases_for_worker,
            max_leases_to_steal=config.max_leases_to_steal,
            shard_sync=self.shard_sync,
            shard_sync_interval_s=config.shard_sync_interval_s,
            on_lease_gained=on_lease_gained,
            on_lease_lost=on_lease_lost,
        )
