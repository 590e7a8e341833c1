"""One KCL-style worker's AWS side: clients, lease table, shard sync, lease coordinator."""

from __future__ import annotations

from typing import Callable

from ..aws import ClientSpec
from ..leases.coordinator import LeaseCoordinator
from ..leases.dynamodb import LeaseTable
from ..leases.shard_sync import ShardSync
from ..leases.timing import LeaseTimings
from ..settings import StreamSettings


class Worker:
    """Builds (does not start) what a receiver needs to hold leases on one stream."""

    def __init__(
        self,
        settings: StreamSettings,
        credentials: dict,
        on_lease_gained: Callable,
        on_lease_lost: Callable,
    ) -> None:
        self.kinesis_spec = ClientSpec(
            "kinesis", settings.region_name, settings.endpoint_url, credentials.get("kinesis")
        )
        # Lease calls must end well inside a renewal interval (leases/timing.py).
        timings = LeaseTimings.from_failover(settings.failover_time_s)
        self.dynamodb_spec = ClientSpec(
            "dynamodb",
            settings.region_name,
            settings.dynamodb_endpoint_url,
            credentials.get("dynamodb"),
            read_timeout_s=timings.client_read_timeout_s,
        )
        self.table = LeaseTable(
            self.dynamodb_spec.client(), settings.app_name, renew_backoff=timings.renew_backoff
        )
        self.shard_sync = ShardSync(
            self.kinesis_spec.client(),
            settings.stream_name,
            self.table,
            settings.initial_position,
        )
        self.coordinator = LeaseCoordinator(
            self.table,
            settings.worker_id,
            failover_time_s=settings.failover_time_s,
            max_leases_for_worker=settings.max_leases_for_worker,
            max_leases_to_steal=settings.max_leases_to_steal,
            shard_sync=self.shard_sync,
            shard_sync_interval_s=settings.shard_sync_interval_s,
            on_lease_gained=on_lease_gained,
            on_lease_lost=on_lease_lost,
        )
