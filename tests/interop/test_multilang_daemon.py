"""The MultiLangDaemon end to end: real kclpy children, moto (and kinesalite) servers.

The amazon-kclpy sdist is fetched once per machine with ``pip download`` (its install
needs Maven; its download does not) into ``~/.cache/kinesis_dstream/``; its
``amazon_kclpy`` package goes on the children's PYTHONPATH and its sample application
runs unchanged.
"""

from __future__ import annotations

import base64
import contextlib
import glob
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from kinesis_dstream.kpl.aggregation import RecordAggregator, ShardMap
from kinesis_dstream.multilang import MultiLangDaemon, load_properties
from kinesis_dstream.retrieval.streams import ensure_stream, list_shards

from ..support.faults import write_from_outside
from ..support.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
PROCESSOR = ROOT / "tests" / "support" / "scripts" / "kclpy_processor.py"
SAMPLE_RECORD = re.compile(
    r"Record \(Partition Key: (\S+), Sequence Number: (\d+), Subsequence Number: (\d+), "
    r"Data Size: (\d+)"
)


def write_properties(path: Path, **props) -> Path:
    path.write_text("".join(f"{k} = {v}\n" for k, v in props.items()))
    return path


def child_env(kclpy: Path, out_dir: Path, mode: str = "every") -> dict:
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(kclpy), str(ROOT)]),
        "KCLPY_OUT_DIR": str(out_dir),
        "KCLPY_MODE": mode,
    }


def base_props(local_aws, stream: str, app: str, executable: str, **extra) -> dict:
    return {
        "executableName": executable,
        "streamName": stream,
        "applicationName": app,
        "regionName": local_aws.region_name,
        "AwsCredentialsProvider": "DefaultCredentialsProvider",
        "processingLanguage": "python/3.11",
        "initialPositionInStream": "TRIM_HORIZON",
        "kinesisEndpoint": local_aws.endpoint_url,
        "dynamoDBEndpoint": local_aws.endpoint_url,
        "failoverTimeMillis": "3000",
        "idleTimeBetweenReadsInMillis": "200",
        "shardSyncIntervalMillis": "1000",
        "shutdownGraceMillis": "5000",
        **extra,
    }


class Running:
    """A daemon in a thread of this process; stop() is the SIGTERM path."""

    def __init__(self, daemon: MultiLangDaemon) -> None:
        self.daemon = daemon
        self.stop_event = threading.Event()
        self.code = None
        self.thread = threading.Thread(target=self._run, name="test-daemon")
        self.thread.start()

    def _run(self) -> None:
        self.code = self.daemon.run(self.stop_event)

    def stop(self, timeout_s: float = 40.0):
        self.stop_event.set()
        self.thread.join(timeout_s)
        assert not self.thread.is_alive(), "the daemon did not stop in time"
        return self.code


@contextlib.contextmanager
def running(config, env, **daemon_options):
    run = Running(MultiLangDaemon(config, env=env, **daemon_options))
    try:
        yield run
    finally:
        if run.thread.is_alive():
            run.stop()
    assert_nothing_outlives(run.daemon)


def assert_nothing_outlives(daemon: MultiLangDaemon) -> None:
    """No thread of the daemon and no child process is left once run() returned."""
    threads = [
        t.name
        for t in threading.enumerate()
        if t.is_alive()
        and (
            t.name.startswith(("multilang-", "kcl-reads-", "prefetch-"))
            or daemon.worker_id in t.name
        )
    ]
    assert threads == [], f"threads outlived the daemon: {threads}"
    children = []
    for stat in glob.glob("/proc/[0-9]*/stat"):
        try:
            fields = Path(stat).read_text().rsplit(")", 1)[1].split()
            cmdline = Path(stat).with_name("cmdline").read_bytes()
        except OSError:
            continue  # exited meanwhile
        state, ppid = fields[0], int(fields[1])
        if ppid == os.getpid() and state != "Z" and b"kclpy" in cmdline:
            children.append(cmdline.replace(b"\0", b" ").decode())
    assert children == [], f"children outlived the daemon: {children}"


