"""amazon-kclpy 1.4.4 apps (KCL 1.7.5's protocol) under ``kinesis-dstream kcl``, unchanged.

The 1.4.4 sdist's own ``samples/sample_kclpy_app.py`` runs from its own
``samples/sample.properties``, changed only in ``streamName`` and ``applicationName`` and
given the suite's endpoints; ``executableName = sample_kclpy_app.py`` as it stands (the
samples directory is on the children's ``PATH``, and its ``#!/usr/bin/env python`` finds
a Python there). The daemon finds the protocol from the child's own amazon_kclpy. The
sample records nothing per record and checkpoints every 60 s (and at a shard's end); it
prints what it does at ``shutdown`` on its stdout, which the daemon logs: so these tests
read the lease table, the daemon's per-shard delivery counts and that log.
``tests/support/scripts/kclpy1_processor.py`` (kclpy 1.x's first interface, noting every
record) is the app whose every record is checked.

Before the daemon knew KCL 1.x, the sample died on ``shutdownRequested``, ``leaseLost``
and ``shardEnded`` alike (``KeyError: 'k'`` in kclpy 1.4.4's ``dispatch``), and the
daemon exited 1.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from benchmarks.reshard import split
from kinesis_dstream.leases import LeaseTable
from kinesis_dstream.multilang import load_properties
from kinesis_dstream.multilang.protocol_version import ProtocolVersion
from kinesis_dstream.retrieval.streams import ensure_stream, list_shards

from ..support.faults import write_from_outside
from ..support.waiting import wait_until
from .test_multilang_daemon import (
    ROOT,
    events,
    leases,
    put_all,
    records_seen,
    running,
    start_daemon,
    write_properties,
)

PROCESSOR1 = ROOT / "tests" / "support" / "scripts" / "kclpy1_processor.py"
WORKER_DONE = re.compile(r"shard (\S+) worker done: ([^,]+), (\d+) records delivered")
#: What the sample prints at ``shutdown`` (stdout: the daemon logs it as a foreign line).
TERMINATED = "Was told to terminate, will attempt to checkpoint."
ZOMBIE = "Shutting down due to failover. Will not checkpoint."


def sample_properties(kclpy1: Path, path: Path, stream: str, kinesis: str, dynamodb: str) -> Path:
    """The sdist's sample.properties with this test's stream and application names and
    the suite's endpoints; nothing else changed."""
    text = (kclpy1 / "samples" / "sample.properties").read_text()
    text = re.sub(r"(?m)^streamName = .*$", f"streamName = {stream}", text)
    text = re.sub(r"(?m)^applicationName = .*$", f"applicationName = {stream}", text)
    path.write_text(text + f"\nkinesisEndpoint = {kinesis}\ndynamoDBEndpoint = {dynamodb}\n")
    return path


def sample_env(kclpy1: Path, tmp_path: Path) -> dict:
    """The children's environment: the samples directory and a ``python`` on ``PATH``,
    the 1.4.4 ``amazon_kclpy`` on ``PYTHONPATH`` (its install needs Maven)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    if not (bin_dir / "python").exists():
        (bin_dir / "python").symlink_to(sys.executable)
    path = os.pathsep.join([str(kclpy1 / "samples"), str(bin_dir), os.environ.get("PATH", "")])
    return {**os.environ, "PATH": path, "PYTHONPATH": str(kclpy1)}


def done_workers(log_text: str) -> list:
    """(shard, outcome, records delivered) of every worker that ended, from the log."""
    return [(s, o, int(n)) for s, o, n in WORKER_DONE.findall(log_text)]


def delivered(run, log_text: str, shard: str) -> int:
    """Records given to the children of ``shard``: ended workers' and the running one's."""
    ended = sum(n for s, _, n in done_workers(log_text) if s == shard)
    consumer = run.daemon.consumer(shard)
    return ended + (consumer.records_delivered if consumer is not None else 0)


def per_shard(sent: dict) -> Counter:
    return Counter(shard for shard, _, _ in sent.values())


def exit_codes(log_text: str, shard: str) -> list:
    return re.findall(rf"child \d+ of shard {re.escape(shard)} exited with (\S+)", log_text)


def child_stderr(caplog) -> list:
    return [r.getMessage() for r in caplog.records if r.name.endswith("child.stderr")]


def stdout_lines(log_text: str, shard: str, line: str) -> int:
    """How often the child of ``shard`` printed ``line`` on its stdout (the daemon logs it)."""
    return len(
        re.findall(rf"stdout of shard {re.escape(shard)}\b[^\n]*: {re.escape(line)}", log_text)
    )


@contextlib.contextmanager
def cli_daemon(properties: Path, env: dict, log_path: Path):
    """``kinesis-dstream kcl`` in a process of its own; killed if a test leaves it running."""
    daemon = start_daemon(properties, env, log_path)
    try:
        yield daemon
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait(10)


def failed(daemon) -> object:
    return daemon.poll() is not None and f"the daemon exited {daemon.poll()}"


@pytest.fixture
def sample(aws_env, kclpy1, unique_name, tmp_path):
    """(config, env) of the unchanged sample on the session's moto."""
    path = sample_properties(
        kclpy1, tmp_path / "sample.properties", unique_name, *[aws_env.endpoint_url] * 2
    )
    return load_properties(str(path)), sample_env(kclpy1, tmp_path)


