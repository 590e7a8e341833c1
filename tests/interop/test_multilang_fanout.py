"""``kinesis-dstream kcl`` reads with enhanced fan-out where the Java daemon would.

The Java daemon's ``retrievalMode`` DEFAULT is fan-out unless a polling property is set
(``multilang/config/RetrievalMode.java``, ``decideForDefault``); its consumer name
defaults to the application name. Kinesis on ministack (it speaks SubscribeToShard),
the lease table on moto.
"""

from __future__ import annotations

import sys
from collections import Counter

from kinesis_dstream.multilang import load_properties
from kinesis_dstream.retrieval.consumers import list_consumers
from kinesis_dstream.retrieval.streams import ensure_stream

from ..support.waiting import wait_until
from .test_multilang_daemon import (
    PROCESSOR,
    child_env,
    leases,
    put_all,
    records_seen,
    running,
    write_properties,
)


def test_a_file_without_polling_properties_reads_with_fan_out(
    ministack, local_aws, kclpy, unique_name, tmp_path, monkeypatch
):
    for key, value in ministack.env().items():
        if key != "AWS_ENDPOINT_URL":
            monkeypatch.setenv(key, value)
    kinesis = ministack.client("kinesis")
    ensure_stream(kinesis, unique_name, 2)
    sent = put_all(kinesis, unique_name, 30, "f")
    props = {
        "executableName": f"{sys.executable} {PROCESSOR}",
        "streamName": unique_name,
        "applicationName": unique_name,
        "regionName": ministack.region_name,
        "AWSCredentialsProvider": "DefaultAWSCredentialsProviderChain",
        "initialPositionInStream": "TRIM_HORIZON",
        "kinesisEndpoint": ministack.endpoint_url,
        "dynamoDBEndpoint": local_aws.endpoint_url,
        "failoverTimeMillis": "3000",
        "shardSyncIntervalMillis": "1000",
        "workerIdentifier": "efo-worker",
    }
    config = load_properties(str(write_properties(tmp_path / "app.properties", **props)))
    assert config.retrieval_mode == "FANOUT"
    out = tmp_path / "out"
    out.mkdir()
    with running(config, child_env(kclpy, out)) as run:
        wait_until(
            lambda: {r["pk"] for r in records_seen(out)} >= set(sent), 90, "every record"
        )
        more = put_all(kinesis, unique_name, 20, "g")  # pushed to the open subscriptions
        wait_until(
            lambda: {r["pk"] for r in records_seen(out)} >= set(more), 60, "the later records"
        )
        assert run.daemon.consumer_arn is not None
        assert run.stop() == 0
    consumers = list_consumers(kinesis, unique_name)
    assert [c.name for c in consumers] == [unique_name]  # the KCL's default consumer name
    assert consumers[0].arn == run.daemon.consumer_arn
    seen = Counter(r["pk"] for r in records_seen(out))
    assert set(seen) == set(sent) | set(more) and set(seen.values()) == {1}
    table = leases(local_aws, unique_name)
    assert {lease.lease_owner for lease in table.values()} == {None}  # released at the stop
    assert set(table) == {"shardId-000000000000", "shardId-000000000001"}
