"""Reliability harness: produce records that can be checked, then check what arrived.

Every record carries its partition key and a per-key sequence number (``key:seq``), so
the delivered multiset can be checked for what users care about:

- missing: produced but never delivered (must be 0);
- duplicates: deliveries beyond the first (counted; at-least-once allows them);
- order violations: for a key, a first delivery of seq n after the first delivery of a
  later seq (must be 0; re-deliveries after a failure are duplicates, not violations);
- max lag: the longest put-to-delivery time seen.

Scenarios use it from the tests (``tests/spark/test_reliability.py``,
``tests/spark/test_recovery.py``);

    python -m benchmarks.reliability [--slow]

runs them all (``--slow``: the 10-minute soak instead of the 60 s one) and writes the
table to ``benchmarks/RELIABILITY.md``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from benchmarks import results
from kinesis_dstream import KinesisProducer


def record_data(key: int, seq: int) -> str:
    return f"k{key}:{seq}:{time.time():.3f}"


def parse(data: str) -> tuple:
    """``(key, seq, put_time)`` of a record made by :func:`record_data`."""
    key, seq, put_time = data.split(":")
    return key, int(seq), float(put_time)


class Producer:
    """Puts records with per-key sequence numbers; remembers what it put."""

    def __init__(self, stream: str, client: Any, keys: int = 20, aggregate: bool = False):
        self.keys = keys
        self.next_seq = [0] * keys
        self.produced: list = []
        self._producer = KinesisProducer(stream, client=client, aggregate=aggregate)

    def put(self, count: int) -> None:
        for n in range(count):
            key = n % self.keys
            seq = self.next_seq[key]
            self.next_seq[key] += 1
            self._producer.put(record_data(key, seq), f"k{key}")
            self.produced.append((f"k{key}", seq))
        self._producer.flush()

    def close(self) -> None:
        self._producer.close()


@dataclass
class Report:
    scenario: str
    produced: int
    delivered_unique: int
    missing: int
    duplicates: int
    order_violations: int
    max_lag_s: float  # negative: not measured by the scenario
    elapsed_s: float

    def row(self) -> str:
        lag = "n/a" if self.max_lag_s < 0 else f"{self.max_lag_s:.2f}"
        return (
            f"| {self.scenario} | {self.produced} | {self.delivered_unique} | {self.missing} "
            f"| {self.duplicates} | {self.order_violations} | {lag} | {self.elapsed_s:.1f} |"
        )


def check(scenario: str, produced: Iterable, delivered: Iterable, elapsed_s: float) -> Report:
    """Compare deliveries (``(data, delivered_at)`` in delivery order) with production."""
    produced = list(produced)
    counts: Counter = Counter()
    first_seen: dict = {}  # key -> last seq delivered for the first time
    violations = 0
    max_lag = 0.0
    for data, delivered_at in delivered:
        key, seq, put_time = parse(data)
        max_lag = max(max_lag, delivered_at - put_time)
        counts[(key, seq)] += 1
        if counts[(key, seq)] == 1:
            if seq < first_seen.get(key, -1):
                violations += 1
            first_seen[key] = max(seq, first_seen.get(key, -1))
    wanted = set(produced)
    return Report(
        scenario=scenario,
        produced=len(produced),
        delivered_unique=len(wanted & set(counts)),
        missing=len(wanted - set(counts)),
        duplicates=sum(n - 1 for n in counts.values()),
        order_violations=violations,
        max_lag_s=max_lag,
        elapsed_s=elapsed_s,
    )


#: When set, each scenario appends its report (a JSON line) to this file.
REPORT_ENV = "KINESIS_DSTREAM_RELIABILITY_REPORT"


def save(report: Report) -> None:
    """Append the report to the file named by ``$KINESIS_DSTREAM_RELIABILITY_REPORT``."""
    path = os.environ.get(REPORT_ENV)
    if path:
        with open(path, "a") as out:
            out.write(json.dumps(report.__dict__) + "\n")


TABLE_HEADER = (
    "| scenario | produced | delivered unique | missing | duplicates | order violations "
    "| max lag (s) | elapsed (s) |\n| --- | --- | --- | --- | --- | --- | --- | --- |"
)


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_scenarios(report_env: str, pytest_args: list) -> tuple:
    """Run scenario tests with pytest in a child process, each appending its report (a
    JSON line) to the file named by ``$<report_env>``; ``(exit status, reports as dicts)``."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "reports.jsonl")
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", *pytest_args],
            cwd=ROOT,
            env={**os.environ, report_env: path},
        )
        if not os.path.exists(path):
            return done.returncode, []
        with open(path) as lines:
            return done.returncode, [json.loads(line) for line in lines]


def main() -> int:
    slow = "--slow" in sys.argv[1:]
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    status, reports = run_scenarios(
        REPORT_ENV,
        [
            "-m",
            "slow or not slow" if slow else "not soak",
            "-k",
            "not soak_short" if slow else "not soak_ten_minutes",
            "tests/spark/test_reliability.py",
            "tests/spark/test_recovery.py",
        ],
    )
    rows = [Report(**report).row() for report in reports]
    table = "\n".join([TABLE_HEADER, *rows])
    with open(os.path.join(ROOT, "benchmarks", "RELIABILITY.md"), "w") as out:
        out.write(
            "# Reliability\n\n"
            f"Generated by `python -m benchmarks.reliability{' --slow' if slow else ''}` on "
            f"{started}, on this project's 2-core machine (moto's server unless the scenario "
            "says kinesalite; local[2] Spark). Missing must be 0 and order violations 0; "
            "duplicates are allowed (at least once) and counted.\n\n"
            f"{table}\n"
        )
    print(table)
    return status


if __name__ == "__main__":
    results.run(main, "reliability", "Fault scenarios")
