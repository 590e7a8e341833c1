"""``kinesis-dstream kcl --properties app.properties``: the MultiLangDaemon's command."""

from __future__ import annotations

import argparse
import logging
from typing import Any

DESCRIPTION = """\
Run an amazon-kclpy application without Java: a pure-Python MultiLangDaemon.

Reads the MultiLangDaemon's own properties file (executableName, streamName or
streamArn, applicationName, regionName, initialPositionInStream with
initialPositionInStreamExtended for AT_TIMESTAMP, AwsCredentialsProvider or
AWSCredentialsProvider, failoverTimeMillis, maxRecords, idleTimeBetweenReadsInMillis,
maxLeasesForWorker, maxLeasesToStealAtOneTime, shardSyncIntervalMillis, workerId,
kinesisEndpoint, dynamoDBEndpoint, timeoutInSeconds, shutdownGraceMillis; other KCL
tuning keys are logged as ignored), takes the leases of applicationName in the Java
KCL's DynamoDB table format, and runs executableName once per held shard, speaking
the multilang protocol on its stdin/stdout. The child's stderr goes to this log with
the shard id.

amazon-kclpy 1.x children (found from the child's own amazon_kclpy, or declared
with multiLangProtocol = KCL_1X or KCL_1X_GRACEFUL) get KCL 1.x's messages: shutdown
TERMINATE at a shard's end, shutdown ZOMBIE for a lost lease; their file reads as
KCL 1.x read it (no regionName: us-east-1; no retrievalMode: polling).

SIGTERM or Ctrl-C: every child gets shutdownRequested (it may checkpoint; a kclpy
1.0-1.4 child, which knows none, gets shutdown ZOMBIE), the leases are released,
and the command exits 0. A child that exits or breaks the
protocol stops the daemon with exit status 1 (as the Java daemon does); a child past
timeoutInSeconds halts it (exit 1, leases left to expire).

Was:  java -cp <kclpy jars> software.amazon.kinesis.multilang.MultiLangDaemon \
        --properties-file app.properties
Now:  kinesis-dstream kcl --properties app.properties
"""


def add_kcl_command(commands: Any, common: argparse.ArgumentParser) -> None:
    """Add the ``kcl`` subcommand to the top-level CLI's subparsers."""
    kcl = commands.add_parser(
        "kcl",
        parents=[common],
        help="run an amazon-kclpy application (the MultiLangDaemon, without Java)",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    kcl.add_argument(
        "--properties",
        "--properties-file",
        "-p",
        dest="properties",
        required=True,
        help="the MultiLangDaemon properties file (as given to the Java daemon)",
    )
    kcl.add_argument(
        "--log-level",
        default="INFO",
        choices=("DEBUG", "INFO", "WARNING", "ERROR"),
        help="this daemon's log level (default INFO; children's stderr logs at WARNING)",
    )
    kcl.set_defaults(func=run_kcl)


def run_kcl(args: argparse.Namespace) -> int:
    from ..stop_signals import stop_signals
    from .daemon import MultiLangDaemon
    from .properties import load_properties

    root = logging.getLogger()
    root.setLevel(logging.WARNING)
    fmt = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    for handler in root.handlers:
        handler.setFormatter(fmt)
    logging.getLogger("kinesis_dstream").setLevel(
        logging.DEBUG if getattr(args, "debug", False) else args.log_level
    )
    config = load_properties(args.properties)
    with stop_signals() as stop:
        daemon = MultiLangDaemon(config)
        return daemon.run(stop)
