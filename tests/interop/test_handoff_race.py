"""A KCL 3.x graceful handoff where its race lives: an app that checkpoints every batch.

A scripted leader (:mod:`.kcl3_leader`) starts ``initiateGracefulLeaseHandoff`` at a
random point of the kcl daemon's batch cycle (read, ``processRecords``, the child's
checkpoint, the idle time), 20 times, while a producer keeps writing. The child's
checkpoint often comes before our renewer notices the handoff: it must be written as
the checkpoint owner, the child must get ``shutdownRequested`` (no refused checkpoint,
no ``leaseLost`` first), and the lease must go to the new owner with the old owner's
last processed record checkpointed. The leader then assigns the lease back to us: our
new child starts at that checkpoint, so over the 20 handoffs every record is processed
exactly once (the new owner re-reads nothing before the checkpoint).
"""

from __future__ import annotations

import logging
import random
import sys
import threading
import time

import pytest

from kinesis_dstream.multilang import load_properties
from kinesis_dstream.retrieval.streams import ensure_stream

from ..support.kcl3_leader import ScriptedLeader, create_kcl3_tables
from ..support.waiting import wait_until
from .test_multilang_daemon import (
    PROCESSOR,
    base_props,
    child_env,
    events,
    leases,
    running,
    write_properties,
)

HANDOFFS = 20
OURS = "py-old-owner"
NEW = "java-new-owner"
FOUND_BY_CHECKPOINT = "a checkpoint found the KCL 3.x handoff"


class Producer:
    """Puts one record every ``interval_s`` until stopped; remembers each one's key."""

    def __init__(self, kinesis, stream: str, interval_s: float = 0.04) -> None:
        self.kinesis, self.stream, self.interval_s = kinesis, stream, interval_s
        self.sent: list = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="test-producer")

    def start(self) -> Producer:
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            pk = f"pk-{len(self.sent)}"
            self.kinesis.put_record(StreamName=self.stream, Data=pk.encode(), PartitionKey=pk)
            self.sent.append(pk)

    def stop(self) -> None:
        self._stop.set()
        if self._thread.ident is not None:
            self._thread.join(10)
            assert not self._thread.is_alive()


# A soak of 20 handoffs (35 s): left out of the README's command (under 20 minutes);
# .ci/run runs it after that.
@pytest.mark.slow
def test_twenty_handoffs_at_random_points_of_the_batch_cycle(
    aws_env, kclpy, unique_name, tmp_path, caplog
):
    local_aws = aws_env
    kinesis, dynamodb = local_aws.client("kinesis"), local_aws.client("dynamodb")
    ensure_stream(kinesis, unique_name, 1)
    app = unique_name
    create_kcl3_tables(dynamodb, app, app)
    leader = ScriptedLeader(dynamodb, app, app, NEW)
    leader.set_client_version("CLIENT_VERSION_3X")
    props = base_props(
        local_aws,
        unique_name,
        app,
        f"{sys.executable} {PROCESSOR}",
        workerIdentifier=OURS,
        failoverTimeMillis="3000",
        idleTimeBetweenReadsInMillis="200",
    )
    config = load_properties(str(write_properties(tmp_path / "app.properties", **props)))
    out = tmp_path / "out"
    out.mkdir()
    seed = random.randrange(10**6)
    rng = random.Random(seed)
    producer = Producer(kinesis, unique_name)
    transfer_s: list = []
    try:
        leader.start()
        with (
            caplog.at_level(logging.INFO, logger="kinesis_dstream.leases"),
            running(config, child_env(kclpy, out, "batch")) as run,
        ):
            wait_until(lambda: leases(local_aws, app), 30, "the lease created")
            (key,) = leases(local_aws, app)
            producer.start()
            done_pids: set = set()
            for n in range(HANDOFFS):
                leader.assign(key, OURS)

                def a_new_child_processing():
                    pids = {e["pid"] for e in events(out) if e["event"] == "record"}
                    return pids - done_pids

                (pid,) = wait_until(a_new_child_processing, 30, f"handoff {n}: our child reading")
                time.sleep(rng.uniform(0.0, 0.5))  # a random point of its batch cycle
                started = time.monotonic()
                leader.initiate_handoff(key, OURS, NEW)

                def transferred():
                    lease = leases(local_aws, app)[key]
                    return lease.lease_owner == NEW and lease.checkpoint_owner is None

                wait_until(transferred, 30, f"handoff {n} (seed {seed}): the transfer")
                transfer_s.append(time.monotonic() - started)
                mine = [e for e in events(out) if e["pid"] == pid]
                kinds = [e["event"] for e in mine]
                assert "checkpoint_error" not in kinds, (n, seed, mine[-6:])
                assert "shutdown_requested" in kinds and "lease_lost" in kinds, (n, seed)
                assert kinds.index("shutdown_requested") < kinds.index("lease_lost"), (n, seed)
                last = [e for e in mine if e["event"] == "record"][-1]
                lease = leases(local_aws, app)[key]
                assert lease.checkpoint.sequence_number == last["seq"], (n, seed)
                done_pids.add(pid)
            producer.stop()
            leader.assign(key, OURS)
            wait_until(
                lambda: (
                    {e["pk"] for e in events(out) if e["event"] == "record"} >= set(producer.sent)
                ),
                60,
                "every record",
            )
            assert run.stop() == 0
    finally:
        producer.stop()
        leader.stop()
    seen = [e["pk"] for e in events(out) if e["event"] == "record"]
    assert sorted(seen) == sorted(producer.sent)  # each exactly once: nothing re-read
    by_checkpoint = sum(FOUND_BY_CHECKPOINT in r.getMessage() for r in caplog.records)
    print(
        f"{HANDOFFS} handoffs (seed {seed}), {len(seen)} records each once; found by the "
        f"child's checkpoint: {by_checkpoint}, by the renewer: {HANDOFFS - by_checkpoint}; "
        f"handoff to transfer: max {max(transfer_s):.2f}s"
    )