def put_all(kinesis, stream: str, count: int, prefix: str = "r") -> dict:
    """Put ``count`` plain records; returns (pk -> (shard id, sequence number, data))."""
    sent = {}
    entries = [
        {"Data": f"{prefix}-{i}-".encode() + b"x" * i, "PartitionKey": f"{prefix}-pk-{i}"}
        for i in range(count)
    ]
    for start in range(0, count, 100):
        chunk = entries[start : start + 100]
        response = kinesis.put_records(StreamName=stream, Records=chunk)
        assert response["FailedRecordCount"] == 0
        for entry, result in zip(chunk, response["Records"]):
            sent[entry["PartitionKey"]] = (
                result["ShardId"],
                result["SequenceNumber"],
                entry["Data"],
            )
    return sent


def leases(local_aws, app: str) -> dict:
    from kinesis_dstream.leases import LeaseTable

    table = LeaseTable(local_aws.client("dynamodb"), app)
    if not table.exists():  # a daemon starting meanwhile creates it
        return {}
    return {lease.lease_key: lease for lease in table.list_leases()}


def events(out_dir: Path) -> list:
    """Every event every child wrote, each with its shard and pid, in time order."""
    found = []
    for path in out_dir.glob("*.jsonl"):
        shard, pid, _ = path.name.split(".")
        # A child may be writing its last line right now: only whole lines count.
        for line in path.read_text().split("\n")[:-1]:
            found.append({**json.loads(line), "shard": shard, "pid": int(pid)})
    return sorted(found, key=lambda e: e["t"])


def records_seen(out_dir: Path) -> list:
    return [e for e in events(out_dir) if e["event"] == "record"]


# -- the real sample application ---------------------------------------------------------


def test_the_kclpy_sample_app_runs_unchanged(aws_env, kclpy, unique_name, tmp_path, caplog):
    local_aws = aws_env
    kinesis = local_aws.client("kinesis")
    ensure_stream(kinesis, unique_name, 2)
    sent = put_all(kinesis, unique_name, 60)
    last_per_shard = {}
    for shard, seq, _ in sent.values():
        if int(seq) > int(last_per_shard.get(shard, "0")):
            last_per_shard[shard] = seq
    sample = kclpy / "samples" / "sample_kclpy_app.py"
    props = base_props(local_aws, unique_name, unique_name, f"{sys.executable} {sample}")
    config = load_properties(str(write_properties(tmp_path / "app.properties", **props)))
    env = child_env(kclpy, tmp_path)
    with caplog.at_level("INFO", logger="kinesis_dstream"), running(config, env) as run:
        # The sample checkpoints at its first batch (then every 30 s): wait for it.
        wait_until(
            lambda: all(
                leases(local_aws, unique_name).get(shard)
                and leases(local_aws, unique_name)[shard].checkpoint.sequence_number == seq
                for shard, seq in last_per_shard.items()
            ),
            60,
            "the sample's checkpoints at the last record of each shard",
        )
        assert run.stop() == 0
    table = leases(local_aws, unique_name)
    for shard, seq in last_per_shard.items():
        assert table[shard].checkpoint.sequence_number == seq
        assert table[shard].lease_owner is None  # released at the stop
    # The sample logs each record on its stderr, which the daemon logs with the shard id.
    stderr = "".join(r.getMessage() for r in caplog.records if r.name.endswith("child.stderr"))
    seen = Counter(SAMPLE_RECORD.findall(stderr))
    expected = Counter((pk, seq, "0", str(len(data))) for pk, (_, seq, data) in sent.items())
    assert seen == expected  # every record once, with its key, sequence number and size
    assert "Shutdown has been requested" in stderr
    shard_tagged = [r.getMessage() for r in caplog.records if r.name.endswith("child.stderr")]
    assert all(m.startswith("[shard shardId-") for m in shard_tagged)


