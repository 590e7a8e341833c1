"""Lease protocol costs at the default failover time (10 s), on local DynamoDBs.

    python -m benchmarks.bench_leases [--failover-s 10] [--sections scale,protocol]
        [--leases 100,500,1000] [--passes 20] [--servers moto,dynalite] [--window-s 60]

scale (leases at scale, issue 12): one worker holds N leases on moto's server and on
dynalite, its DynamoDB client built as the receiver builds it (the lease-sized read
timeout, botocore's 10 connections, so 10 renewal threads; the renewal retry budget of
:class:`~kinesis_dstream.leases.timing.LeaseTimings`). For each N: the time to take all N
at start, then renewal pass times p50 / p99 / max (start of a pass to the return of its
last call) against the renewal interval, failover/3, over ``--passes`` passes; leases
lost; the longest gap between two renewals of one lease against the failover time
(beyond it the lease is fenced). The taker runs as usual meanwhile (a scan every 20 s).

protocol (two workers, 8 leases):
1. DynamoDB writes per held lease per minute over ``--window-s``, against the KCL's
   nominal rate at the same failover time (a renewal every failover/3: 18 a minute).
2. Failover: one worker is killed without releasing; the time until the survivor holds
   its leases, against the protocol's bound (failover time + 2 taker intervals).
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import math
import time
import uuid
from collections.abc import Iterator
from typing import Any

from benchmarks import results
from kinesis_dstream.aws import create_client
from kinesis_dstream.leases.coordinator import LeaseCoordinator
from kinesis_dstream.leases.dynamodb import LeaseTable
from kinesis_dstream.leases.lease import Lease
from kinesis_dstream.leases.timing import LeaseManagementConfig, LeaseTimings
from kinesis_dstream.local import LocalAWS

LEASES = 8


@contextlib.contextmanager
def server(name: str) -> Iterator[Any]:
    if name == "moto":
        with LocalAWS() as aws:
            yield aws
    else:  # dynalite, installed by `npm ci --prefix tests/npm`
        from tests.support.npm_servers import NodeServer

        with NodeServer(name) as node:
            yield node


def lease_table(aws: Any, app: str, timings: LeaseTimings) -> LeaseTable:
    """The lease table as the receiver builds it."""
    client = create_client(
        "dynamodb",
        region_name=aws.region_name,
        endpoint_url=aws.endpoint_url,
        aws_access_key_id=aws.access_key_id,
        aws_secret_access_key=aws.secret_access_key,
        read_timeout_s=timings.client_read_timeout_s,
    )
    return LeaseTable(client, app, renew_backoff=timings.renew_backoff)


def percentile(values: list, p: float) -> float:
    """Nearest-rank percentile (p99 of fewer than 100 values is their maximum)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def bench_scale(aws: Any, label: str, n: int, timings: LeaseTimings, passes: int) -> None:
    app = f"bench-scale-{n}-{uuid.uuid4().hex[:8]}"
    setup = aws.client("dynamodb", max_pool_connections=20)
    table = LeaseTable(setup, app)
    table.create_if_missing()
    created = time.monotonic()
    for i in range(n):
        table.create_lease(Lease(f"shardId-{i:012d}"))
    create_s = time.monotonic() - created
    worker = LeaseCoordinator(
        lease_table(aws, app, timings), "solo", LeaseManagementConfig(timings)
    )
    started = time.monotonic()
    worker.start()
    try:
        take_s = time.monotonic() - started
        held = len(worker.held_leases())
        deadline = time.monotonic() + (passes + 3) * timings.renewal_interval_s + 30
        while len(worker.renewal_stats().pass_times_s) < passes:
            if time.monotonic() > deadline:
                break
            time.sleep(0.2)
        stats = worker.renewal_stats()
        times = list(stats.pass_times_s)
        budget = timings.renewal_interval_s
        on_time = sum(t <= budget for t in times)
        held_after = len(worker.held_leases())
        print(
            f"{label:8} N={n:5}: took {held}/{n} in {take_s:5.2f}s | renewal pass "
            f"p50 {percentile(times, 50):.3f}s p99 {percentile(times, 99):.3f}s "
            f"max {max(times):.3f}s vs failover/3 {budget:.2f}s ({on_time}/{len(times)} "
            f"passes on time) | lost {worker.counts()['lost']}, held {held_after}/{n}, "
            f"failed calls {stats.failures}, skipped {stats.skipped} | longest gap "
            f"{stats.max_gap_s:.2f}s vs failover {timings.failover_time_s:g}s "
            f"(lease creation {create_s:.1f}s)",
            flush=True,
        )
    finally:
        worker.stop(release=False)


