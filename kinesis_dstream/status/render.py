"""``kinesis-dstream status``: an application's shards as a table (or JSON), once or
redrawn every ``--watch`` seconds until Ctrl-C."""

from __future__ import annotations

import argparse
import json
import sys
import threading
from typing import Any, Optional

from .shards import AppStatus, RenewalWatch, application_status

#: Moves the cursor home and clears the terminal before a redraw (ANSI).
CLEAR = "\x1b[H\x1b[2J"


def _ms(value: Optional[int]) -> str:
    if value is None:
        return "-"
    return f"{value / 1000:.1f}s" if value >= 1000 else f"{value}ms"


def format_status(status: AppStatus) -> str:
    """Aligned columns, one shard a line, then the totals."""
    header = ("shard", "owner", "renewed", "checkpoint", "sub", "state", "behind", "next record")
    rows = []
    for s in status.shards:
        state = "finished" if s.finished else ("owned" if s.owner else "free")
        renewed = "-" if s.renewed_s_ago is None else f"{s.renewed_s_ago:.0f}s ago"
        rows.append(
            (
                s.shard_id,
                s.owner or "-",
                renewed,
                s.checkpoint,
                str(s.checkpoint_sub),
                state,
                _ms(s.millis_behind_latest) if s.millis_behind_latest is not None else "?",
                s.lag_note
                or (
                    f"{_ms(s.next_record_age_ms)} old" if s.next_record_age_ms is not None else "-"
                ),
            )
        )
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip()
        for row in [header, *rows]
    ]
    t = status.totals
    lines.append(
        f"{t['shards']} shard(s) of stream {status.stream!r}, application "
        f"{status.application!r}: {t['workers']} worker(s), {t['unowned']} unowned, "
        f"{t['finished']} finished; most behind: {_ms(t['max_millis_behind_latest'])}"
        + (f"; lag unknown on {t['lag_unknown']}" if t["lag_unknown"] else "")
        + f" (at {status.taken_at})"
    )
    return "\n".join(lines)


def status_command(args: argparse.Namespace, stop: threading.Event, out: Any = None) -> int:
    """Print the status once, or every ``args.watch`` seconds until ``stop`` is set.

    A missing lease table or stream is one error naming it (raised before any report),
    not a report with the error on every shard's line."""
    from ..aws import create_client
    from ..leases.admin import open_lease_table
    from ..retrieval.streams import require_stream

    table = open_lease_table(args.table or args.app, args.endpoint_url, args.region)
    kinesis = create_client("kinesis", region_name=args.region, endpoint_url=args.endpoint_url)
    require_stream(kinesis, args.stream)
    renewals = RenewalWatch()
    return _report(
        lambda: [application_status(args.app, args.stream, table.list_leases(), kinesis, renewals)],
        args,
        stop,
        out,
    )


def query_status_command(args: argparse.Namespace, stop: threading.Event, out: Any = None) -> int:
    """The status of a Structured Streaming query from its ``--checkpoint-location``."""
    from ..aws import ClientSpec, create_client
    from ..sql.ends.s3 import S3EndStore
    from ..sql.ends.store import DirectoryEndStore, DynamoDBEndStore
    from .query import CheckpointLocation, query_status

    def spec(service: str) -> ClientSpec:
        return ClientSpec(service, region_name=args.region, endpoint_url=args.endpoint_url)

    if args.end_store_table:
        store: Any = DynamoDBEndStore(args.end_store_table, spec("dynamodb"))
    elif args.metadata_path and args.metadata_path.startswith(("s3://", "s3a://")):
        store = S3EndStore.from_url(args.metadata_path, spec("s3"))
    elif args.metadata_path:
        store = DirectoryEndStore(args.metadata_path)
    else:
        raise ValueError(
            "--checkpoint-location needs the query's end store: --metadata-path (its "
            "metadataPath option: a directory or s3://) or --end-store-table"
        )
    location = CheckpointLocation(args.checkpoint_location, spec("s3").client)
    kinesis = create_client("kinesis", region_name=args.region, endpoint_url=args.endpoint_url)
    return _report(lambda: query_status(location, kinesis, store), args, stop, out)


def _report(take: Any, args: argparse.Namespace, stop: threading.Event, out: Any) -> int:
    out = out or sys.stdout
    redraw = args.watch is not None and out.isatty()
    while True:
        reports = take()
        if args.json:
            text = "\n".join(json.dumps(report.to_dict()) for report in reports)
        else:
            text = "\n\n".join(format_status(report) for report in reports)
        print((CLEAR if redraw else "") + text, file=out, flush=True)
        if args.watch is None or stop.wait(args.watch):
            return 0
