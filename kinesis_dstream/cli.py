"""The ``kinesis-dstream`` command: operational subcommands."""

from __future__ import annotations

import argparse
import logging
import sys
import time
import traceback
from collections.abc import Sequence
from typing import Any, Optional

from .errors import KinesisDStreamError
from .progress_bar import Progress
from .stop_signals import stop_signals

PROG = "kinesis-dstream"
SUBMIT = "submit"


def _local_aws(args: argparse.Namespace) -> int:
    from .local import LocalAWS

    with stop_signals() as stop, LocalAWS(port=args.port) as aws:
        print(f"Local AWS (moto) serving at {aws.endpoint_url}")
        print("Point AWS tools at it with:")
        for name, value in aws.env().items():
            print(f"  export {name}={value}")
        print("Press Ctrl-C to stop.", flush=True)
        while not stop.wait(1.0):  # bounded waits: the signal handler runs between them
            pass
        print("\nstopping", flush=True)
    return 0


def _lease_table(args: argparse.Namespace) -> Any:
    from .leases.admin import open_lease_table

    return open_lease_table(args.app, args.endpoint_url, args.region)


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
    _watch(args.watch_s)
    moved = sorted(
        lease.lease_key
        for lease, now in zip(leases, _by_key(table.list_leases(), leases))
        if now is None or now.lease_counter != lease.lease_counter
    )
    if moved:
        _error(
            f"refusing to reset application {args.app!r}: lease counters still moving "
            f"({', '.join(moved)}) over {args.watch_s:g}s, so a worker is running; "
            "stop every worker first"
        )
        return 1
    esn = ExtendedSequenceNumber(args.reset_to)
    failed = []
    with Progress("resetting leases", len(leases), "leases") as progress:
        for lease in leases:
            if table.reset_checkpoint(lease, esn) is None:
                failed.append(lease.lease_key)
            progress.advance()
    if failed:
        _error(f"not reset (changed meanwhile): {', '.join(failed)}")
        return 1
    print(f"reset {len(leases)} lease(s) of {args.app!r} to {args.reset_to}")
    print_leases(table.list_leases())
    return 0


def _status(args: argparse.Namespace) -> int:
    from .status.render import query_status_command, status_command

    if args.watch is not None and args.watch <= 0:
        raise ValueError(f"--watch must be > 0 seconds, got {args.watch:g}")
    if args.checkpoint_location is None and not (args.app and args.stream):
        raise ValueError(
            "give --app and --stream (a leasing application), or --checkpoint-location"
        )
    with stop_signals() as stop:
        if args.checkpoint_location is not None:
            return query_status_command(args, stop)
        return status_command(args, stop)


def _watch(seconds: float) -> None:
    """Wait ``seconds`` for moving counters, showing the time passing."""
    deadline = time.monotonic() + seconds
    with Progress("watching the lease counters", round(seconds), "s") as progress:
        while (left := deadline - time.monotonic()) > 0:
            time.sleep(min(1.0, left))
            progress.advance(1 if left >= 1.0 else 0)


