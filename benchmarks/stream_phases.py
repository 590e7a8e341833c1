"""bench_stream's phased warm runs and Spark's floor: where a warm createStream's time goes.

The wait for the first batch time, and so for every later one, depends on where in the
batch interval ``ssc.start()`` falls, by up to a whole interval: a single warm run's main
source of noise. So warm runs start at :data:`PHASES` after a batch time, each with a
:class:`Timeline` (when every record was fetched, the last batch time and its output),
and **Spark's floor** runs at the same phases: the same records already cached in RDDs
of a round's size and shape, in a ``queueStream`` with the same 1 s batches and the same
count, i.e. the wait for the first batch time and one batch job: Spark's own share,
measured in every run. ``bench_stream`` runs them; its createStream runs (``streaming``)
count their outputs with :func:`run_counted` too.
"""

from __future__ import annotations

import statistics
import threading
import time
from typing import Callable, NamedTuple, Optional

#: Where in a 1 s batch interval the phased warm runs and the floor start: the time to the
#: first batch time, and so to every later one, depends on it by up to a whole interval.
PHASES = (0.0, 0.25, 0.5, 0.75)


class Timeline(NamedTuple):
    """One createStream (or floor) run, in perf_counter seconds."""

    elapsed: float  # from ssc.start() until all n records were output
    start: float
    first_output: float  # the first output with records
    steady: float  # records/s from the first output to the last
    fetched: float  # every record fetched (rounds recorded); nan for the floor
    last_batch: float  # the batch time of the last output with records
    phase: float  # ssc.start()'s offset into the batch interval, seconds


def start_at_phase(phase: Optional[float], interval_s: float = 1.0) -> None:
    """Sleep until ``phase`` seconds past a batch time (epoch multiples of the interval)."""
    if phase is not None:
        time.sleep((phase - time.time()) % interval_s)


def run_counted(ssc, dstream, n: int, phase: Optional[float], poll=None) -> tuple:
    """Start ``ssc`` (at ``phase``), count ``dstream`` until n; stop gracefully. Returns
    (seconds, start, [(time, running total, batch time)] of each output with records);
    ``poll()`` runs every 10 ms until it returns True."""
    counted = []
    outputs: list = []
    done = threading.Event()

    def count(batch_time, rdd):
        counted.append(rdd.count())
        if counted[-1]:
            outputs.append((time.perf_counter(), sum(counted), batch_time.timestamp()))
        if sum(counted) >= n:
            done.set()

    dstream.foreachRDD(count)
    start_at_phase(phase)
    start = time.perf_counter()
    ssc.start()
    if poll is not None:
        while not done.is_set() and time.perf_counter() - start < 600 and not poll():
            time.sleep(0.01)
    if not done.wait(600):
        raise SystemExit(f"counted only {sum(counted)} of {n} in 600 s")
    elapsed = time.perf_counter() - start
    ssc.stop(stopSparkContext=False, stopGraceFully=True)
    assert sum(counted) == n, sum(counted)
    return elapsed, start, outputs


def timeline_of(elapsed: float, start: float, outputs: list, fetched: float) -> Timeline:
    (first_at, first_total, _), (last_at, last_total, last_batch) = outputs[0], outputs[-1]
    steady = (last_total - first_total) / (last_at - first_at) if last_at > first_at else 0.0
    # the batch time in perf_counter terms: wall-clock batch time less the wall-clock start
    wall_start = time.time() - (time.perf_counter() - start)
    return Timeline(
        elapsed,
        start,
        first_at,
        steady,
        fetched,
        start + (last_batch - wall_start),
        wall_start % 1.0,
    )


def floor(sc, n: int, phase: Optional[float], shards: int) -> Timeline:
    """Spark's own share: the same records (strings of ~100 B) already cached, in RDDs the
    size and shape of createStream's rounds (a shard's 10,000-record page a partition
    ... grouped a task per core, MEMORY_AND_DISK_2), in a queue stream with the same 1 s
    batches and the same count; from ``ssc.start()`` until counted. What is left is the
    wait for the first batch time and a batch job over the cached records."""
    from pyspark.storagelevel import StorageLevel
    from pyspark.streaming import StreamingContext

    payload = "x" * 90
    per_round = shards * 10_000
    tasks = min(shards, max(1, sc.defaultParallelism))
    rdds = []
    for first in range(0, n, per_round):
        size = min(per_round, n - first)
        rdd = sc.parallelize(range(first, first + size), tasks).map(lambda i: f"{i:09d}{payload}")
        rdd.persist(StorageLevel.MEMORY_AND_DISK_2)
        rdd.count()
        rdds.append(rdd)
    ssc = StreamingContext(sc, 1)
    try:
        queued = ssc.queueStream(rdds, oneAtATime=False)
        elapsed, start, outputs = run_counted(ssc, queued, n, phase)
    finally:
        for rdd in rdds:
            rdd.unpersist()
    return timeline_of(elapsed, start, outputs, float("nan"))


def print_phased(
    n: int, runs: list, floors: list, raw_s: float, paced_s: float, met: Callable[[float], str]
) -> None:
    """The warm runs started at :data:`PHASES`, where their time went, and the floor;
    ``met(ratio)`` says whether a ratio to the raw reader meets the target."""
    mean = statistics.fmean(r.elapsed for r in runs)
    print(
        f"  warm, started at {len(runs)} phases of the batch interval "
        f"({', '.join(f'{p:.2f}' for p in PHASES)} s after a batch time): mean {mean:.2f} s, "
        f"{n / mean:,.0f} records/s; ratio to raw {raw_s / mean:.2f}, to paced raw "
        f"{paced_s / mean:.2f} (target >= 0.9: {met(raw_s / mean)})"
    )
    print("    phase  total s  first output  all fetched  last batch time  its output")
    for r in runs:
        print(
            f"    {r.phase:5.2f}  {r.elapsed:7.2f}  {r.first_output - r.start:12.2f}  "
            f"{r.fetched - r.start:11.2f}  {r.last_batch - r.start:15.2f}  "
            f"{r.start + r.elapsed - r.last_batch:10.2f}"
        )
    fetched = statistics.fmean(r.fetched - r.start for r in runs)
    waited = statistics.fmean(r.last_batch - r.fetched for r in runs)
    job = statistics.fmean(r.start + r.elapsed - r.last_batch for r in runs)
    floor_mean = statistics.fmean(f.elapsed for f in floors)
    floor_wait = statistics.fmean(f.last_batch - f.start for f in floors)
    floor_job = statistics.fmean(f.start + f.elapsed - f.last_batch for f in floors)
    print(
        f"  Spark's floor (the same {n:,} records already cached in round-sized RDDs, a queue "
        f"stream, 1 s batches, the same count), at the same phases: mean {floor_mean:.2f} s = "
        f"the wait for the first batch time {floor_wait:.2f} s + the batch's job "
        f"{floor_job:.2f} s; createStream / floor {mean / floor_mean:.2f}"
    )
    print(
        f"  where the warm time went (means): leases and rounds until every record was "
        f"fetched {fetched:.2f} s (paced raw reader {paced_s:.2f} s: ratio "
        f"{paced_s / fetched:.2f}), then the wait for the next batch time {waited:.2f} s and "
        f"the last batch's job {job:.2f} s"
    )
