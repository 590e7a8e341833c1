"""createStream's worker: its settings and credentials mapped onto the one
:class:`~..leases.worker.LeaseWorker` assembly (the kcl daemon maps its own)."""

from __future__ import annotations

from typing import Callable

from ..aws import ClientSpec
from ..leases.listeners import LeaseListeners
from ..leases.worker import LeaseWorker, LeaseWorkerConfig
from .settings import StreamSettings


def build_lease_worker(
    settings: StreamSettings,
    credentials: dict,
    on_lease_gained: Callable,
    on_lease_lost: Callable,
) -> tuple:
    """(the Kinesis client spec executors read with, the receiver's LeaseWorker)."""
    kinesis_spec = ClientSpec(
        "kinesis", settings.region_name, settings.endpoint_url, credentials.get("kinesis")
    )

    def dynamodb_client(read_timeout_s: float) -> object:
        return ClientSpec(
            "dynamodb",
            settings.region_name,
            settings.dynamodb_endpoint_url,
            credentials.get("dynamodb"),
            read_timeout_s=read_timeout_s,
        ).client()

    worker = LeaseWorker(
        LeaseWorkerConfig.of(settings.app_name, settings),
        kinesis_spec.client(),
        dynamodb_client,
        LeaseListeners(on_lease_gained=on_lease_gained, on_lease_lost=on_lease_lost),
    )
    return kinesis_spec, worker