def test_children_start_a_few_at_a_time_and_every_shard_gets_one(
    aws_env, kclpy, unique_name, tmp_path
):
    # Starting every shard's child at once starved the lease renewer of a daemon given a
    # thousand shards on 2 cores: children now start max_starting at a time.
    local_aws = aws_env
    kinesis = local_aws.client("kinesis")
    ensure_stream(kinesis, unique_name, 6)
    sent = put_all(kinesis, unique_name, 30)
    props = base_props(local_aws, unique_name, unique_name, f"{sys.executable} {PROCESSOR}")
    config = load_properties(str(write_properties(tmp_path / "app.properties", **props)))
    env = {**child_env(kclpy, tmp_path, "slow_init"), "KCLPY_INIT_S": "1.0"}
    with running(config, env, max_starting=2) as run:
        wait_until(
            lambda: len({e["shard"] for e in events(tmp_path) if e["event"] == "initialized"})
            == 6,
            90,
            "every shard's child initialized",
        )
        wait_until(
            lambda: {e["pk"] for e in records_seen(tmp_path)} == set(sent),
            60,
            "every record delivered",
        )
        # Six shards read on the daemon's read pool: no read-ahead thread of their own.
        assert not [t.name for t in threading.enumerate() if t.name.startswith("prefetch-")]
        assert run.daemon.read_pool.threads_alive() == run.daemon.read_pool.size + 1
        assert run.stop() == 0
    seen = events(tmp_path)
    started = {e["pid"]: e["started"] for e in seen if e["event"] == "initialize"}
    through = {e["pid"]: e["t"] for e in seen if e["event"] == "initialized"}
    spans = [(started[pid], through[pid]) for pid in through]
    assert len(spans) == 6
    # From a child's start to its initialize answer, at most 2 at any moment.
    most = max(sum(1 for a, b in spans if a <= t < b) for t, _ in spans)
    assert most <= 2, f"{most} children were starting at once: {sorted(spans)}"


def test_a_child_slow_to_initialize_holds_the_next_back_only_for_the_start_slot(
    aws_env, kclpy, unique_name, tmp_path
):
    local_aws = aws_env
    ensure_stream(local_aws.client("kinesis"), unique_name, 3)
    props = base_props(local_aws, unique_name, unique_name, f"{sys.executable} {PROCESSOR}")
    config = load_properties(str(write_properties(tmp_path / "app.properties", **props)))
    env = {**child_env(kclpy, tmp_path, "slow_init"), "KCLPY_INIT_S": "6"}
    with running(config, env, max_starting=1, start_slot_s=1.0) as run:
        wait_until(
            lambda: len({e["shard"] for e in events(tmp_path) if e["event"] == "initialized"})
            == 3,
            60,
            "every shard's child initialized",
        )
        assert run.stop() == 0
    seen = events(tmp_path)
    started = [e["started"] for e in seen if e["event"] == "initialize"]
    first_through = min(e["t"] for e in seen if e["event"] == "initialized")
    # One slot, and each child takes 6 s to initialize: every child started before the
    # first was through, each next one after the 1 s slot.
    assert len(started) == 3 and max(started) < first_through


# -- test processors: KPL aggregates, raising, exiting, bogus checkpoints ------------------


def put_aggregates(kinesis, stream: str, count: int) -> dict:
    shard_map = ShardMap.from_list_shards(list_shards(kinesis, stream))
    aggregator = RecordAggregator(max_records=7, shard_map=shard_map)
    entries = []
    users = {}
    for i in range(count):
        data = f"user-{i}".encode()
        users[f"u-{i}"] = data
        entries.extend(aggregator.add(data, f"u-{i}"))
    entries.extend(aggregator.flush())
    for start in range(0, len(entries), 100):
        response = kinesis.put_records(StreamName=stream, Records=entries[start : start + 100])
        assert response["FailedRecordCount"] == 0
    return users


