"""What one read of an idle shard costs: client CPU per call, and the server's apart.

    python -m benchmarks.bench_shard_read [--servers bench,moto,kinesalite] [--calls 300]
                                          [--rounds 5] [--profile]
                                          [--exchanges hand-written,h11,httptools]

For each local server (``bench``: :mod:`benchmarks.kinesis_server`, kept-alive and in
memory; ``moto``: moto's server; ``kinesalite``), one stream of one empty shard, and on it,
in ``--rounds`` interleaved rounds of ``--calls`` reads each:

- ``boto3 get_records``: a plain boto3 client (botocore's defaults), ``get_records`` with
  the page's ``NextShardIterator`` each time: the baseline;
- ``reader, botocore``: the library's read path as it was (a :class:`ShardReader` on a
  :func:`~kinesis_dstream.aws.create_client` client: botocore's call, the page decoder),
  one ``read(max_calls=1)`` per read, unpaced;
- ``reader, lean, X``: the same reader on a client with the lean GetRecords path
  (:mod:`kinesis_dstream.retrieval.lean_get_records`), the library's default, its HTTP
  exchange on ``X`` (each of ``--exchanges``: the hand-written one, h11's, httptools');
- ``lean get_records, X``: the lean call alone, as the baseline's loop makes it;
- ``exchange alone, X``: the HTTP exchange alone, one request signed once and posted
  again and again (no signing, no page decoding).

Printed per server and path: the medians over rounds of client CPU per read
(``time.process_time()`` of this process only), wall time per read, and the server
process's CPU per read (from ``/proc``, apart from ours), then each path's ratio to the
baseline of the same run, and each exchange's cost beside the first's, the difference as
a share of a read on the first (``reader, lean``). ``--profile`` prints where the reader
paths' time goes (cProfile's top functions by own time, per read) on the first server.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import re
import statistics
import time
from importlib import metadata
from typing import Any, Callable
from urllib.parse import urlsplit

import boto3
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.config import Config
from botocore.credentials import Credentials

from benchmarks import results
from benchmarks.http_exchanges import H11Connection, HandWrittenConnection
from benchmarks.kinesis_server import BenchKinesis
from kinesis_dstream.local import LocalAWS
from kinesis_dstream.retrieval import lean_get_records
from kinesis_dstream.retrieval.keep_alive import HttptoolsConnection, Pool
from kinesis_dstream.retrieval.reader import ReaderConfig, ShardReader, StartPosition

STREAM = "idle"
EXCHANGES = {
    "hand-written": HandWrittenConnection,
    "h11": H11Connection,
    "httptools": HttptoolsConnection,
}
_TICKS = os.sysconf("SC_CLK_TCK")


def process_cpu_s(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` and its waited-for children."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return sum(int(value) for value in fields[11:15]) / _TICKS


def start_server(name: str) -> LocalAWS:
    if name == "bench":
        return BenchKinesis().start()
    if name == "moto":
        return LocalAWS().start()
    if name == "kinesalite":
        from tests.support.npm_servers import NodeServer

        return NodeServer("kinesalite").start()
    raise SystemExit(f"unknown server {name!r}: bench, moto or kinesalite")


def idle_shard(server: LocalAWS) -> str:
    """Create the stream of one empty shard; its shard id once ACTIVE."""
    client = server.client("kinesis")
    client.create_stream(StreamName=STREAM, ShardCount=1)
    deadline = time.monotonic() + 60
    while True:
        summary = client.describe_stream_summary(StreamName=STREAM)["StreamDescriptionSummary"]
        if summary["StreamStatus"] == "ACTIVE":
            break
        if time.monotonic() > deadline:
            raise SystemExit(f"stream not ACTIVE on {server.label} within 60 s")
        time.sleep(0.05)
    return client.list_shards(StreamName=STREAM)["Shards"][0]["ShardId"]


def boto3_client(server: LocalAWS) -> Any:
    return boto3.client(
        "kinesis",
        region_name=server.region_name,
        endpoint_url=server.endpoint_url,
        aws_access_key_id=server.access_key_id,
        aws_secret_access_key=server.secret_access_key,
        config=Config(),
    )


def raw_loop(client: Any, shard_id: str, call: Callable) -> Callable[[int], None]:
    """``calls`` reads by the baseline's loop: ``call(client, iterator)`` each time."""
    iterator = client.get_shard_iterator(
        StreamName=STREAM, ShardId=shard_id, ShardIteratorType="LATEST"
    )["ShardIterator"]

    def run(calls: int) -> None:
        nonlocal iterator
        for _ in range(calls):
            iterator = call(client, iterator)["NextShardIterator"]

    return run


def reader_loop(client: Any, shard_id: str) -> Callable[[int], None]:
    reader = ShardReader(
        client, STREAM, shard_id, StartPosition.latest(), config=ReaderConfig(min_call_interval_s=0)
    )

    def run(calls: int) -> None:
        for _ in range(calls):
            reader.read(max_calls=1)

    return run


