"""End to end: a child that writes malformed lines between its good ones costs no shard,
no checkpoint and no daemon (``kinesis-dstream kcl`` on moto, the scripted child of
``tests/support/scripts/bad_lines_child.py``)."""

from __future__ import annotations

from kinesis_dstream.multilang import load_properties

from ..support.bad_lines_run import child_command, child_env, put_per_shard, stage
from ..support.child_lines import BETWEEN, FATAL_TO_JAVA
from ..support.waiting import wait_until
from .test_multilang_daemon import base_props, events, leases, running, write_properties


def test_malformed_lines_between_good_ones_cost_no_shard_and_no_checkpoint(
    aws_env, unique_name, tmp_path, caplog
):
    local_aws = aws_env
    scene = stage(local_aws, unique_name, tmp_path)
    last, out = scene.last, scene.out
    for gate in ("table-read", "fatal-go"):  # nobody to wait for here
        (out / gate).touch()
    props = base_props(local_aws, unique_name, unique_name, child_command())
    config = load_properties(str(write_properties(tmp_path / "app.properties", **props)))
    env = child_env(
        out,
        BAD_LINES_PROBE_SHARD=scene.probed,  # every case of child_lines, in its first batch
        BAD_LINES_FATAL_SHARD=scene.other,  # a `null` line, which ends the Java daemon
        BAD_LINES_FATAL_BETWEEN="1",  # and before every answer, on both shards
    )

    def checkpoints() -> dict:
        return {
            key: (lease.checkpoint.sequence_number, lease.checkpoint.sub_sequence_number)
            for key, lease in leases(local_aws, unique_name).items()
        }

    with caplog.at_level("INFO", logger="kinesis_dstream"), running(config, env) as run:
        wait_until(
            lambda: checkpoints() == {shard: (seq, 0) for shard, seq in last.items()},
            60,
            "each shard checkpointed at its last record, through the malformed lines",
            detail=lambda: str(checkpoints()),
        )
        assert [e["event"] for e in events(out) if e["event"] in ("probed", "fatal")] != []
        last = put_per_shard(scene.kinesis, unique_name, scene.shards, 3, "b")  # a 2nd batch
        wait_until(
            lambda: checkpoints() == {shard: (seq, 0) for shard, seq in last.items()},
            60,
            "each shard checkpointed at its new last record",
            detail=lambda: str(checkpoints()),
        )
        owners = {lease.lease_owner for lease in leases(local_aws, unique_name).values()}
        assert owners == {run.daemon.worker_id}  # every shard still held
        assert run.thread.is_alive() and run.daemon.exit_code in (None, 0)
        assert run.stop() == 0
    seen = events(out)
    assert {e["event"] for e in seen} >= {"initialize", "probed", "fatal", "checkpoint"}
    assert not [e for e in seen if e["event"] == "checkpoint" and e["error"]]
    assert len({e["pid"] for e in seen}) == 2  # one child a shard: none was restarted
    skipped = [r for r in caplog.records if "skipping unexpected line" in r.getMessage()]
    per_answer = len(BETWEEN) + len(FATAL_TO_JAVA)
    assert len(skipped) >= 2 * 3 * per_answer  # initialize and two batches, per shard
    done = [r.getMessage() for r in caplog.records if "worker done" in r.getMessage()]
    assert len(done) == 2 and all("lines of the child's stdout skipped" in m for m in done)