def test_checkpoint_at_every_sub_record_of_kpl_aggregates(aws_env, kclpy, unique_name, tmp_path):
    local_aws = aws_env
    kinesis = local_aws.client("kinesis")
    ensure_stream(kinesis, unique_name, 2)
    put_at = time.time()
    users = put_aggregates(kinesis, unique_name, 50)
    props = base_props(local_aws, unique_name, unique_name, f"{sys.executable} {PROCESSOR}")
    config = load_properties(str(write_properties(tmp_path / "app.properties", **props)))
    with running(config, child_env(kclpy, tmp_path, "every")) as run:
        wait_until(lambda: len(records_seen(tmp_path)) >= len(users), 60, "every user record")
        assert run.stop() == 0
    seen = records_seen(tmp_path)
    got = Counter((r["pk"], base64.b64decode(r["data"])) for r in seen)
    assert got == Counter(users.items())  # each once, data and key intact
    assert any(r["sub"] > 0 for r in seen)  # they really were aggregated
    for r in seen:  # epoch milliseconds, as the Java daemon sends them
        assert isinstance(r["arrival"], int) and abs(r["arrival"] / 1000 - put_at) < 120
    everything = events(tmp_path)
    assert not [e for e in everything if e["event"] == "checkpoint_error"]
    table = leases(local_aws, unique_name)
    for shard in {r["shard"] for r in seen}:
        last = max((int(r["seq"]), r["sub"]) for r in seen if r["shard"] == shard)
        checkpoint = table[shard].checkpoint
        assert (int(checkpoint.sequence_number), checkpoint.sub_sequence_number) == last


def test_a_processor_that_raises_is_passed_over_as_the_java_daemon_does(
    aws_env, kclpy, unique_name, tmp_path, caplog
):
    local_aws = aws_env
    kinesis = local_aws.client("kinesis")
    ensure_stream(kinesis, unique_name, 1)
    first = put_all(kinesis, unique_name, 5, "a")
    props = base_props(local_aws, unique_name, unique_name, f"{sys.executable} {PROCESSOR}")
    config = load_properties(str(write_properties(tmp_path / "app.properties", **props)))
    with (
        caplog.at_level("INFO", logger="kinesis_dstream"),
        running(config, child_env(kclpy, tmp_path, "raise")) as run,
    ):
        wait_until(lambda: len(records_seen(tmp_path)) >= 5, 60, "the first batch")
        shard = next(iter(first.values()))[0]
        # The child swallowed the error (kclpy does) and answered: no checkpoint moved.
        assert leases(local_aws, unique_name)[shard].checkpoint.sequence_number == "TRIM_HORIZON"
        second = put_all(kinesis, unique_name, 3, "b")
        wait_until(lambda: len(records_seen(tmp_path)) >= 8, 60, "the second batch")
        last = max(int(seq) for _, seq, _ in second.values())
        wait_until(
            lambda: leases(local_aws, unique_name)[shard].checkpoint.sequence_number == str(last),
            30,
            "the checkpoint after the second batch",
        )
        assert run.daemon.exit_code == 0 and run.thread.is_alive()
        assert run.stop() == 0
    assert Counter(r["pk"] for r in records_seen(tmp_path)) == Counter([*first, *second])
    stderr = "\n".join(r.getMessage() for r in caplog.records if r.name.endswith("stderr"))
    assert f"[shard {shard}]" in stderr and "failing on purpose" in stderr


