"""Malformed lines from a child under our daemon and under the real Java KCL 2.5.8 daemon.

One scripted child (``tests/support/scripts/bad_lines_child.py``), one properties file,
a two-shard stream on moto. On the first shard the child writes every case of
:func:`tests.support.child_lines.cases`, each followed by a sync checkpoint, and notes
the answers each line got; both daemons must give the answers ``child_lines`` records for
them (ours differs only where Java writes a number Kinesis would not have given). The test
then reads the lease table (Java writes the Arabic-Indic digits of the last case there;
ours wrote nothing for them). On the second shard the child writes ``null``: the Java
daemon exits 1 on it; ours reads on, checkpoints both shards' last records and stops
cleanly with 0.
"""

from __future__ import annotations

import pytest

from ..support.bad_lines_run import child_command, child_env, stage
from ..support.child_lines import ARABIC_INDIC, answers
from ..support.java_kcl import (
    Nghttpx,
    kcl_jars,
    skip_unless_tools,
    start_java_daemon,
    start_our_daemon,
    stop_process_group,
)
from ..support.waiting import wait_until
from .test_multilang_daemon import events, leases, write_properties

#: The Java daemon takes 60-80 s on an idle machine before its first lease.
JAVA_START_S = 300.0


def raw_checkpoint(local_aws, table: str, shard: str) -> tuple:
    """The lease item's checkpoint as stored (the library's own reader refuses a number
    Kinesis would not have given: this is how the test sees what Java wrote)."""
    item = local_aws.client("dynamodb").get_item(
        TableName=table, Key={"leaseKey": {"S": shard}}, ConsistentRead=True
    )["Item"]
    return item["checkpoint"]["S"], int(item.get("checkpointSubSequenceNumber", {"N": "0"})["N"])


def answer_of(replies: list):
    """The daemon's answers to one line as ``child_lines`` records them: None (skipped),
    or the one checkpoint message's [sequenceNumber, subSequenceNumber, error]."""
    if not replies:
        return None
    found = [[r["sequenceNumber"], r["subSequenceNumber"], r.get("error")] for r in replies]
    return found[0] if len(found) == 1 else found


@pytest.mark.parametrize(
    "kind", ["ours", pytest.param("java", marks=[pytest.mark.java, pytest.mark.slow])]
)
def test_both_daemons_answer_the_same_malformed_lines(kind, local_aws, unique_name, tmp_path):
    if kind == "java":
        skip_unless_tools()
    scene = stage(local_aws, unique_name, tmp_path)
    probed, fatal, last, out = scene.probed, scene.other, scene.last, scene.out
    proxy = Nghttpx(local_aws.port, tmp_path) if kind == "java" else None
    properties = write_properties(
        tmp_path / "app.properties",
        executableName=child_command(),
        streamName=unique_name,
        applicationName=unique_name,
        AWSCredentialsProvider="DefaultAWSCredentialsProviderChain",
        processingLanguage="python/3.11",
        initialPositionInStream="TRIM_HORIZON",
        regionName=local_aws.region_name,
        kinesisEndpoint=proxy.endpoint_url if proxy else local_aws.endpoint_url,
        dynamoDBEndpoint=local_aws.endpoint_url,
        cloudWatchEndpoint=local_aws.endpoint_url,
        metricsLevel="NONE",
        retrievalMode="POLLING",
        failoverTimeMillis="6000",
    )
    env = {
        **child_env(out, BAD_LINES_PROBE_SHARD=probed, BAD_LINES_FATAL_SHARD=fatal),
        **local_aws.env(),
    }
    env.pop("AWS_ENDPOINT_URL")
    log_path = tmp_path / f"{kind}.log"
    if kind == "java":
        daemon = start_java_daemon(kcl_jars(), properties, env, log_path)
    else:
        daemon = start_our_daemon(properties, env, log_path)

    def exited():
        return daemon.poll() is not None and f"the daemon exited {daemon.returncode}"

    def log_tail() -> str:
        return log_path.read_text(errors="replace")[-3000:]

    def noted(event: str, shard: str) -> list:
        return [e for e in events(out) if e["event"] == event and e["shard"] == shard]

    try:
        bound = JAVA_START_S if kind == "java" else 60
        wait_until(
            lambda: noted("probed", probed), bound, "every case", failed=exited, detail=log_tail
        )
        got = {e["name"]: answer_of(e["replies"]) for e in noted("probe", probed)}
        assert got == answers(last[probed], kind)
        assert all(e["sync_error"] == "IllegalArgumentException" for e in noted("probe", probed))
        # The last case: Arabic-Indic digits of the last record's sequence number.
        written = raw_checkpoint(local_aws, unique_name, probed)
        if kind == "java":
            assert written == (last[probed].translate(ARABIC_INDIC), 0)
        else:
            assert written == (last[probed], 0)
        (out / "table-read").touch()
        (out / "fatal-go").touch()
        if kind == "java":
            daemon.wait(120)  # the `null` line: Java's NullPointerException, then exit(1)
            assert daemon.returncode == 1
            assert "NullPointerException" in log_path.read_text(errors="replace")
            return
        wait_until(
            lambda: all(
                lease.checkpoint.sequence_number == last[key] and lease.lease_owner
                for key, lease in leases(local_aws, unique_name).items()
            ),
            60,
            "both shards checkpointed at their last records and still held",
            failed=exited,
            detail=log_tail,
        )
        assert noted("fatal", fatal) and daemon.poll() is None
        assert stop_process_group(daemon) == 0
    finally:
        stop_process_group(daemon, 9)
        if proxy:
            proxy.stop()
