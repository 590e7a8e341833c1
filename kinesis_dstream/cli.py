"""The ``kinesis-dstream`` command: operational subcommands."""

from __future__ import annotations

import argparse
import logging
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any, Optional


def _local_aws(args: argparse.Namespace) -> int:
    from .local import LocalAWS

    with LocalAWS(port=args.port) as aws:
        print(f"Local AWS (moto) serving at {aws.endpoint_url}")
        print("Point AWS tools at it with:")
        for name, value in aws.env().items():
            print(f"  export {name}={value}")
        print("Press Ctrl-C to stop.", flush=True)
        try:
            threading.Event().wait()  # until Ctrl-C
        except KeyboardInterrupt:
            print("\nstopping", flush=True)
    return 0


def _lease_table(args: argparse.Namespace) -> Any:
    from .aws import create_client
    from .leases.dynamodb import LeaseTable

    client = create_client("dynamodb", region_name=args.region, endpoint_url=args.endpoint_url)
    table = LeaseTable(client, args.app)
    if not table.exists():
        raise SystemExit(
            f"no lease table {args.app!r} at {client.meta.endpoint_url}: "
            "is the application name right?"
        )
    return table


def _state(lease: Any) -> str:
    if lease.is_finished:
        return "finished"
    return "owned" if lease.lease_owner else "free"


def print_leases(leases: list, out: Any = None) -> None:
    """The lease table as aligned columns, one lease a line."""
    out = out or sys.stdout
    header = ("shard", "owner", "checkpoint", "sub-seq", "counter", "parents", "state")
    rows = [
        (
            lease.lease_key,
            lease.lease_owner or "-",
            lease.checkpoint.sequence_number,
            str(lease.checkpoint.sub_sequence_number),
            str(lease.lease_counter),
            ",".join(sorted(lease.parent_shard_ids)) or "-",
            _state(lease),
        )
        for lease in leases
    ]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip(), file=out)
    print(f"{len(rows)} lease(s)", file=out)


def _leases(args: argparse.Namespace) -> int:
    from .esn import ExtendedSequenceNumber

    table = _lease_table(args)
    leases = table.list_leases()
    if args.reset_to is None:
        print_leases(leases)
        return 0
    # Refuse while any worker is alive: a live worker renews, so its counters move.
    time.sleep(args.watch_s)
    moved = sorted(
        lease.lease_key
        for lease, now in zip(leases, _by_key(table.list_leases(), leases))
        if now is None or now.lease_counter != lease.lease_counter
    )
    if moved:
        print(
            f"refusing to reset application {args.app!r}: lease counters still moving "
            f"({', '.join(moved)}) over {args.watch_s:g}s, so a worker is running; "
            "stop every worker first",
            file=sys.stderr,
        )
        return 1
    esn = ExtendedSequenceNumber(args.reset_to)
    failed = [lease.lease_key for lease in leases if table.reset_checkpoint(lease, esn) is None]
    if failed:
        print(f"not reset (changed meanwhile): {', '.join(failed)}", file=sys.stderr)
        return 1
    print(f"reset {len(leases)} lease(s) of {args.app!r} to {args.reset_to}")
    print_leases(table.list_leases())
    return 0


def _by_key(fresh: list, leases: list) -> list:
    index = {lease.lease_key: lease for lease in fresh}
    return [index.get(lease.lease_key) for lease in leases]


def main(argv: Optional[Sequence[str]] = None) -> int:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    parser = argparse.ArgumentParser(prog="kinesis-dstream")
    commands = parser.add_subparsers(dest="command", required=True)
    local = commands.add_parser("local-aws", help="run the embedded local AWS (moto) until Ctrl-C")
    local.add_argument(
        "--port", type=int, default=0, help="port on 127.0.0.1 (default: a free one)"
    )
    local.set_defaults(func=_local_aws)
    leases = commands.add_parser(
        "leases", help="show an application's lease table; --reset-to rewrites checkpoints"
    )
    leases.add_argument("--app", required=True, help="application name (= lease table name)")
    leases.add_argument("--endpoint-url", help="DynamoDB endpoint (default: the AWS SDK's)")
    leases.add_argument("--region", help="AWS region (default: the AWS SDK's)")
    leases.add_argument(
        "--reset-to",
        choices=("TRIM_HORIZON", "LATEST"),
        help="rewrite every checkpoint of a stopped application",
    )
    leases.add_argument(
        "--watch-s",
        type=float,
        default=10.0,
        help="before a reset, watch this long for moving lease counters (default 10 = "
        "the default failover time)",
    )
    leases.set_defaults(func=_leases)
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