def test_a_processor_that_exits_stops_the_daemon_with_status_1(
    aws_env, kclpy, unique_name, tmp_path, caplog
):
    local_aws = aws_env
    kinesis = local_aws.client("kinesis")
    ensure_stream(kinesis, unique_name, 1)
    put_all(kinesis, unique_name, 6)
    props = base_props(local_aws, unique_name, unique_name, f"{sys.executable} {PROCESSOR}")
    config = load_properties(str(write_properties(tmp_path / "app.properties", **props)))
    with (
        caplog.at_level("INFO", logger="kinesis_dstream"),
        running(config, child_env(kclpy, tmp_path, "exit")) as run,
    ):
        run.thread.join(60)
        assert not run.thread.is_alive(), "the daemon did not stop after its child exited"
    assert run.code == 1
    (lease,) = leases(local_aws, unique_name).values()
    assert lease.checkpoint.sequence_number == "TRIM_HORIZON"  # nothing checkpointed
    assert lease.lease_owner is None  # released: the Java daemon's exit hook stops gracefully
    assert "exiting on purpose" in caplog.text
    assert "failed: stopping the daemon (exit 1)" in caplog.text


def test_a_checkpoint_at_a_position_never_given_is_refused(aws_env, kclpy, unique_name, tmp_path):
    local_aws = aws_env
    kinesis = local_aws.client("kinesis")
    ensure_stream(kinesis, unique_name, 1)
    sent = put_all(kinesis, unique_name, 4)
    last = max(int(seq) for _, seq, _ in sent.values())
    props = base_props(local_aws, unique_name, unique_name, f"{sys.executable} {PROCESSOR}")
    config = load_properties(str(write_properties(tmp_path / "app.properties", **props)))
    with running(config, child_env(kclpy, tmp_path, "bogus")) as run:
        wait_until(
            lambda: [e for e in events(tmp_path) if e["event"] == "checkpoint"],
            60,
            "the good checkpoint",
        )
        assert run.stop() == 0
    outcomes = [
        (e["event"], e.get("error"))
        for e in events(tmp_path)
        if e["event"] in ("checkpoint", "checkpoint_error") and e.get("seq") is not None
    ]
    assert outcomes == [("checkpoint_error", "IllegalArgumentException"), ("checkpoint", None)]
    (lease,) = leases(local_aws, unique_name).values()
    assert lease.checkpoint.sequence_number == str(last)


def test_a_lease_lost_mid_batch_gives_lease_lost_and_no_later_records(
    aws_env, kclpy, unique_name, tmp_path
):
    from kinesis_dstream.leases import LeaseTable

    local_aws = aws_env
    kinesis = local_aws.client("kinesis")
    ensure_stream(kinesis, unique_name, 1)
    put_all(kinesis, unique_name, 3, "a")
    props = base_props(local_aws, unique_name, unique_name, f"{sys.executable} {PROCESSOR}")
    config = load_properties(str(write_properties(tmp_path / "app.properties", **props)))
    with running(config, child_env(kclpy, tmp_path, "gated")) as run:
        first = wait_until(lambda: records_seen(tmp_path), 60, "the first batch")
        shard, pid = first[0]["shard"], first[0]["pid"]
        table = LeaseTable(local_aws.client("dynamodb"), unique_name)
        write_from_outside(table, shard, lambda lease: table.take(lease, "thief"), 30)
        wait_until(
            lambda: shard not in run.daemon.coordinator.held_leases(), 30, "the loss noticed"
        )
        put_all(kinesis, unique_name, 3, "b")  # never to be given to this child
        (tmp_path / "go").touch()
        wait_until(
            lambda: [e for e in events(tmp_path) if e["event"] == "lease_lost"],
            30,
            "leaseLost",
        )
        assert run.stop() == 0
    mine = [e for e in events(tmp_path) if e["pid"] == pid]
    kinds = [e["event"] for e in mine]
    assert kinds[-2:] == ["checkpoint_error", "lease_lost"]
    assert mine[-2]["error"] == "ShutdownException"
    assert {e["pk"] for e in mine if e["event"] == "record"} == {f"a-pk-{i}" for i in range(3)}
    lease = table.get_lease(shard)
    assert lease.checkpoint.sequence_number == "TRIM_HORIZON"  # the refused write
    assert lease.lease_owner in ("thief", None)  # or released after a retake at the stop


# -- two daemons, one killed -------------------------------------------------------------


