"""createStream's receiver and the kcl daemon build their lease side with one assembly."""

from kinesis_dstream.dstream.lease_setup import build_lease_worker
from kinesis_dstream.dstream.settings import StreamSettings
from kinesis_dstream.leases.timing import LeaseTimings
from kinesis_dstream.multilang.properties import parse_properties

KNOBS = {
    "stream_name": "orders",
    "initial_position": "TRIM_HORIZON",
    "worker_id": "host-7",
    "failover_time_s": 6.0,
    "max_leases_for_worker": 3,
    "max_leases_to_steal": 2,
    "shard_sync_interval_s": 30.0,
}


def assert_assembled_from(worker, application_name):
    coordinator = worker.coordinator
    assert worker.table.table_name == application_name
    assert worker.shard_sync.stream_name == "orders"
    assert (coordinator.worker_id, coordinator.failover_time_s) == ("host-7", 6.0)
    assert (coordinator.max_leases_for_worker, coordinator.max_leases_to_steal) == (3, 2)
    assert coordinator.shard_sync is worker.shard_sync
    assert coordinator.shard_sync_interval_s == 30.0
    # lease calls end well inside a renewal interval: the client's timeout comes from there
    timeout = LeaseTimings.from_failover(6.0)
    assert worker.dynamodb.meta.config.read_timeout == timeout.client_read_timeout_s


def test_create_stream_settings_build_the_one_lease_worker(local_aws):
    settings = StreamSettings(
        stream_id="x",
        app_name="orders-app",
        endpoint_url=local_aws.endpoint_url,
        region_name=local_aws.region_name,
        checkpoint_interval_s=1.0,
        storage_level=None,
        transform=bytes,
        dynamodb_endpoint_url=local_aws.endpoint_url,
        **KNOBS,
    )
    spec, worker = build_lease_worker(settings, {}, lambda lease: None, lambda k, r: None)
    assert spec.service == "kinesis" and spec.endpoint_url == local_aws.endpoint_url
    assert_assembled_from(worker, "orders-app")


def test_the_kcl_daemon_builds_the_same_lease_worker(local_aws, monkeypatch):
    from kinesis_dstream.multilang.daemon import MultiLangDaemon

    for name, value in local_aws.env().items():
        monkeypatch.setenv(name, value)
    config = parse_properties(
        {
            "executableName": "app.py",
            "streamName": "orders",
            "applicationName": "orders-kcl",
            "regionName": local_aws.region_name,
            "initialPositionInStream": "TRIM_HORIZON",
            "workerId": "host-7",
            "failoverTimeMillis": "6000",
            "maxLeasesForWorker": "3",
            "maxLeasesToStealAtOneTime": "2",
            "shardSyncIntervalMillis": "30000",
            "kinesisEndpoint": local_aws.endpoint_url,
            "dynamoDBEndpoint": local_aws.endpoint_url,
        }
    )
    daemon = MultiLangDaemon(config)
    assert_assembled_from(daemon, "orders-kcl")


def test_the_kcl_daemon_uses_the_files_table_name(local_aws, monkeypatch):
    """``tableName`` (KCL 2.x/3.x) names the lease table; the application name stays the
    worker's application (as the Java daemon's LeaseManagementConfig)."""
    from kinesis_dstream.multilang.daemon import MultiLangDaemon

    for name, value in local_aws.env().items():
        monkeypatch.setenv(name, value)
    config = parse_properties(
        {
            "executableName": "app.py",
            "streamName": "orders",
            "applicationName": "orders-kcl",
            "tableName": "orders-fleet-leases",
            "workerIdentifier": "host-8",
            "regionName": local_aws.region_name,
            "kinesisEndpoint": local_aws.endpoint_url,
            "dynamoDBEndpoint": local_aws.endpoint_url,
            "retrievalMode": "POLLING",
        }
    )
    daemon = MultiLangDaemon(config)
    assert daemon.table.table_name == "orders-fleet-leases"
    assert daemon.worker_id == "host-8"
