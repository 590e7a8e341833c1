"""Resharding as streams really do it: the scenario and its check, for every entry point.

A :class:`ContinuousProducer` puts records all through a case; each carries its partition
key, a per-key sequence number and its put time (:func:`benchmarks.reliability.record_data`).
:func:`reshard` drives the stream through the sequence real streams go through: a split,
a merge of two generations (a child of the split with an original shard), then
``UpdateShardCount`` doubling and halving the open shards (UNIFORM_SCALING, which Kinesis
carries out as splits and merges). A consumer's deliveries, each with the shard it came
from and when it arrived, are checked by :func:`check_reshard`:

- missing (must be 0), duplicates (counted: at least once);
- per-key order violations across generations (must be 0);
- child-before-parent: a child shard's record delivered before its parent's last one
  (must be 0: a child is read only after every parent is finished);
- reshard lag per child: from its parents' last record delivered to its first (the
  issue's target: at most 2 s at the 95th percentile).

The matrix (createStream, the Structured Streaming source and ``kinesis-dstream kcl``, each
polling and with enhanced fan-out) runs in the suite (``tests/spark/test_reshard_matrix.py``,
``tests/interop/test_reshard_kcl.py``);

    python -m benchmarks.reshard

runs every case (the slow ones too) and writes the table into ``docs/reliability.md``
(with ``--markdown``, also a dated page under ``docs/benchmarks/results/``).
"""

from __future__ import annotations

import json
import math
import os
import threading
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Callable, Optional

from benchmarks import results
from benchmarks.reliability import ROOT, parse, record_data, run_scenarios
from kinesis_dstream import KinesisProducer

#: Partition keys of a case: enough that every shard of every generation gets records.
KEYS = 64


class ContinuousProducer:
    """Puts ``rate`` records a second over :data:`KEYS` keys from its own thread until
    :meth:`stop`; remembers every ``(key, seq)`` put (a failed put fails the case)."""

    def __init__(self, stream: str, client: Any, rate: float = 200.0, keys: int = KEYS):
        self.keys = keys
        self.rate = rate
        self.produced: list = []
        self._next_seq = [0] * keys
        self._producer = KinesisProducer(stream, client=client)
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="reshard-producer", daemon=True)
        self.error: Optional[BaseException] = None

    def start(self) -> ContinuousProducer:
        self._thread.start()
        return self

    def count(self) -> int:
        with self._lock:
            return len(self.produced)

    def _run(self) -> None:
        n = 0
        batch = max(1, int(self.rate / 10))  # ten puts a second
        next_at = time.monotonic()
        try:
            while not self._stop.is_set():
                for _ in range(batch):
                    key = n % self.keys
                    seq = self._next_seq[key]
                    self._next_seq[key] += 1
                    self._producer.put(record_data(key, seq), f"k{key}")
                    with self._lock:
                        self.produced.append((f"k{key}", seq))
                    n += 1
                self._producer.flush()
                next_at += 0.1
                self._stop.wait(max(0.0, next_at - time.monotonic()))
        except BaseException as exc:  # the case fails with it (see stop)
            self.error = exc

    def stop(self) -> list:
        """Stop, flush, and return what was put; raises what failed a put."""
        self._stop.set()
        self._thread.join(30)
        if self._thread.is_alive():
            raise RuntimeError("the reshard producer did not stop within 30 s")
        self._producer.close()
        if self.error is not None:
            raise RuntimeError(f"the reshard producer failed: {self.error!r}") from self.error
        return list(self.produced)


# -- the resharding sequence ----------------------------------------------------------------


def open_shards(kinesis: Any, stream: str) -> list:
    shards = kinesis.list_shards(StreamName=stream)["Shards"]
    return sorted(
        (s for s in shards if "EndingSequenceNumber" not in s["SequenceNumberRange"]),
        key=lambda s: int(s["HashKeyRange"]["StartingHashKey"]),
    )


def wait_active(kinesis: Any, stream: str, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        status = kinesis.describe_stream_summary(StreamName=stream)["StreamDescriptionSummary"][
            "StreamStatus"
        ]
        if status == "ACTIVE":
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"stream {stream} still {status} after {timeout_s:.0f} s")
        time.sleep(0.05)