def start_daemon(properties: Path, env: dict, log_path: Path) -> subprocess.Popen:
    with open(log_path, "ab") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "kinesis_dstream.cli", "kcl", "--properties", str(properties)],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=str(ROOT),
        )


def owners(local_aws, app: str) -> Counter:
    return Counter(lease.lease_owner for lease in leases(local_aws, app).values())


@pytest.mark.slow  # a kill scenario (16 s), with the other kills in CI's long step
def test_two_daemons_balance_and_one_killed_hands_over_at_its_checkpoints(
    aws_env, kclpy, unique_name, tmp_path
):
    local_aws = aws_env
    kinesis = local_aws.client("kinesis")
    ensure_stream(kinesis, unique_name, 4)
    out = tmp_path / "out"
    out.mkdir()
    env = {**child_env(kclpy, out, "every"), **local_aws.env()}
    env.pop("AWS_ENDPOINT_URL")
    daemons = {}
    try:
        for name in ("one", "two"):
            props = base_props(
                local_aws,
                unique_name,
                unique_name,
                f"{sys.executable} {PROCESSOR}",
                workerId=name,
                failoverTimeMillis="2000",
            )
            path = write_properties(tmp_path / f"{name}.properties", **props)
            daemons[name] = start_daemon(path, env, tmp_path / f"{name}.log")
        wait_until(
            lambda: owners(local_aws, unique_name) == Counter({"one": 2, "two": 2}),
            60,
            "two shards for each daemon",
        )
        first = put_all(kinesis, unique_name, 40, "a")
        wait_until(
            lambda: {r["pk"] for r in records_seen(out)} >= set(first), 60, "every first record"
        )
        last = {}
        for shard, seq, _ in first.values():
            last[shard] = max(last.get(shard, 0), int(seq))

        def checkpointed():
            table = leases(local_aws, unique_name)
            return all(table[s].checkpoint.sequence_number == str(q) for s, q in last.items())

        wait_until(checkpointed, 30, "the first records checkpointed")
        killed_shards = {
            k for k, v in leases(local_aws, unique_name).items() if v.lease_owner == "one"
        }
        daemons["one"].send_signal(signal.SIGKILL)
        assert daemons["one"].wait(10) == -signal.SIGKILL
        killed_at = time.time()
        second = put_all(kinesis, unique_name, 40, "b")
        wait_until(
            lambda: owners(local_aws, unique_name) == Counter({"two": 4}),
            60,
            "the survivor holding every shard",
        )
        wait_until(
            lambda: {r["pk"] for r in records_seen(out)} >= set(second), 60, "every second record"
        )
        daemons["two"].send_signal(signal.SIGTERM)
        assert daemons["two"].wait(40) == 0
    finally:
        for process in daemons.values():
            if process.poll() is None:
                process.kill()
                process.wait(10)
    seen = Counter(r["pk"] for r in records_seen(out))
    assert set(seen) == set(first) | set(second)  # nothing lost
    assert all(seen[pk] == 1 for pk in second)  # resumed at the checkpoints, not before
    # The survivor's children for the killed daemon's shards started at its checkpoints.
    taken_over = [
        e
        for e in events(out)
        if e["event"] == "initialize" and e["shard"] in killed_shards and e["t"] > killed_at
    ]
    assert {e["shard"] for e in taken_over} == killed_shards
    for e in taken_over:
        assert e["seq"] == str(last[e["shard"]])
    for lease in leases(local_aws, unique_name).values():
        assert lease.lease_owner is None  # the survivor released them at SIGTERM


# -- resharding on kinesalite ------------------------------------------------------------


