"""A fan-out kcl daemon rides out a Kinesis outage, as the Java daemon does.

The daemon reads with enhanced fan-out (no polling property) from ministack through
:class:`~.outage_proxy.OutageProxy`; the lease table is on moto. Mid-run the proxy cuts
every subscription and answers every Kinesis request with a bare HTTP 500 page (no AWS
error code), for longer than one subscription's retry budget: the daemon's shard
consumers must keep trying for as long as they hold their leases, log at a bounded rate,
and deliver every record, each once, when Kinesis serves again. The daemon never exits.
"""

from __future__ import annotations

import logging
import sys
import time
from collections import Counter

import pytest

from kinesis_dstream.multilang import load_properties
from kinesis_dstream.retrieval.streams import ensure_stream

from ..support.outage_proxy import OutageProxy
from ..support.waiting import wait_until
from .test_multilang_daemon import (
    PROCESSOR,
    child_env,
    put_all,
    records_seen,
    running,
    write_properties,
)


# A soak of an outage (28 s): left out of the README's command (under 20 minutes);
# .ci/run runs it after that.
@pytest.mark.slow
def test_a_fan_out_daemon_rides_out_an_outage_of_bare_500s(
    ministack, local_aws, kclpy, unique_name, tmp_path, monkeypatch, caplog
):
    for key, value in ministack.env().items():
        if key != "AWS_ENDPOINT_URL":
            monkeypatch.setenv(key, value)
    kinesis = ministack.client("kinesis")
    ensure_stream(kinesis, unique_name, 2)
    proxy = OutageProxy(ministack.endpoint_url).start()
    props = {
        "executableName": f"{sys.executable} {PROCESSOR}",
        "streamName": unique_name,
        "applicationName": unique_name,
        "regionName": ministack.region_name,
        "AWSCredentialsProvider": "DefaultAWSCredentialsProviderChain",
        "initialPositionInStream": "TRIM_HORIZON",
        "kinesisEndpoint": proxy.endpoint_url,
        "dynamoDBEndpoint": local_aws.endpoint_url,
        "failoverTimeMillis": "3000",
        "shardSyncIntervalMillis": "1000",
        "workerIdentifier": "efo-outage",
    }
    config = load_properties(str(write_properties(tmp_path / "app.properties", **props)))
    assert config.retrieval_mode == "FANOUT"
    out = tmp_path / "out"
    out.mkdir()
    try:
        with (
            caplog.at_level(logging.INFO, logger="kinesis_dstream"),
            running(config, child_env(kclpy, out)) as run,
        ):
            before = put_all(kinesis, unique_name, 20, "before")
            wait_until(lambda: {r["pk"] for r in records_seen(out)} >= set(before), 90, "before")
            proxy.down(True)
            down_at = time.monotonic()
            during = put_all(kinesis, unique_name, 20, "during")  # straight to ministack

            def a_shard_consumer_retrying():  # past SubscribeToShard's own retry budget
                assert run.thread.is_alive(), "the daemon exited during the outage"
                lines = [r.getMessage() for r in caplog.records if r.name.endswith("consumer")]
                return [line for line in lines if line.startswith(f"reading {unique_name}/")]

            wait_until(a_shard_consumer_retrying, 120, "a read failing past the subscription's")
            proxy.down(False)
            outage_s = time.monotonic() - down_at
            after = put_all(kinesis, unique_name, 20, "after")
            everything = set(before) | set(during) | set(after)
            wait_until(lambda: {r["pk"] for r in records_seen(out)} >= everything, 90, "all")
            assert run.thread.is_alive() and run.daemon.exit_code == 0  # it never stopped
            assert run.stop() == 0
    finally:
        proxy.stop()
    seen = Counter(r["pk"] for r in records_seen(out))
    assert set(seen) == everything and set(seen.values()) == {1}  # each once
    retry_lines = [
        r for r in caplog.records if r.levelno >= logging.WARNING and "failed (" in r.getMessage()
    ]
    # Bounded: per shard, a subscription's line and a shard consumer's line at most every
    # 30 s (each RetryLog), whatever the number of attempts.
    bound = 2 * 2 * (int(outage_s // 30) + 1)
    assert proxy.answered_500 > len(retry_lines) and len(retry_lines) <= bound, (
        proxy.answered_500,
        [r.getMessage() for r in retry_lines],
    )
    assert not [r for r in caplog.records if "failed for good" in r.getMessage()]
    print(
        f"outage of {outage_s:.1f}s: {proxy.answered_500} requests answered 500, "
        f"{len(retry_lines)} retry lines logged; {len(seen)} records, each once"
    )