def _by_key(fresh: list, leases: list) -> list:
    index = {lease.lease_key: lease for lease in fresh}
    return [index.get(lease.lease_key) for lease in leases]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG)
    debug_help = "on failure, print the full traceback (and log this library's retries)"
    parser.add_argument("--debug", action="store_true", help=debug_help)
    # Also accepted after the subcommand; SUPPRESS keeps it from resetting the one above.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=debug_help)
    commands = parser.add_subparsers(dest="command", required=True)
    local = commands.add_parser(
        "local-aws", parents=[common], help="run the embedded local AWS (moto) until Ctrl-C"
    )
    local.add_argument(
        "--port", type=int, default=0, help="port on 127.0.0.1 (default: a free one)"
    )
    local.set_defaults(func=_local_aws)
    leases = commands.add_parser(
        "leases",
        parents=[common],
        help="show an application's lease table; --reset-to rewrites checkpoints",
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
    status = commands.add_parser(
        "status",
        parents=[common],
        help="per shard of an application: owner, renewal, checkpoint and lag, from outside",
    )
    status.add_argument("--app", help="application name (createStream, kcl)")
    status.add_argument("--stream", help="the stream the application reads")
    status.add_argument(
        "--checkpoint-location", help="instead: a Structured Streaming query's (path, s3://)"
    )
    status.add_argument("--metadata-path", help="with --checkpoint-location: its metadataPath")
    status.add_argument(
        "--end-store-table", help="with --checkpoint-location: its DynamoDB end-store table"
    )
    status.add_argument("--table", help="lease table, if not the application name (tableName)")
    status.add_argument("--endpoint-url", help="DynamoDB and Kinesis endpoint (default: SDK's)")
    status.add_argument("--region", help="AWS region (default: the AWS SDK's)")
    status.add_argument("--json", action="store_true", help="one JSON object per report")
    status.add_argument(
        "--watch", type=float, metavar="SECONDS", help="report again every SECONDS until Ctrl-C"
    )
    status.set_defaults(func=_status)
    from .multilang.cli import add_kcl_command

    add_kcl_command(commands, common)
    consumers = commands.add_parser(
        "consumers",
        parents=[common],
        help="list, register or deregister a stream's enhanced fan-out consumers",
    )
    consumers.add_argument("action", choices=("list", "register", "deregister"))
    consumers.add_argument("--stream", required=True, help="stream name")
    consumers.add_argument("--consumer", help="consumer name (register, deregister)")
    consumers.add_argument("--endpoint-url", help="Kinesis endpoint (default: the AWS SDK's)")
    consumers.add_argument("--region", help="AWS region (default: the AWS SDK's)")
    consumers.set_defaults(func=_consumers)
    from .glue.job.runner import add_glue_command

    add_glue_command(commands, common)
    from .asl.submit import add_submit_command

    add_submit_command(commands, common)
    return parser


def _parse(argv: Sequence[str]) -> argparse.Namespace:
    """The command line, read by argparse, but for what follows ``submit``: spark-submit's
    options and the script's arguments, which only the runner reads (it keeps them as
    given); ``submit --help`` before the script is argparse's help."""
    parser = _parser()
    argv = list(argv)
    at = next((i for i, token in enumerate(argv) if not token.startswith("-")), len(argv))
    if argv[at : at + 1] != [SUBMIT]:
        return parser.parse_args(argv)
    from .asl.submit import parse_submit_arguments

    rest = argv[at + 1 :]
    if parse_submit_arguments(rest).help:
        return parser.parse_args([*argv[: at + 1], "--help"])  # prints it and exits
    args = parser.parse_args(argv[: at + 1])
    args.submit_argv = rest
    return args


def consumers_command(
    action: str,
    stream_name: str,
    consumer_name: Optional[str],
    endpoint_url: Optional[str] = None,
    region_name: Optional[str] = None,
    out: Any = None,
) -> int:
    """``kinesis-dstream consumers list|register|deregister``: prints, returns the exit code."""
    from .aws import create_client
    from .retrieval import consumers as api

    out = out or sys.stdout
    if action != "list" and not consumer_name:
        raise ValueError(f"consumers {action} needs --consumer NAME")
    client = create_client("kinesis", region_name=region_name, endpoint_url=endpoint_url)
    if action == "register":
        consumer = api.register_consumer(client, stream_name, str(consumer_name))
        print(f"{consumer.name}  {consumer.status.value}  {consumer.arn}", file=out)
    elif action == "deregister":
        if not api.deregister_consumer(client, stream_name, consumer_name=consumer_name):
            print(f"no consumer {consumer_name!r} on stream {stream_name!r}", file=out)
            return 1
        print(f"deregistered {consumer_name!r} of stream {stream_name!r}", file=out)
    else:
        consumers = api.list_consumers(client, stream_name)
        for consumer in consumers:
            created = consumer.created.isoformat() if consumer.created else "-"
            print(f"{consumer.name}  {consumer.status.value}  {created}  {consumer.arn}", file=out)
        print(f"{len(consumers)} consumer(s) on stream {stream_name!r}", file=out)
    return 0


def _consumers(args: argparse.Namespace) -> int:
    return consumers_command(
        args.action, args.stream, args.consumer, args.endpoint_url, args.region
    )


def _error(message: str) -> None:
    print(f"{PROG}: error: {' '.join(message.split())}", file=sys.stderr)  # one line


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run a subcommand. Failures are one line on stderr and exit 1 (``--debug``: traceback)."""
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    args = _parse(sys.argv[1:] if argv is None else argv)
    if args.debug:
        # Only ours: botocore's debug log shows request headers, session tokens included.
        logging.getLogger("kinesis_dstream").setLevel(logging.DEBUG)
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # the user gets one line, not a botocore stack
        if args.debug:
            traceback.print_exc()
        if isinstance(exc, (KinesisDStreamError, ValueError)):  # they name what to fix
            _error(str(exc))
        else:
            hint = "" if args.debug else " (--debug shows the traceback)"
            _error(f"{type(exc).__name__}: {exc}{hint}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