@pytest.mark.kinesalite
def test_a_split_while_running_delivers_every_record_once_children_after_parent(
    aws_env, kinesalite, kclpy, unique_name, tmp_path
):
    local_aws = aws_env
    kinesis = kinesalite.client("kinesis")
    ensure_stream(kinesis, unique_name, 1)
    first = put_all(kinesis, unique_name, 20, "a")
    props = base_props(
        local_aws,
        unique_name,
        unique_name,
        f"{sys.executable} {PROCESSOR}",
        kinesisEndpoint=kinesalite.endpoint_url,
    )
    config = load_properties(str(write_properties(tmp_path / "app.properties", **props)))
    with running(config, child_env(kclpy, tmp_path, "every")) as run:
        wait_until(lambda: len(records_seen(tmp_path)) >= 20, 60, "the parent's records")
        (parent,) = list_shards(kinesis, unique_name)
        keys = parent["HashKeyRange"]
        middle = (int(keys["StartingHashKey"]) + int(keys["EndingHashKey"])) // 2
        kinesis.split_shard(
            StreamName=unique_name,
            ShardToSplit=parent["ShardId"],
            NewStartingHashKey=str(middle),
        )
        wait_until(
            lambda: (
                kinesis.describe_stream_summary(StreamName=unique_name)["StreamDescriptionSummary"][
                    "StreamStatus"
                ]
                == "ACTIVE"
            ),
            30,
            "the split",
        )
        second = put_all(kinesis, unique_name, 40, "b")
        wait_until(lambda: len(records_seen(tmp_path)) >= 60, 90, "the children's records")
        assert run.stop() == 0
    seen = records_seen(tmp_path)
    assert Counter(r["pk"] for r in seen) == Counter([*first, *second])  # each once
    children = {r["shard"] for r in seen} - {parent["ShardId"]}
    assert len(children) == 2
    ended = [
        e
        for e in events(tmp_path)
        if e["event"] == "shard_ended" and e["shard"] == parent["ShardId"]
    ]
    assert len(ended) == 1
    first_child_record = min(r["t"] for r in seen if r["shard"] in children)
    assert ended[0]["t"] < first_child_record  # children after their parent
    assert all(r["shard"] == parent["ShardId"] for r in seen if r["pk"] in first)


def test_a_child_past_timeout_in_seconds_halts_the_daemon(aws_env, kclpy, unique_name, tmp_path):
    local_aws = aws_env
    kinesis = local_aws.client("kinesis")
    ensure_stream(kinesis, unique_name, 1)
    put_all(kinesis, unique_name, 2)
    props = base_props(
        local_aws,
        unique_name,
        unique_name,
        f"{sys.executable} {PROCESSOR}",
        timeoutInSeconds="2",
        workerId="halting",
    )
    config = load_properties(str(write_properties(tmp_path / "app.properties", **props)))
    with running(config, child_env(kclpy, tmp_path, "hang")) as run:
        run.thread.join(60)
        assert not run.thread.is_alive(), "the daemon did not halt"
    assert run.code == 1
    pids = {e["pid"] for e in events(tmp_path)}
    assert pids
    for pid in pids:  # the hung child was killed, not left behind
        assert (
            not Path(f"/proc/{pid}").exists()
            or "zombie" in Path(f"/proc/{pid}/status").read_text().lower()
        )
    (lease,) = leases(local_aws, unique_name).values()
    assert lease.lease_owner == "halting"  # a halt releases nothing: the lease expires
    assert lease.checkpoint.sequence_number == "TRIM_HORIZON"


def test_at_timestamp_starts_at_the_timestamp(aws_env, kclpy, unique_name, tmp_path):
    local_aws = aws_env
    kinesis = local_aws.client("kinesis")
    ensure_stream(kinesis, unique_name, 1)
    put_all(kinesis, unique_name, 5, "old")
    time.sleep(1.5)  # arrival times have second-ish resolution on some servers
    start = time.time()
    time.sleep(1.5)
    new = put_all(kinesis, unique_name, 5, "new")
    props = base_props(
        local_aws,
        unique_name,
        unique_name,
        f"{sys.executable} {PROCESSOR}",
        initialPositionInStream="AT_TIMESTAMP",
        initialPositionInStreamExtended=f"{start:.3f}",
    )
    config = load_properties(str(write_properties(tmp_path / "app.properties", **props)))
    with running(config, child_env(kclpy, tmp_path, "every")) as run:
        wait_until(lambda: len(records_seen(tmp_path)) >= 5, 60, "the records after the timestamp")
        assert run.stop() == 0
    assert Counter(r["pk"] for r in records_seen(tmp_path)) == Counter(list(new))
    init = [e for e in events(tmp_path) if e["event"] == "initialize"]
    assert init and init[0]["seq"] == "AT_TIMESTAMP"


