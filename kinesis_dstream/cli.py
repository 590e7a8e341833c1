"""The ``kinesis-dstream`` command: operational subcommands."""

from __future__ import annotations

import argparse
import logging
import sys
import threading
from collections.abc import Sequence
from typing import Optional


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


def main(argv: Optional[Sequence[str]] = None) -> int:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    parser = argparse.ArgumentParser(prog="kinesis-dstream")
    commands = parser.add_subparsers(dest="command", required=True)
    local = commands.add_parser("local-aws", help="run the embedded local AWS (moto) until Ctrl-C")
    local.add_argument(
        "--port", type=int, default=0, help="port on 127.0.0.1 (default: a free one)"
    )
    local.set_defaults(func=_local_aws)
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
