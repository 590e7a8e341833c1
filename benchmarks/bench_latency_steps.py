"""Where a record's latency goes in createStream, step by step, at many shards.

    python -m benchmarks.bench_latency_steps [--shards 512] [--rate 500] [--seconds 20]
                                             [--warmup 5]

The set-up of ``bench_shards --paths createStream`` (Kinesis on the benchmark server, the
leases on a moto server, local[2], 1 s batches, LATEST, a producer in its own process
putting ``--rate`` records a second over every shard, each carrying its put time), with a
message handler that stamps each record with the time it was handled in the round's task
(just after its shard's read) and an output that notes its batch time. For every record
put after ``--warmup`` seconds it splits put -> output into:

- put -> read: the wait for the next round that reads the record's shard;
- read -> batch time: the rest of that round and the wait for the batch time (a round
  still running at its batch time is waited for, bounded: then this is negative);
- batch time -> output: the batch's job (and a wait for the round, if any).

It also prints each round's length and where in the second rounds start and end (the
batches' times are whole seconds), and Spark's scheduling and processing delays of the
batches. The message handler makes a tuple per record where ``bench_shards`` decodes the
data: the totals are comparable, not identical.
"""

from __future__ import annotations

import argparse
import os
import statistics
import threading
import time
import uuid

from benchmarks import results
from benchmarks.bench_shards import Run, create_stream, server_pids, wait_for_leases
from benchmarks.bench_stream import kinesis_server, local_spark_context, spark_environment
from kinesis_dstream.dstream import round_thread
from kinesis_dstream.local import LocalAWS

ROUNDS: list = []  # (wall-clock start, end) of every round


def _timed_rounds() -> None:
    """Note each round's wall-clock start and end (the driver's round thread)."""
    run_round = round_thread.run_round

    def timed(*args, **kwargs):
        start = time.time()
        try:
            return run_round(*args, **kwargs)
        finally:
            ROUNDS.append((start, time.time()))

    round_thread.run_round = timed


def stamp(record):
    """The message handler: the record's text and when its round's task handled it."""
    return (record.data.decode(), time.time())


def pct(values: list, q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, int(len(ordered) * q) - 1)] if ordered else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--shards", type=int, default=512)
    parser.add_argument("--rate", type=int, default=500)
    parser.add_argument("--seconds", type=int, default=20)
    parser.add_argument("--warmup", type=float, default=5.0)
    args = parser.parse_args()
    _timed_rounds()
    with LocalAWS() as moto, kinesis_server("bench", moto) as aws:
        spark_environment(aws)
        from pyspark.streaming import StreamingContext
        from pyspark.streaming.listener import StreamingListener

        sc = local_spark_context("bench-latency-steps")
        run = Run(aws, args.shards, args.rate, args.seconds, args.warmup, server_pids(aws, moto))
        ssc = StreamingContext(sc, 1)
        app = f"bench-{uuid.uuid4().hex[:8]}"
        lines = create_stream(ssc, run, aws, moto, app, args.shards, messageHandler=stamp)
        steps: list = []  # (put, read, batch time, output) per record
        batches: list = []  # (batch time, scheduling delay, processing delay)

        class Delays(StreamingListener):
            def onBatchCompleted(self, completed):
                info = completed.batchInfo()
                batches.append(
                    (
                        info.batchTime().milliseconds() / 1000,
                        (info.schedulingDelay() or 0) / 1000,
                        (info.processingDelay() or 0) / 1000,
                    )
                )

        ssc.addStreamingListener(Delays())

        def output(batch_time, rdd):
            got = rdd.collect()
            now = time.time()
            for text, read_at in got:
                if not text.endswith(" w"):
                    steps.append((float(text.split(" ")[0]), read_at, batch_time.timestamp(), now))
            run.add([text for text, _ in got])

        lines.foreachRDD(output)
        started = threading.Event()
        ssc.start()
        wait_for_leases(moto.client("dynamodb"), app, args.shards, started)
        try:
            result = run.drive(started)
        finally:
            ssc.stop(stopSparkContext=False, stopGraceFully=False)
        report(args, result, steps, batches, run.measure_from)
        sc.stop()


def report(args, result: dict, steps: list, batches: list, cut: float) -> None:
    measured = [s for s in steps if s[0] >= cut]
    print(
        f"createStream, {args.shards} shards, {args.rate} records/s for {args.seconds} s, "
        f"benchmark server, local[2], 1 s batches: delivered {result['delivered']:,} of "
        f"{result['sent']:,}, put -> output p50 {result['p50']:.2f} s, p99 {result['p99']:.2f} s "
        f"(records put after the first {args.warmup:g} s)"
    )
    print("  step                  p50     p90     p99     max  (seconds)")
    for name, step in (
        ("put -> read", lambda s: s[1] - s[0]),
        ("read -> batch time", lambda s: s[2] - s[1]),
        ("batch time -> output", lambda s: s[3] - s[2]),
        ("put -> output", lambda s: s[3] - s[0]),
    ):
        values = [step(s) for s in measured]
        print(
            f"  {name:<20} {statistics.median(values):6.3f}  {pct(values, 0.9):6.3f}  "
            f"{pct(values, 0.99):6.3f}  {max(values):6.3f}"
        )
    rounds = [(s, e) for s, e in ROUNDS if s >= cut]
    lengths = [e - s for s, e in rounds]
    late = sum(1 for s, e in rounds if int(e) > int(s) and e % 1.0 < 0.5)
    print(
        f"  rounds: {len(rounds)}, length p50 {statistics.median(lengths):.3f} s, p90 "
        f"{pct(lengths, 0.9):.3f} s, max {max(lengths):.3f} s; {late} ended after the batch "
        f"time they started before"
    )
    print(
        "  round start, end (s into the second): "
        + ", ".join(f"{s % 1.0:.2f}-{e % 1.0:.2f}" for s, e in rounds[:20])
    )
    spark = [(d, p) for t, d, p in batches if t >= cut]
    print(
        f"  batches (Spark's listener): scheduling delay p50 "
        f"{statistics.median(d for d, _ in spark):.3f} s, max {max(d for d, _ in spark):.3f} s;"
        f" processing p50 {statistics.median(p for _, p in spark):.3f} s, p90 "
        f"{pct([p for _, p in spark], 0.9):.3f} s, max {max(p for _, p in spark):.3f} s"
    )
    print(f"  load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    results.run(main, "latency-steps", "where createStream's latency goes, step by step")