def lean_client(server: LocalAWS, exchange: str) -> Any:
    """A client of the library's whose lean GetRecords path runs on ``exchange``."""
    client = server.client("kinesis", lean_get_records=False)
    if lean_get_records.install(client, EXCHANGES[exchange]) is None:
        raise SystemExit("the lean GetRecords path did not install on this client")
    return client


def paths(server: LocalAWS, shard_id: str, exchanges: list) -> dict:
    loops = {
        "boto3 get_records": raw_loop(
            boto3_client(server),
            shard_id,
            lambda c, it: c.get_records(ShardIterator=it, Limit=10000),
        ),
        "reader, botocore": reader_loop(server.client("kinesis", lean_get_records=False), shard_id),
    }
    for exchange in exchanges:
        loops[f"reader, lean, {exchange}"] = reader_loop(lean_client(server, exchange), shard_id)
    for exchange in exchanges:
        loops[f"lean get_records, {exchange}"] = raw_loop(
            lean_client(server, exchange),
            shard_id,
            lambda c, it: lean_get_records.get_records(c, it, 10000),
        )
    for exchange in exchanges:
        loops[f"exchange alone, {exchange}"] = exchange_loop(server, shard_id, exchange)
    return loops


def exchange_loop(server: LocalAWS, shard_id: str, exchange: str) -> Callable[[int], None]:
    """The HTTP exchange alone: one GetRecords request, signed once, posted again and
    again on a pool of ``exchange``'s connections (no signing, no page decoding)."""
    client = lean_client(server, exchange)
    iterator = client.get_shard_iterator(
        StreamName=STREAM, ShardId=shard_id, ShardIteratorType="LATEST"
    )["ShardIterator"]
    lean = lean_get_records.installed(client)
    assert lean is not None
    request = lean._request(json.dumps({"ShardIterator": iterator, "Limit": 10000}).encode())
    url = urlsplit(server.endpoint_url)
    pool = Pool(server.endpoint_url, url.hostname, url.port, None, 10, 10, EXCHANGES[exchange])
    if pool.post(request).status != 200:
        raise SystemExit(f"the {exchange} exchange's GetRecords was refused")

    def run(calls: int) -> None:
        for _ in range(calls):
            pool.post(request)

    return run


def measure(run: Callable[[int], None], calls: int, server_pid: int) -> tuple:
    """(client CPU, wall, server CPU) per call, in milliseconds."""
    server_before = process_cpu_s(server_pid)
    cpu_before, wall_before = time.process_time(), time.perf_counter()
    run(calls)
    cpu, wall = time.process_time() - cpu_before, time.perf_counter() - wall_before
    server = process_cpu_s(server_pid) - server_before
    return tuple(1000 * value / calls for value in (cpu, wall, server))


def print_profile(path: str, run: Callable[[int], None], calls: int) -> None:
    """Where a path's time goes: cProfile's top functions by own time, per read."""
    profiler = cProfile.Profile(time.process_time)  # CPU, not the waits on the server
    profiler.runcall(run, calls)
    stats = pstats.Stats(profiler)
    print(f"\nprofile of '{path}', {calls} reads (cProfile's CPU clock: its own overhead included)")
    print("  own ms/read  function")
    rows = sorted(stats.stats.items(), key=lambda item: -item[1][2])[:12]  # type: ignore[attr-defined]
    for (filename, line, function), (_, _, own, _, _) in rows:
        # the package's own path (site-packages, the standard library, ours), not the machine's
        where = re.sub(
            r"^.*(/site-packages/|/lib/python3\.\d+/|/(?=(kinesis_dstream|benchmarks)/))",
            "",
            filename,
        )
        print(f"  {1000 * own / calls:10.3f}  {function} ({where}:{line})")


def bench_server(name: str, calls: int, rounds: int, profile: bool, exchanges: list) -> None:
    server = start_server(name)
    try:
        shard_id = idle_shard(server)
        loops = paths(server, shard_id, exchanges)
        for run in loops.values():
            run(20)  # warm: connections, caches, the first iterator
        samples: dict = {path: [] for path in loops}
        for _ in range(rounds):
            for path, run in loops.items():
                assert server.pid is not None
                samples[path].append(measure(run, calls, server.pid))
        if profile:
            for path in ("reader, botocore", *(f"reader, lean, {x}" for x in exchanges)):
                print_profile(path, loops[path], calls)
    finally:
        server.stop()
    baseline = statistics.median(s[0] for s in samples["boto3 get_records"])
    print(f"\n### {server.label}: {calls} reads x {rounds} rounds, medians\n")
    print("| path | client CPU ms/read | / boto3 | wall ms/read | server CPU ms/read |")
    print("| --- | --- | --- | --- | --- |")
    medians = {}
    for path, rows in samples.items():
        cpu, wall, server_cpu = (statistics.median(r[i] for r in rows) for i in range(3))
        medians[path] = cpu
        print(f"| {path} | {cpu:.3f} | {cpu / baseline:.2f} | {wall:.3f} | {server_cpu:.3f} |")
    print_exchange_costs(medians, exchanges)