def split(kinesis: Any, stream: str, shard: dict) -> None:
    keys = shard["HashKeyRange"]
    low, high = int(keys["StartingHashKey"]), int(keys["EndingHashKey"])
    kinesis.split_shard(
        StreamName=stream,
        ShardToSplit=shard["ShardId"],
        NewStartingHashKey=str((low + high + 1) // 2),
    )
    wait_active(kinesis, stream)


def merge(kinesis: Any, stream: str, low: dict, high: dict) -> None:
    kinesis.merge_shards(
        StreamName=stream, ShardToMerge=low["ShardId"], AdjacentShardToMerge=high["ShardId"]
    )
    wait_active(kinesis, stream)


def update_shard_count(kinesis: Any, stream: str, target: int) -> None:
    kinesis.update_shard_count(
        StreamName=stream, TargetShardCount=target, ScalingType="UNIFORM_SCALING"
    )
    wait_active(kinesis, stream)
    got = len(open_shards(kinesis, stream))
    if got != target:
        raise AssertionError(f"UpdateShardCount to {target} left {got} open shards")


#: The steps of :func:`reshard`, by name (a case may stop after any of them).
STEPS = ("split", "merge", "double", "halve")


def reshard(
    kinesis: Any,
    stream: str,
    between: Callable[[str], None],
    steps: Iterable[str] = STEPS,
    before: Callable[[str], None] = lambda step: None,
) -> None:
    """Reshard a stream of two shards through ``steps``; ``before(step)`` runs before each
    and ``between(step)`` after it (a case waits there for the new shards' records)."""
    for step in steps:
        before(step)
        shards = open_shards(kinesis, stream)
        if step == "split":  # the first shard: 1 open shard becomes 2
            split(kinesis, stream, shards[0])
        elif step == "merge":  # a child of the split with the shard beside it
            child = shards[1]  # the split's upper child, next to an older shard
            merge(kinesis, stream, child, shards[2])
        elif step == "double":
            update_shard_count(kinesis, stream, 2 * len(shards))
        elif step == "halve":
            update_shard_count(kinesis, stream, max(1, len(shards) // 2))
        else:
            raise ValueError(f"unknown reshard step {step!r}; steps: {', '.join(STEPS)}")
        between(step)


def lineage(kinesis: Any, stream: str) -> dict:
    """shard id -> its parents' ids, for every shard the stream still lists."""
    return {
        s["ShardId"]: tuple(
            p for p in (s.get("ParentShardId"), s.get("AdjacentParentShardId")) if p
        )
        for s in kinesis.list_shards(StreamName=stream)["Shards"]
    }


# -- the check --------------------------------------------------------------------------------


@dataclass
class ReshardReport:
    """One case: counts that must be 0, counts allowed (duplicates), and the reshard lag."""

    case: str
    produced: int
    delivered_unique: int
    missing: int
    duplicates: int
    order_violations: int
    child_before_parent: int
    #: Seconds from a child's parents' last record delivered to its first, per child.
    lags_s: list
    elapsed_s: float

    @property
    def lag_p95_s(self) -> float:
        return percentile(self.lags_s, 95)

    def assert_ok(self) -> None:
        """Nothing missing, no order broken, no child before its parents."""
        problems = {
            k: getattr(self, k)
            for k in ("missing", "order_violations", "child_before_parent")
            if getattr(self, k)
        }
        assert not problems, f"{self.case}: {problems} ({self.summary()})"

    def summary(self) -> str:
        lags = ", ".join(f"{lag:.2f}" for lag in sorted(self.lags_s))
        return (
            f"{self.case}: {self.delivered_unique}/{self.produced} delivered, "
            f"{self.missing} missing, {self.duplicates} duplicates, {self.order_violations} "
            f"order violations, {self.child_before_parent} child records before their "
            f"parents' last; reshard lag p95 {self.lag_p95_s:.2f} s over {len(self.lags_s)} "
            f"children ({lags}); {self.elapsed_s:.1f} s"
        )

    def row(self) -> str:
        lag = (
            "n/a"
            if not self.lags_s
            else (
                f"{percentile(self.lags_s, 50):.2f} / {self.lag_p95_s:.2f} / {max(self.lags_s):.2f}"
            )
        )
        return (
            f"| {self.case} | {self.produced} | {self.delivered_unique} | {self.missing} | "
            f"{self.duplicates} | {self.order_violations} | {self.child_before_parent} | "
            f"{lag} | {self.elapsed_s:.0f} |"
        )


def percentile(values: list, pct: float) -> float:
    """The nearest-rank percentile (0 for no values)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, math.ceil(pct / 100 * len(ordered)))
    return ordered[rank - 1]


def check_reshard(
    case: str, produced: Iterable, deliveries: Iterable, parents: dict, elapsed_s: float
) -> ReshardReport:
    """``deliveries``: ``(data, shard id, delivered_at, unit)`` as the consumer saw them,
    in the order it saw them; ``unit`` numbers what was delivered at once (a batch, or a
    record given to a child process): a child's record in the same unit as its parent's
    last, or an earlier one, was read before its parent was finished. ``parents``:
    :func:`lineage`."""
    produced = list(produced)
    deliveries = list(deliveries)
    counts: Counter = Counter()
    highest: dict = {}  # key -> highest seq delivered for the first time so far
    violations = 0
    first_at: dict = {}  # shard -> first delivery time
    last_at: dict = {}  # shard -> last delivery time
    last_unit: dict = {}  # shard -> the unit of its last delivery
    for data, shard_id, at, unit in deliveries:
        key, seq, _ = parse(data)
        counts[(key, seq)] += 1
        if counts[(key, seq)] == 1:
            if seq < highest.get(key, -1):
                violations += 1
            highest[key] = max(seq, highest.get(key, -1))
        first_at.setdefault(shard_id, at)
        first_at[shard_id] = min(first_at[shard_id], at)
        last_at[shard_id] = max(last_at.get(shard_id, at), at)
        last_unit[shard_id] = max(last_unit.get(shard_id, unit), unit)
    early = 0
    lags = []
    for child, child_parents in parents.items():
        read = [p for p in child_parents if p in last_at]
        if child not in first_at or not read:
            continue
        parents_done = max(last_at[p] for p in read)
        lags.append(max(0.0, first_at[child] - parents_done))
        parents_unit = max(last_unit[p] for p in read)
        early += sum(1 for d in deliveries if d[1] == child and d[3] <= parents_unit)
    wanted = set(produced)
    return ReshardReport(
        case=case,
        produced=len(produced),
        delivered_unique=len(wanted & set(counts)),
        missing=len(wanted - set(counts)),
        duplicates=sum(n - 1 for n in counts.values()),
        order_violations=violations,
        child_before_parent=early,
        lags_s=lags,
        elapsed_s=elapsed_s,
    )


# -- the table in docs/reliability.md ------------------------------------------------------

#: When set, each case appends its report (a JSON line) to this file.
REPORT_ENV = "KINESIS_DSTREAM_RESHARD_REPORT"
TABLE_START = "<!-- reshard-table:start -->"
TABLE_END = "<!-- reshard-table:end -->"
TABLE_HEADER = (
    "| case | produced | delivered unique | missing | duplicates | order violations "
    "| child before parent | reshard lag p50 / p95 / max (s) | elapsed (s) |\n"
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
)


def save(report: ReshardReport) -> None:
    """Print the report, and append it to ``$KINESIS_DSTREAM_RESHARD_REPORT`` if set."""
    print(report.summary())
    path = os.environ.get(REPORT_ENV)
    if path:
        with open(path, "a") as out:
            out.write(json.dumps(report.__dict__) + "\n")


def main() -> int:
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    status, found = run_scenarios(
        REPORT_ENV,
        [
            "-m",
            "slow or not slow",
            "tests/spark/test_reshard_matrix.py",
            "tests/interop/test_reshard_kcl.py",
        ],
    )
    reports = [ReshardReport(**report) for report in found]
    lags = [lag for r in reports for lag in r.lags_s]
    table = "\n".join(
        [
            TABLE_START,
            f"Generated by `python -m benchmarks.reshard` on {started} (2 cores, kinesalite "
            f"behind the test EFO server, local[2] Spark). Over all {len(lags)} children: "
            f"reshard lag p95 {percentile(lags, 95):.2f} s, max {max(lags, default=0):.2f} s.",
            "",
            TABLE_HEADER,
            *[r.row() for r in reports],
            TABLE_END,
        ]
    )
    page = os.path.join(ROOT, "docs", "reliability.md")
    with open(page) as f:
        text = f.read()
    head, _, rest = text.partition(TABLE_START)
    _, _, tail = rest.partition(TABLE_END)
    with open(page, "w") as f:
        f.write(head + table + tail)
    print(table)
    return status


if __name__ == "__main__":
    results.run(main, "reshard", "Resharding on every entry point")
