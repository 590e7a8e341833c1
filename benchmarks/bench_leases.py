"""Lease protocol costs at the default failover time (10 s), on moto's server.

    python -m benchmarks.bench_leases [--failover-s 10] [--window-s 30]

1. DynamoDB writes per held lease per minute, two workers holding 4 leases each for
   ``--window-s``, against the KCL's nominal rate at the same failover time (a renewal
   every failover/3: 18 a minute at 10 s).
2. Failover: one worker is killed without releasing; the time until the survivor holds
   its leases, against the protocol's bound (failover time + 2 taker intervals).
"""

from __future__ import annotations

import argparse
import logging
import time
import uuid

from kinesis_dstream.leases.coordinator import LeaseCoordinator
from kinesis_dstream.leases.dynamodb import LeaseTable
from kinesis_dstream.leases.lease import Lease
from kinesis_dstream.local import LocalAWS

LEASES = 8


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--failover-s", type=float, default=10.0)
    parser.add_argument("--window-s", type=float, default=60.0)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    with LocalAWS() as aws:
        app = f"bench-leases-{uuid.uuid4().hex[:8]}"
        setup = LeaseTable(aws.client("dynamodb"), app)
        setup.create_if_missing()
        for i in range(LEASES):
            setup.create_lease(Lease(f"shardId-{i:012d}"))
        doomed = LeaseCoordinator(
            LeaseTable(aws.client("dynamodb"), app),
            "doomed",
            failover_time_s=args.failover_s,
            max_leases_for_worker=LEASES // 2,
        ).start()
        survivor = LeaseCoordinator(
            LeaseTable(aws.client("dynamodb"), app), "survivor", failover_time_s=args.failover_s
        ).start()
        try:
            assert len(doomed.held_leases()) == len(survivor.held_leases()) == LEASES // 2
            before = doomed.table.writes + survivor.table.writes
            time.sleep(args.window_s)
            writes = doomed.table.writes + survivor.table.writes - before
            per_lease_minute = writes / LEASES / (args.window_s / 60)
            nominal = 60 / (args.failover_s / 3)
            print(
                f"failover time {args.failover_s:g}s, {LEASES} leases on 2 workers, "
                f"{args.window_s:g}s window (moto's server)"
            )
            print(
                f"writes per held lease per minute: {per_lease_minute:.1f} "
                f"(KCL nominal {nominal:.0f}; ratio {per_lease_minute / nominal:.2f})"
            )

            orphans = set(doomed.held_leases())
            doomed.stop(release=False)  # a crash: the leases must expire first
            killed_at = time.monotonic()
            bound = args.failover_s + 2 * survivor.taker_interval_s
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


if __name__ == "__main__":
    main()