def test_a_lease_taken_by_another_worker_gives_the_sample_shutdown_zombie(
    aws_env, sample, unique_name, caplog
):
    kinesis = aws_env.client("kinesis")
    ensure_stream(kinesis, unique_name, 2)
    sent = put_all(kinesis, unique_name, 30)
    counts = per_shard(sent)
    config, env = sample
    with caplog.at_level("INFO", logger="kinesis_dstream"), running(config, env) as run:
        assert run.daemon.protocol_version is ProtocolVersion.KCL_1X  # found from the child
        assert run.daemon.config.retrieval_mode == "POLLING"  # as KCL 1.x read this file
        wait_until(
            lambda: all(delivered(run, caplog.text, s) == n for s, n in counts.items()),
            60,
            "every record given to the sample",
        )
        lost, kept = sorted(counts)
        table = LeaseTable(aws_env.client("dynamodb"), unique_name)
        write_from_outside(table, lost, lambda lease: table.take(lease, "thief"), 30)
        wait_until(
            lambda: stdout_lines(caplog.text, lost, ZOMBIE), 30, "the sample's shutdown ZOMBIE"
        )
        wait_until(lambda: exit_codes(caplog.text, lost), 30, "the child of the lost shard ended")
        more = put_all(kinesis, unique_name, 20, "b")
        kept_more = per_shard(more)[kept]
        wait_until(
            lambda: delivered(run, caplog.text, kept) == counts[kept] + kept_more,
            60,
            "the other shard's later records",
        )
        assert run.daemon.exit_code == 0 and run.thread.is_alive()  # the daemon goes on
        assert run.stop() == 0
    assert exit_codes(caplog.text, lost)[0] == "0"  # ended cleanly at the end of its input
    assert (lost, "lease lost") in {(s, o) for s, o, _ in done_workers(caplog.text)}
    assert child_stderr(caplog) == []  # no traceback, no KeyError
    assert "KeyError" not in caplog.text


@pytest.mark.kinesalite
def test_a_split_gives_the_parents_sample_terminate_and_its_children_their_records(
    aws_env, kinesalite, kclpy1, unique_name, tmp_path, caplog
):
    kinesis = kinesalite.client("kinesis")
    ensure_stream(kinesis, unique_name, 1)
    first = put_all(kinesis, unique_name, 20, "a")
    path = sample_properties(
        kclpy1,
        tmp_path / "sample.properties",
        unique_name,
        kinesalite.endpoint_url,
        aws_env.endpoint_url,
    )
    config = load_properties(str(path))
    with (
        caplog.at_level("INFO", logger="kinesis_dstream"),
        running(config, sample_env(kclpy1, tmp_path)) as run,
    ):
        (parent,) = list_shards(kinesis, unique_name)
        parent_id = parent["ShardId"]
        wait_until(lambda: delivered(run, caplog.text, parent_id) == 20, 60, "the parent's records")
        split(kinesis, unique_name, parent)
        second = put_all(kinesis, unique_name, 40, "b")
        children = per_shard(second)
        assert len(children) == 2 and parent_id not in children
        wait_until(
            lambda: all(delivered(run, caplog.text, s) == n for s, n in children.items()),
            90,
            "the children's records",
        )
        assert run.stop() == 0
    table = leases(aws_env, unique_name)
    # The sample checkpointed at TERMINATE with no arguments: SHARD_END, and only then
    # did the children start.
    assert table[parent_id].checkpoint.is_shard_end
    assert stdout_lines(caplog.text, parent_id, TERMINATED) == 1
    outcomes = [(o, n) for s, o, n in done_workers(caplog.text) if s == parent_id]
    assert outcomes == [("shard end checkpointed", len(first))]
    assert all(exit_codes(caplog.text, s) == ["0"] for s in [parent_id, *children])
    assert child_stderr(caplog) == []


