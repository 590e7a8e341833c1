"""Whole applications in their own processes, killed with SIGKILL mid-stream.

- Two processes with one application name share 8 shards; one is killed: the other takes
  its shards and, together, they delivered every record (duplicates counted and printed);
  the killed one, restarted, takes shards back.
- A stateful application (updateStateByKey + reduceByKeyAndWindow) is killed and
  restarted from its Spark checkpoint: every word is counted at least once.
"""

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from benchmarks.reliability import Report, save
from kinesis_dstream import KinesisProducer
from kinesis_dstream.leases.dynamodb import LeaseTable
from kinesis_dstream.retrieval.streams import ensure_stream

from ..support.waiting import wait_until

# Over 35 s each: left out of the README's command (under 20 minutes), run by .ci/run after it.
pytestmark = [pytest.mark.spark, pytest.mark.slow]

SCRIPTS = Path(__file__).resolve().parents[1] / "support" / "scripts"
WORDS = ("spark", "you", "are", "my", "father")


class App:
    """A script in its own process; output to files (no pipe to fill)."""

    def __init__(self, local_aws, tmp_path, script, *args, tag):
        env = {
            **os.environ,
            **local_aws.env(),
            "PYSPARK_PYTHON": sys.executable,
            "PYSPARK_SUBMIT_ARGS": "--master local[2] --conf spark.ui.enabled=false pyspark-shell",
        }
        self.log = tmp_path / f"{tag}.log"
        with open(self.log, "w") as log:
            self.proc = subprocess.Popen(
                [sys.executable, str(SCRIPTS / script), *map(str, args)],
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)

    def wait(self, timeout_s):
        try:
            return self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(f"did not stop: {self.log.read_text()[-3000:]}") from None

    def tail(self):
        return self.log.read_text()[-3000:]


def owners(table):
    return Counter(lease.lease_owner for lease in table.list_leases() if lease.lease_owner)


def test_two_processes_share_eight_shards_and_a_kill_loses_nothing(
    local_aws, kinesis, unique_name, tmp_path
):
    test_started = time.monotonic()
    ensure_stream(kinesis, unique_name, 8)
    out = tmp_path / "out"
    out.mkdir()
    table = LeaseTable(local_aws.client("dynamodb"), unique_name)
    args = (unique_name, unique_name, local_aws.endpoint_url, local_aws.region_name, out)
    a = App(local_aws, tmp_path, "worker_app.py", *args, "a", tag="a")
    b = None
    try:
        wait_until(
            lambda: table.exists() and owners(table) == {"a": 8}, 120, "a holds 8", detail=a.tail
        )
        b = App(local_aws, tmp_path, "worker_app.py", *args, "b", tag="b")
        wait_until(lambda: owners(table) == {"a": 4, "b": 4}, 120, "a 4/4 split", detail=b.tail)

        sent = [f"rec-{i}" for i in range(4000)]
        killed = threading.Event()

        def produce():
            with KinesisProducer(unique_name, client=local_aws.client("kinesis")) as producer:
                for n, data in enumerate(sent):
                    producer.put(data, f"key-{n}")
                    if n % 250 == 249:
                        producer.flush()
                        time.sleep(0.25)
                    if n == 1500:
                        a.kill()  # mid-stream, without any chance to release or checkpoint
                        killed.set()

        producer = threading.Thread(target=produce)
        producer.start()
        producer.join(timeout=120)
        assert killed.is_set()

        def delivered():
            return [line for path in out.glob("*.txt") for line in path.read_text().splitlines()]

        wait_until(
            lambda: set(sent) <= set(delivered()), 120, "every record delivered", detail=b.tail
        )
        wait_until(lambda: owners(table) == {"b": 8}, 30, "b holds all 8", detail=b.tail)
        a = App(local_aws, tmp_path, "worker_app.py", *args, "a", tag="a-restarted")
        wait_until(
            lambda: owners(table).get("a", 0) >= 1, 120, "restarted a takes leases", detail=a.tail
        )
        for name, app in (("a", a), ("b", b)):
            (out / f"STOP-{name}").touch()
            assert app.wait(120) == 0, app.tail()
    finally:
        for app in (a, b):
            if app is not None and app.proc.poll() is None:
                app.kill()
    lines = delivered()
    counts = Counter(lines)
    duplicates = sum(n - 1 for n in counts.values())
    print(
        f"two workers, one killed: {len(lines)} delivered for {len(sent)} sent, "
        f"{duplicates} duplicates"
    )
    save(
        Report(
            "kill -9 one of two workers mid-stream, restart it (4,000 records, 8 shards)",
            len(sent),
            len(set(lines) & set(sent)),
            len(set(sent) - set(lines)),
            duplicates,
            0,  # one record per partition key: no order to break
            -1.0,  # lag not measured here
            time.monotonic() - test_started,
        )
    )
    assert set(lines) == set(sent)
    from_a = {line for path in out.glob("a-*.txt") for line in path.read_text().splitlines()}
    # only records a delivered after its last checkpoint may come again, from b
    assert {record for record, n in counts.items() if n > 1} <= from_a
    assert all(lease.lease_owner is None for lease in table.list_leases())  # both released