def test_a_stop_with_a_hung_child_kills_it_and_releases_the_leases(
    aws_env, kclpy, unique_name, tmp_path
):
    local_aws = aws_env
    kinesis = local_aws.client("kinesis")
    ensure_stream(kinesis, unique_name, 1)
    put_all(kinesis, unique_name, 2)
    props = base_props(
        local_aws,
        unique_name,
        unique_name,
        f"{sys.executable} {PROCESSOR}",
        shutdownGraceMillis="1000",
    )
    config = load_properties(str(write_properties(tmp_path / "app.properties", **props)))
    with running(config, child_env(kclpy, tmp_path, "hang")) as run:
        wait_until(lambda: records_seen(tmp_path), 60, "the batch the child hangs on")
        stopped_at = time.monotonic()
        code = run.stop()
        took = time.monotonic() - stopped_at
    assert code == 1  # a child had to be killed
    assert took < 30, f"the stop took {took:.1f}s"
    (lease,) = leases(local_aws, unique_name).values()
    assert lease.lease_owner is None  # released


@pytest.mark.kinesalite
def test_a_shard_end_not_checkpointed_is_retried_and_children_wait(
    aws_env, kinesalite, kclpy, unique_name, tmp_path
):
    local_aws = aws_env
    kinesis = kinesalite.client("kinesis")
    ensure_stream(kinesis, unique_name, 1)
    first = put_all(kinesis, unique_name, 10, "a")
    (parent,) = list_shards(kinesis, unique_name)
    keys = parent["HashKeyRange"]
    middle = (int(keys["StartingHashKey"]) + int(keys["EndingHashKey"])) // 2
    kinesis.split_shard(
        StreamName=unique_name, ShardToSplit=parent["ShardId"], NewStartingHashKey=str(middle)
    )
    wait_until(
        lambda: (
            kinesis.describe_stream_summary(StreamName=unique_name)["StreamDescriptionSummary"][
                "StreamStatus"
            ]
            == "ACTIVE"
        ),
        30,
        "the split",
    )
    second = put_all(kinesis, unique_name, 20, "b")
    props = base_props(
        local_aws,
        unique_name,
        unique_name,
        f"{sys.executable} {PROCESSOR}",
        kinesisEndpoint=kinesalite.endpoint_url,
    )
    config = load_properties(str(write_properties(tmp_path / "app.properties", **props)))
    with running(config, child_env(kclpy, tmp_path, "end_twice")) as run:
        wait_until(lambda: len(records_seen(tmp_path)) >= 30, 90, "every record")
        assert run.stop() == 0
    seen = records_seen(tmp_path)
    assert Counter(r["pk"] for r in seen) == Counter([*first, *second])  # each once
    parent_events = [e for e in events(tmp_path) if e["shard"] == parent["ShardId"]]
    ends = [e for e in parent_events if e["event"] == "shard_ended"]
    assert len(ends) == 2 and ends[0]["pid"] != ends[1]["pid"]  # a new child, once more
    inits = [e for e in parent_events if e["event"] == "initialize"]
    last_parent = max(int(seq) for shard, seq, _ in first.values())
    assert inits[1]["seq"] == str(last_parent)  # resumed at its checkpoint: nothing again
    children_first = min(r["t"] for r in seen if r["shard"] != parent["ShardId"])
    assert ends[1]["t"] < children_first  # children only after SHARD_END was written