def bench_protocol(aws: Any, failover_s: float, window_s: float) -> None:
    app = f"bench-leases-{uuid.uuid4().hex[:8]}"
    setup = LeaseTable(aws.client("dynamodb"), app)
    setup.create_if_missing()
    for i in range(LEASES):
        setup.create_lease(Lease(f"shardId-{i:012d}"))
    doomed = LeaseCoordinator(
        LeaseTable(aws.client("dynamodb"), app),
        "doomed",
        LeaseManagementConfig.from_failover(failover_s, max_leases_for_worker=LEASES // 2),
    ).start()
    survivor = LeaseCoordinator(
        LeaseTable(aws.client("dynamodb"), app),
        "survivor",
        LeaseManagementConfig.from_failover(failover_s),
    ).start()
    try:
        assert len(doomed.held_leases()) == len(survivor.held_leases()) == LEASES // 2
        before = doomed.table.writes + survivor.table.writes
        time.sleep(window_s)
        writes = doomed.table.writes + survivor.table.writes - before
        per_lease_minute = writes / LEASES / (window_s / 60)
        nominal = 60 / (failover_s / 3)
        print(
            f"failover time {failover_s:g}s, {LEASES} leases on 2 workers, "
            f"{window_s:g}s window (moto's server)"
        )
        print(
            f"writes per held lease per minute: {per_lease_minute:.1f} "
            f"(KCL nominal {nominal:.0f}; ratio {per_lease_minute / nominal:.2f})"
        )

        orphans = set(doomed.held_leases())
        doomed.stop(release=False)  # a crash: the leases must expire first
        killed_at = time.monotonic()
        bound = failover_s + 2 * survivor.taker_interval_s
        while not orphans <= set(survivor.held_leases()):
            if time.monotonic() - killed_at > 2 * bound:
                raise SystemExit(f"survivor did not take the leases within {2 * bound:.0f}s")
            time.sleep(0.05)
        took = time.monotonic() - killed_at
        print(
            f"failover after a crash: {took:.1f}s (bound failover + 2 taker intervals "
            f"= {bound:.1f}s; ratio {took / bound:.2f})"
        )
    finally:
        doomed.stop(release=False)
        survivor.stop()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--failover-s", type=float, default=10.0)
    parser.add_argument("--sections", default="scale,protocol")
    parser.add_argument("--leases", default="100,500,1000")
    parser.add_argument("--passes", type=int, default=20)
    parser.add_argument("--servers", default="moto,dynalite")
    parser.add_argument("--window-s", type=float, default=60.0)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    sections = args.sections.split(",")
    timings = LeaseTimings.from_failover(args.failover_s)
    if "scale" in sections:
        print(
            f"one worker, failover {args.failover_s:g}s: renewal interval (failover/3) "
            f"{timings.renewal_interval_s:.2f}s, lease client read timeout "
            f"{timings.client_read_timeout_s:g}s, {args.passes} renewal passes per N"
        )
        for name in args.servers.split(","):
            with server(name) as aws:
                for n in (int(x) for x in args.leases.split(",")):
                    bench_scale(aws, name, n, timings, args.passes)
    if "protocol" in sections:
        with LocalAWS() as aws:
            bench_protocol(aws, args.failover_s, args.window_s)


if __name__ == "__main__":
    results.run(main, "leases", "Lease renewal passes at 100 to 1,000 leases a worker")