#: The three measures of an exchange's cost, from the whole read to the exchange alone.
KINDS = ("reader, lean", "lean get_records", "exchange alone")


def print_exchange_costs(medians: dict, exchanges: list) -> None:
    """Each exchange's CPU beside the first's, the difference as a share of a read (the
    reader's, on the first exchange): what the issue's rule weighs."""
    first = exchanges[0]
    if len(exchanges) < 2:
        return
    read = medians[f"reader, lean, {first}"]
    print(
        f"\nEach exchange's CPU (ms) and its difference from {first}'s as a share of a read"
        f" ('reader, lean, {first}': {read:.3f} ms):\n"
    )
    print("| exchange | " + " | ".join(f"{kind} | +/- of a read" for kind in KINDS) + " |")
    print("| --- |" + " --- | --- |" * len(KINDS))
    for exchange in exchanges:
        cells = []
        for kind in KINDS:
            cpu, reference = medians[f"{kind}, {exchange}"], medians[f"{kind}, {first}"]
            cells += [f"{cpu:.3f}", f"{100 * (cpu - reference) / read:+.1f}%"]
        print(f"| {exchange} | {' | '.join(cells)} |")


def signing_costs(count: int = 2000) -> None:
    """SigV4 of one GetRecords request alone: botocore's signer (the lean path's), and
    AWS's Common Runtime (``awscrt``, not a dependency) when it is installed."""
    body = b'{"ShardIterator":"' + b"x" * 200 + b'","Limit":10000}'
    headers = {
        "X-Amz-Target": "Kinesis_20131202.GetRecords",
        "Content-Type": "application/x-amz-json-1.1",
    }
    frozen = Credentials("AKIDEXAMPLE", "not-a-secret").get_frozen_credentials()

    def botocore_sign() -> None:
        request = AWSRequest(
            method="POST",
            url="https://kinesis.us-east-1.amazonaws.com/",
            data=body,
            headers=dict(headers),
        )
        SigV4Auth(frozen, "kinesis", "us-east-1").add_auth(request)

    costs = {"botocore SigV4Auth": botocore_sign}
    try:
        from awscrt import auth as crt_auth
        from awscrt import http as crt_http
    except ImportError:
        crt_auth = None
    if crt_auth is not None:
        provider = crt_auth.AwsCredentialsProvider.new_static("AKIDEXAMPLE", "not-a-secret")

        def crt_sign() -> None:
            request = crt_http.HttpRequest(
                "POST",
                "/",
                crt_http.HttpHeaders(
                    [("Host", "kinesis.us-east-1.amazonaws.com"), *headers.items()]
                ),
                io.BytesIO(body),
            )
            config = crt_auth.AwsSigningConfig(
                algorithm=crt_auth.AwsSigningAlgorithm.V4,
                signature_type=crt_auth.AwsSignatureType.HTTP_REQUEST_HEADERS,
                credentials_provider=provider,
                region="us-east-1",
                service="kinesis",
            )
            crt_auth.aws_sign_request(request, config).result()

        costs["awscrt aws_sign_request"] = crt_sign
    print(f"\nSigning one GetRecords request alone, {count} times, best of 3 (CPU ms/request):")
    for name, sign in costs.items():
        best = min(_cpu_ms(sign, count) for _ in range(3))
        print(f"  {name:26} {best:.3f}")
    if crt_auth is None:
        print("  awscrt                     not installed (pip install awscrt to compare)")


def _cpu_ms(fn: Callable[[], None], count: int) -> float:
    before = time.process_time()
    for _ in range(count):
        fn()
    return 1000 * (time.process_time() - before) / count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--servers", default="bench,moto,kinesalite")
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--profile", action="store_true", help="print a profile of the reader paths"
    )
    parser.add_argument(
        "--exchanges",
        default=",".join(EXCHANGES),
        help="the lean path's HTTP exchanges to compare, the reference first "
        f"(of {', '.join(EXCHANGES)})",
    )
    args = parser.parse_args()
    exchanges = [x.strip() for x in args.exchanges.split(",")]
    unknown = [x for x in exchanges if x not in EXCHANGES]
    if unknown:
        parser.error(f"--exchanges: unknown {', '.join(unknown)} (known: {', '.join(EXCHANGES)})")
    print(
        f"Idle-shard reads, {args.calls} per round, {args.rounds} rounds; client CPU is this "
        f"process's (time.process_time), server CPU its process's apart. Load average at "
        f"start: {' '.join(f'{v:.2f}' for v in os.getloadavg())} on {os.cpu_count()} cores."
    )
    try:
        crt = f"awscrt {metadata.version('awscrt')} installed: botocore signs with the CRT"
    except metadata.PackageNotFoundError:
        crt = "awscrt not installed: botocore signs with its own SigV4Auth"
    print(crt)
    for index, name in enumerate(args.servers.split(",")):
        bench_server(name.strip(), args.calls, args.rounds, args.profile and index == 0, exchanges)
    signing_costs()
    print(f"\nLoad average at end: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")


if __name__ == "__main__":
    results.run(main, "shard-read", "Idle-shard reads: CPU per read")