def latest(out, kind):
    files = sorted(out.glob(f"{kind}-*.json"), key=lambda p: int(p.name.split("-")[1]))
    return (json.loads(files[-1].read_text()), files[-1].name) if files else ({}, None)


def test_a_killed_driver_restarts_from_its_checkpoint_and_counts_every_word(
    local_aws, kinesis, unique_name, tmp_path
):
    test_started = time.monotonic()
    ensure_stream(kinesis, unique_name, 2)
    out = tmp_path / "out"
    out.mkdir()
    checkpoint = tmp_path / "checkpoint"
    args = (
        checkpoint,
        unique_name,
        unique_name,
        local_aws.endpoint_url,
        local_aws.region_name,
        out,
    )
    first = App(local_aws, tmp_path, "stateful_app.py", *args, tag="first")
    second = None
    sent: Counter = Counter()
    rng = random.Random(5)

    def produce(rounds):
        with KinesisProducer(unique_name, client=local_aws.client("kinesis")) as producer:
            for r in range(rounds):
                for i in range(40):
                    line = " ".join(rng.choice(WORDS) for _ in range(5))
                    sent.update(line.split(" "))
                    producer.put(line, f"key-{r}-{i}")
                producer.flush()
                time.sleep(0.2)

    try:
        wait_until(
            lambda: latest(out, "totals")[1] is not None, 120, "first batches", detail=first.tail
        )
        produce(10)
        wait_until(
            lambda: sum(latest(out, "totals")[0].values()) > 0, 60, "counts", detail=first.tail
        )
        before_kill, _ = latest(out, "totals")
        first.kill()
        produce(5)  # while no driver runs
        second = App(local_aws, tmp_path, "stateful_app.py", *args, tag="second")
        produce(10)
        wait_until(
            lambda: all(latest(out, "totals")[0].get(w, 0) >= sent[w] for w in WORDS),
            180,
            f"every word counted at least once: sent {dict(sent)}",
            detail=second.tail,
        )
        totals, name = latest(out, "totals")
        window, _ = latest(out, "window")
        (out / "STOP").touch()
        assert second.wait(120) == 0, second.tail()
    finally:
        for app in (first, second):
            if app is not None and app.proc.poll() is None:
                app.kill()
    save(
        Report(
            "driver kill -9, restart with getOrCreate (words counted)",
            sum(sent.values()),
            sum(min(totals.get(w, 0), n) for w, n in sent.items()),
            sum(max(0, n - totals.get(w, 0)) for w, n in sent.items()),
            max(0, sum(totals.values()) - sum(sent.values())),
            0,  # counts per word: no order to check
            -1.0,  # lag not measured here
            time.monotonic() - test_started,
        )
    )
    assert str(second.proc.pid) in name  # the restarted driver wrote the final totals
    assert all(totals[w] >= before_kill.get(w, 0) for w in WORDS)  # state carried over
    overcount = sum(totals.values()) - sum(sent.values())
    print(
        f"driver killed and restarted: {sum(sent.values())} words sent, "
        f"{sum(totals.values())} counted ({overcount} counted twice)"
    )
    assert isinstance(window, dict)
