"""The baselines of ``bench_kcl_idle``: every shard of a stream read once per interval,
as a daemon reads idle shards, by a bare boto3 client or by the library's reader.

    python -m benchmarks.idle_poller --client boto3|reader --stream NAME --endpoint URL
        --region REGION --ready FILE [--interval-s 1.0] [--threads 8]

Credentials come from the environment. ``boto3``: a plain boto3 client (botocore's
defaults), ``get_records`` with each page's ``NextShardIterator``; ``reader``: one
:class:`~kinesis_dstream.retrieval.reader.ShardReader` per shard on a
:func:`~kinesis_dstream.aws.create_client` client (the lean GetRecords path, the page
decoder), one ``read(max_calls=1)`` a poll. ``--threads`` threads share the shards
(thread *i* reads every *threads*-th shard), each reading its shards in turn and waiting
for the next interval; a thread that falls behind reads on without waiting, so the
process polls as often as its CPU lets it, never more than once an interval a shard.
Once every shard has its first iterator the file ``--ready`` is written (the positive
signal the benchmark waits for); SIGTERM stops the threads, each joined within a bound.
"""

from __future__ import annotations

import argparse
import signal
import threading
import time
from pathlib import Path
from typing import Callable

#: How long a stop waits for each thread (one read in flight at most).
JOIN_S = 10.0


def boto3_polls(args: argparse.Namespace, shard_ids: list) -> list:
    """One poll function per shard: a bare boto3 ``get_records`` on the last iterator."""
    import boto3
    from botocore.config import Config

    client = boto3.client(
        "kinesis",
        region_name=args.region,
        endpoint_url=args.endpoint,
        config=Config(max_pool_connections=args.threads),
    )

    def poll_of(shard_id: str) -> Callable[[], None]:
        iterator = client.get_shard_iterator(
            StreamName=args.stream, ShardId=shard_id, ShardIteratorType="TRIM_HORIZON"
        )["ShardIterator"]

        def poll() -> None:
            nonlocal iterator
            page = client.get_records(ShardIterator=iterator, Limit=10000)
            iterator = page["NextShardIterator"]

        return poll

    return [poll_of(shard_id) for shard_id in shard_ids]


def reader_polls(args: argparse.Namespace, shard_ids: list) -> list:
    """One poll function per shard: the library's reader, one GetRecords a poll."""
    from kinesis_dstream.aws import create_client
    from kinesis_dstream.retrieval.reader import ReaderConfig, ShardReader, StartPosition

    client = create_client("kinesis", region_name=args.region, endpoint_url=args.endpoint)
    config = ReaderConfig(min_call_interval_s=0)

    def poll_of(shard_id: str) -> Callable[[], None]:
        reader = ShardReader(
            client, args.stream, shard_id, StartPosition.trim_horizon(), config=config
        )
        reader.read(max_calls=1)  # the first iterator (and the first, empty, page)
        return lambda: reader.read(max_calls=1)

    return [poll_of(shard_id) for shard_id in shard_ids]


def poll_shards(polls: list, interval_s: float, stop: threading.Event) -> None:
    """Each poll once per ``interval_s`` (on without waiting when behind) until ``stop``."""
    due = time.monotonic()
    while not stop.is_set():
        for poll in polls:
            if stop.is_set():
                return
            poll()
        due += interval_s
        stop.wait(max(0.0, due - time.monotonic()))
        due = max(due, time.monotonic() - interval_s)  # behind: no burst to catch up


def shard_ids(args: argparse.Namespace) -> list:
    from kinesis_dstream.aws import create_client
    from kinesis_dstream.retrieval.streams import list_shard_ids

    client = create_client("kinesis", region_name=args.region, endpoint_url=args.endpoint)
    return list_shard_ids(client, args.stream)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--client", choices=("boto3", "reader"), required=True)
    parser.add_argument("--stream", required=True)
    parser.add_argument("--endpoint", required=True)
    parser.add_argument("--region", required=True)
    parser.add_argument("--ready", type=Path, required=True)
    parser.add_argument("--interval-s", type=float, default=1.0)
    parser.add_argument("--threads", type=int, default=8)
    args = parser.parse_args()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda signum, frame: stop.set())
    ids = shard_ids(args)
    polls = (boto3_polls if args.client == "boto3" else reader_polls)(args, ids)
    threads = [
        threading.Thread(
            target=poll_shards,
            args=(polls[n :: args.threads], args.interval_s, stop),
            name=f"poller-{n}",
        )
        for n in range(args.threads)
    ]
    for thread in threads:
        thread.start()
    args.ready.write_text(f"{len(ids)} shards\n")
    while not stop.wait(1.0):
        pass
    deadline = time.monotonic() + JOIN_S
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    alive = [thread.name for thread in threads if thread.is_alive()]
    if alive:
        print(f"threads still reading after {JOIN_S:.0f}s: {', '.join(alive)}", flush=True)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