def test_a_sigterm_ends_a_kclpy_1x_app_cleanly_and_the_daemon_with_0(
    aws_env, kclpy1, unique_name, tmp_path
):
    """kclpy 1.x's first interface (a processor that checkpoints every batch), through
    the command line and a real SIGTERM."""
    kinesis = aws_env.client("kinesis")
    ensure_stream(kinesis, unique_name, 2)
    sent = put_all(kinesis, unique_name, 40)
    last = {}
    for shard, seq, _ in sent.values():
        last[shard] = max(last.get(shard, 0), int(seq))
    out = tmp_path / "out"
    out.mkdir()
    props = write_properties(
        tmp_path / "app.properties",
        executableName=f"{sys.executable} {PROCESSOR1}",
        streamName=unique_name,
        applicationName=unique_name,
        AWSCredentialsProvider="DefaultAWSCredentialsProviderChain",
        processingLanguage="python/2.7",
        initialPositionInStream="TRIM_HORIZON",
        kinesisEndpoint=aws_env.endpoint_url,
        dynamoDBEndpoint=aws_env.endpoint_url,
    )
    env = {**aws_env.env(), "PYTHONPATH": str(kclpy1), "KCLPY_OUT_DIR": str(out)}
    env.pop("AWS_ENDPOINT_URL")
    env = {**os.environ, **env}
    log_path = tmp_path / "daemon.log"
    with cli_daemon(props, env, log_path) as daemon:

        def checkpointed():
            table = leases(aws_env, unique_name)
            return all(
                table.get(s) and table[s].checkpoint.sequence_number == str(q)
                for s, q in last.items()
            )

        wait_until(
            checkpointed,
            60,
            "the checkpoints at each shard's last record",
            failed=lambda: failed(daemon),
            detail=lambda: log_path.read_text()[-3000:],
        )
        daemon.send_signal(signal.SIGTERM)
        code = daemon.wait(40)
    log_text = log_path.read_text()
    assert code == 0, log_text[-3000:]
    assert "speak KCL_1X: " in log_text  # found from the child's amazon_kclpy
    seen = Counter(e["pk"] for e in records_seen(out))
    assert seen == Counter(list(sent))  # every record once
    for pid in {e["pid"] for e in events(out)}:
        kinds = [(e["event"], e.get("reason")) for e in events(out) if e["pid"] == pid]
        assert kinds[-1] == ("shutdown", "ZOMBIE")  # the stop, in words it knows
    assert not [e for e in events(out) if e["event"] == "checkpoint_error"]
    for shard in last:
        assert exit_codes(log_text, shard) == ["0"]
    for lease in leases(aws_env, unique_name).values():
        assert lease.lease_owner is None  # released
    assert "Traceback" not in log_text


@pytest.mark.slow  # the sample checkpoints 60 s after it starts: a minute and more
def test_the_sample_checkpoints_then_a_sigterm_ends_it_and_the_daemon_with_0(
    aws_env, kclpy1, unique_name, tmp_path
):
    kinesis = aws_env.client("kinesis")
    ensure_stream(kinesis, unique_name, 1)
    path = sample_properties(
        kclpy1, tmp_path / "sample.properties", unique_name, *[aws_env.endpoint_url] * 2
    )
    env = {**sample_env(kclpy1, tmp_path), **aws_env.env()}
    env.pop("AWS_ENDPOINT_URL")
    log_path = tmp_path / "daemon.log"
    put: dict = {}
    with cli_daemon(path, env, log_path) as daemon:

        def checkpointed_at_a_record_put():
            # A record every 2 s: the sample checkpoints the batch it gets 60 s on.
            put.update(put_all(kinesis, unique_name, 1, f"r{len(put)}"))
            lease = leases(aws_env, unique_name).get(next(iter(put.values()))[0])
            seq = lease.checkpoint.sequence_number if lease else None
            return seq if seq in {s for _, s, _ in put.values()} else None

        at = wait_until(
            checkpointed_at_a_record_put,
            150,
            "the sample's checkpoint (every 60 s)",
            interval_s=2.0,
            failed=lambda: failed(daemon),
            detail=lambda: log_path.read_text()[-3000:],
        )
        stopped_at = time.monotonic()
        daemon.send_signal(signal.SIGTERM)
        code = daemon.wait(40)
        took = time.monotonic() - stopped_at
    log_text = log_path.read_text()
    assert code == 0, log_text[-3000:]
    (shard,) = {s for s, _, _ in put.values()}
    (lease,) = leases(aws_env, unique_name).values()
    assert lease.checkpoint.sequence_number == at and lease.lease_owner is None
    assert stdout_lines(log_text, shard, ZOMBIE) == 1  # the stop: shutdown ZOMBIE
    assert exit_codes(log_text, shard) == ["0"]
    assert "Traceback" not in log_text and "KeyError" not in log_text
    assert took < 30
    # Every record up to the one checkpointed was given to the sample (the last ones put
    # may not have been read when the stop came).
    seqs = [seq for _, seq, _ in put.values()]
    delivered_n = sum(n for _, _, n in done_workers(log_text))
    assert seqs.index(at) + 1 <= delivered_n <= len(put)
