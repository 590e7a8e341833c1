"""What an idle shard costs a kcl daemon: the Java KCL 2.5.8 MultiLangDaemon and
``kinesis-dstream kcl`` on the same stream of idle shards, one after the other, and
beside them, on the same shards in the same run, a bare boto3 ``get_records`` loop and
the library's reader alone (``benchmarks/idle_poller.py``): what one read costs.

    python -m benchmarks.bench_kcl_idle [--shards 1024] [--window 40] [--settle 15]
        [--daemons java,ours,boto3,reader] [--failover-ms MS] [--idle-ms MS] [--profile]
        [--keep DIR] [--markdown [PATH]]

Kinesis is the benchmark server (``benchmarks/kinesis_server.py``: in memory, kept-alive
HTTP/1.1, its calls counted); the Java daemon reaches it through ``nghttpx`` (its Kinesis
client speaks HTTP/2 cleartext; ``tests/support/java_kcl.py``), ours directly. DynamoDB
(the leases) is moto's server. Both run ``benchmarks/kclpy_drain_app.py`` (amazon-kclpy
3.2.0) under their own application name (their own lease table) on one properties file
(:func:`benchmarks.bench_kcl_daemon.properties`): ``retrievalMode = POLLING``,
``idleTimeBetweenReadsInMillis = 1000`` (the KCL's default; ``--idle-ms``), ``maxRecords``
left at its default, ``metricsLevel = NONE``, from TRIM_HORIZON of a stream no record is
ever put on. The two pollers (``boto3``, ``reader``) read every shard once per the same
idle time on 8 threads, without leases or children: one process each, its positive
signal of steady state a file it writes once every shard has its first iterator.

Per daemon: started; the positive signal of steady state is every shard's child
initialized (the application opens one file per shard in ``initialize``); then
``--settle`` seconds (the JVM's JIT, the last leases' first reads), then a window of
``--window`` seconds in which are measured, from ``/proc`` (user + system time of each
process):

- the daemon's process alone (the JVM, or our Python daemon), and its whole process group
  (the daemon and its kclpy children): the children idle on both, so both figures are
  given;
- the GetRecords calls the benchmark server answered in the window (this daemon's only:
  the daemons run one after the other);
- CPU ms per GetRecords (per poll of an idle shard), CPU s per 1,000 idle shard-reads,
  and the daemon's share of a core; ours / Java on each;
- apart: the benchmark server's, nghttpx's and moto's CPU in the window;
- the children alive at the end: a lease lost in the window ends its child (that daemon
  then polls fewer shards, and the run gives no verdict).

moto renews leases slowly: on 2 shared cores the Java daemon lost leases at 256 shards
with the KCL's ``failoverTimeMillis`` of 10 s (a renewal every 3.3 s a lease), and both
did at 1,024; ``--failover-ms`` sets it for both (renewals every third of it).
``--profile`` samples our daemon with py-spy (the thread holding the GIL) in the window.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import os
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

from benchmarks import results
from benchmarks.bench_kcl_daemon import daemon_env, properties, start_daemon

_TICKS = os.sysconf("SC_CLK_TCK")
#: How long a daemon may take to initialize every shard's child.
INIT_TIMEOUT_S = 900.0


def processes() -> dict:
    """pid -> (parent pid, process group, own user + system CPU seconds), from /proc."""
    table = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        table[int(entry)] = (
            int(fields[1]),
            int(fields[2]),
            (int(fields[11]) + int(fields[12])) / _TICKS,
        )
    return table


def group_cpu_s(pgid: int) -> dict:
    """pid -> CPU seconds of each process in process group ``pgid``."""
    return {pid: cpu for pid, (_, group, cpu) in processes().items() if group == pgid}


def tree_cpu_s(pid: int) -> float:
    """CPU seconds of ``pid`` and its live descendants (nghttpx's worker is its child)."""
    table = processes()
    total, frontier = 0.0, {pid}
    while frontier:
        total += sum(table[p][2] for p in frontier if p in table)
        frontier = {child for child, (parent, _, _) in table.items() if parent in frontier}
    return total


def start_profile(pid: int, seconds: float, out_dir: Path) -> subprocess.Popen:
    """py-spy sampling our daemon's threads (without pausing them) for ``seconds``."""
    return subprocess.Popen(
        [
            "py-spy",
            "record",
            "--pid",
            str(pid),
            "--duration",
            str(int(seconds)),
            "--rate",
            "50",
            "--nonblocking",
            "--gil",  # the thread holding the GIL: where the CPU goes
            "--format",
            "raw",
            "--output",
            str(out_dir / "ours.pyspy.txt"),
        ],
        stdout=subprocess.DEVNULL,
        stderr=open(out_dir / "py-spy.log", "wb"),
    )


def print_profile(spy: subprocess.Popen, out_dir: Path, top: int = 15) -> None:
    """Where our daemon's CPU goes, from py-spy's collapsed stacks of the thread holding
    the GIL: the functions most often on top, and those most often on the stack."""
    try:
        spy.wait(120)
    except subprocess.TimeoutExpired:
        spy.kill()
        spy.wait(10)
    path = out_dir / "ours.pyspy.txt"
    if not path.exists():
        print("  (py-spy wrote no profile)")
        return
    own: collections.Counter = collections.Counter()
    under: collections.Counter = collections.Counter()
    total = 0
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        frames = stack.split(";")
        n = int(count)
        total += n
        own[frames[-1]] += n
        for frame in set(frames):
            under[frame.split(" (")[0]] += n
    print(f"\n  py-spy, our daemon's active samples in the window: {total:,}")
    print("  share  own time in")
    for frame, n in own.most_common(top):
        print(f"  {100 * n / total:4.1f}%  {frame}")
    print("  share  under (inclusive)")
    for frame, n in under.most_common(top):
        print(f"  {100 * n / total:4.1f}%  {frame}")


def initialized(out_dir: Path) -> int:
    """Shards whose child ran ``initialize`` (each opens ``<shard>.<pid>.txt``)."""
    return len({path.name.split(".")[0] for path in out_dir.glob("shardId-*.txt")})


def await_initialized(process, out_dir: Path, shards: int, kind: str, log_path: Path) -> float:
    """Seconds until every shard's child is initialized; raises if the daemon exits or
    takes longer than :data:`INIT_TIMEOUT_S`."""
    started = time.monotonic()
    last_print = started
    while True:
        done = initialized(out_dir)
        if done >= shards:
            return time.monotonic() - started
        if process.poll() is not None:
            raise RuntimeError(f"the {kind} daemon exited with {process.returncode}: {log_path}")
        now = time.monotonic()
        if now - started > INIT_TIMEOUT_S:
            raise RuntimeError(
                f"the {kind} daemon initialized {done} of {shards} shards in "
                f"{INIT_TIMEOUT_S:.0f}s: {log_path}"
            )
        if now - last_print > 30:
            print(
                f"  {kind}: {done} of {shards} shards initialized after {now - started:.0f}s",
                flush=True,
            )
            last_print = now
        time.sleep(1.0)


#: The baselines without leases or children (benchmarks/idle_poller.py's clients).
POLLERS = ("boto3", "reader")


def start_poller(kind: str, args, stream: str, bench, env: dict, out_dir: Path, log_path: Path):
    """``benchmarks.idle_poller`` with ``kind``'s client, in its own process group."""
    import sys

    from tests.support.java_kcl import start_in_own_group

    argv = [sys.executable, "-m", "benchmarks.idle_poller", "--client", kind]
    argv += ["--stream", stream, "--endpoint", bench.endpoint_url, "--region", bench.region_name]
    argv += ["--ready", str(out_dir / "ready"), "--interval-s", str(args.idle_ms / 1000.0)]
    return start_in_own_group(argv, env, log_path)


def await_ready(process, path: Path, kind: str, log_path: Path) -> float:
    """Seconds until a poller wrote its ready file; raises if it exits or takes longer
    than :data:`INIT_TIMEOUT_S`."""
    started = time.monotonic()
    while not path.exists():
        if process.poll() is not None:
            raise RuntimeError(f"the {kind} poller exited with {process.returncode}: {log_path}")
        if time.monotonic() - started > INIT_TIMEOUT_S:
            raise RuntimeError(f"the {kind} poller was not ready in {INIT_TIMEOUT_S:.0f}s")
        time.sleep(0.2)
    return time.monotonic() - started


def measure(
    kind: str, args, servers: dict, props: Path, env: dict, jars: Path, out_dir: Path
) -> dict:
    """One daemon's (or poller's) figures over the window (see the module)."""
    from tests.support.java_kcl import stop_process_group

    log_path = out_dir / f"{kind}.log"
    if kind in POLLERS:
        process = start_poller(
            kind, args, servers["stream"], servers["bench"], env, out_dir, log_path
        )
    else:
        process = start_daemon(kind, props, env, jars, log_path)
    try:
        if kind in POLLERS:
            init_s = await_ready(process, out_dir / "ready", kind, log_path)
        else:
            init_s = await_initialized(process, out_dir, args.shards, kind, log_path)
        print(
            f"  {kind}: all {args.shards} shards initialized after {init_s:.0f}s; "
            f"settling {args.settle:.0f}s",
            flush=True,
        )
        time.sleep(args.settle)
        bench = servers["bench"]
        before = group_cpu_s(process.pid)
        server_before = {name: tree_cpu_s(pid) for name, pid in servers["pids"].items()}
        calls_before = bench.calls().get("GetRecords", 0)
        started = time.monotonic()
        spy = (
            start_profile(process.pid, args.window, out_dir)
            if args.profile and kind == "ours"
            else None
        )
        time.sleep(args.window)
        after = group_cpu_s(process.pid)
        server_after = {name: tree_cpu_s(pid) for name, pid in servers["pids"].items()}
        calls = bench.calls().get("GetRecords", 0) - calls_before
        window = time.monotonic() - started
        if process.poll() is not None:
            raise RuntimeError(f"the {kind} daemon exited in the window: {log_path}")
        # A lease lost in the window ends its child: every shard's child must be alive.
        children = None if kind in POLLERS else len(after) - 1
        if spy is not None:
            print_profile(spy, out_dir)
    finally:
        stop_process_group(process)
    daemon_cpu = after.get(process.pid, 0.0) - before.get(process.pid, 0.0)
    group_cpu = sum(cpu - before.get(pid, 0.0) for pid, cpu in after.items())
    return {
        "init_s": init_s,
        "window_s": window,
        "polls": calls,
        "daemon_cpu_s": daemon_cpu,
        "group_cpu_s": group_cpu,
        "children_at_end": children,
        "servers_cpu_s": {n: server_after[n] - server_before[n] for n in server_before},
    }


def per_poll(figures: dict, key: str) -> float:
    """CPU ms per GetRecords call."""
    return 1000.0 * figures[key] / figures["polls"] if figures["polls"] else float("nan")


def report(results_by_kind: dict, args) -> None:
    failover = f"failoverTimeMillis {args.failover_ms or 10_000}"
    print(
        f"\n{args.shards} idle shards, idleTimeBetweenReadsInMillis {args.idle_ms}, {failover}; "
        "window "
        f"{args.window:.0f}s after every child initialized and {args.settle:.0f}s more"
    )
    print(
        "| daemon | all shards initialized (s) | GetRecords in window | polls/s "
        "| daemon CPU (s) | core share | CPU ms/poll = s per 1,000 shard-reads (daemon) "
        "| CPU ms/poll (daemon + children) | children alive at the end |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for kind, f in results_by_kind.items():
        label = f"{kind} (poller)" if kind in POLLERS else kind
        children = "-" if f["children_at_end"] is None else f["children_at_end"]
        print(
            f"| {label} | {f['init_s']:.0f} | {f['polls']:,} | {f['polls'] / f['window_s']:,.0f} "
            f"| {f['daemon_cpu_s']:.2f} | {f['daemon_cpu_s'] / f['window_s']:.2f} "
            f"| {per_poll(f, 'daemon_cpu_s'):.3f} | {per_poll(f, 'group_cpu_s'):.3f} "
            f"| {children} |"
        )
    print("\nServers' CPU in each daemon's window, apart (ms per GetRecords):")
    for kind, f in results_by_kind.items():
        parts = ", ".join(
            f"{name} {cpu:.2f}s ({1000 * cpu / f['polls']:.3f})" if f["polls"] else name
            for name, cpu in f["servers_cpu_s"].items()
        )
        print(f"  {kind}: {parts}")
    if "java" in results_by_kind and "ours" in results_by_kind:
        java, ours = results_by_kind["java"], results_by_kind["ours"]
        ratio = per_poll(ours, "daemon_cpu_s") / per_poll(java, "daemon_cpu_s")
        group_ratio = per_poll(ours, "group_cpu_s") / per_poll(java, "group_cpu_s")
        share = (ours["daemon_cpu_s"] / ours["window_s"]) / (
            java["daemon_cpu_s"] / java["window_s"]
        )
        churned = [
            k
            for k, f in results_by_kind.items()
            if f["children_at_end"] is not None and f["children_at_end"] < args.shards
        ]
        if churned:  # a lost lease ends its child: that daemon did not poll every shard
            verdict = f"no verdict: leases lost in the window ({', '.join(churned)})"
        else:
            verdict = "met" if ratio <= 0.5 and share <= 0.5 else "NOT met"
        print(
            f"\nours / Java, CPU per poll: {ratio:.2f} (daemon), {group_ratio:.2f} (daemon + "
            f"children); CPU per second of the window: {share:.2f}. Goal <= 0.5: {verdict}"
        )
    if "boto3" in results_by_kind:
        baseline = per_poll(results_by_kind["boto3"], "daemon_cpu_s")
        print("\nCPU per read against the bare boto3 loop's, the same shards in the same run:")
        for kind, f in results_by_kind.items():
            ms = per_poll(f, "daemon_cpu_s")
            print(f"  {kind:7} {ms:.3f} ms, {ms / baseline:.2f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shards", type=int, default=1024)
    parser.add_argument("--window", type=float, default=40.0, help="seconds measured")
    parser.add_argument(
        "--settle",
        type=float,
        default=15.0,
        help="seconds after every child initialized, before the window",
    )
    parser.add_argument(
        "--daemons",
        default="java,ours,boto3,reader",
        help="which to run, in order: java, ours (the daemons), boto3, reader (the pollers)",
    )
    parser.add_argument(
        "--idle-ms",
        type=int,
        default=1000,
        help="idleTimeBetweenReadsInMillis for all (the pollers' interval)",
    )
    parser.add_argument(
        "--keep", type=Path, default=None, help="a folder for the logs, kept (default: temporary)"
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="py-spy our daemon in the window (needs py-spy on PATH)",
    )
    parser.add_argument(
        "--failover-ms",
        type=int,
        default=None,
        help="failoverTimeMillis for both (default: the KCL's 10000)",
    )
    args = parser.parse_args()

    from benchmarks.kinesis_server import BenchKinesis
    from kinesis_dstream.local import LocalAWS
    from tests.support.java_kcl import Nghttpx, kcl_jars, skip_unless_tools
    from tests.support.kclpy import kclpy_sdist

    skip_unless_tools()
    jars = kcl_jars() if "java" in args.daemons else Path()
    sdist = kclpy_sdist()
    print(
        f"Load average at start: {' '.join(f'{v:.2f}' for v in os.getloadavg())} on "
        f"{os.cpu_count()} cores",
        flush=True,
    )
    by_kind: dict = {}
    with (
        BenchKinesis() as bench,
        LocalAWS() as moto,
        (
            contextlib.nullcontext(str(args.keep))
            if args.keep
            else tempfile.TemporaryDirectory(prefix="bench-kcl-idle-")
        ) as tmp,
    ):
        work = Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        proxy = Nghttpx(bench.port, work)
        try:
            stream = f"idle-{uuid.uuid4().hex[:8]}"
            bench.client("kinesis").create_stream(StreamName=stream, ShardCount=args.shards)
            servers = {
                "stream": stream,
                "bench": bench,
                "pids": {"benchmark server": bench.pid, "nghttpx": proxy.pid, "moto": moto.pid},
            }
            for kind in args.daemons.split(","):
                out = work / kind
                out.mkdir()
                props = properties(
                    out / "app.properties",
                    stream,
                    f"{stream}-{kind}",
                    moto,
                    # Java's client speaks h2c: through nghttpx; ours HTTP/1.1, directly.
                    proxy.endpoint_url if kind == "java" else bench.endpoint_url,
                    idleTimeBetweenReadsInMillis=str(args.idle_ms),
                    **({"failoverTimeMillis": str(args.failover_ms)} if args.failover_ms else {}),
                )
                by_kind[kind] = measure(
                    kind, args, servers, props, daemon_env(moto, sdist, out), jars, out
                )
                f = by_kind[kind]
                print(
                    f"  {kind}: {f['polls']:,} GetRecords in {f['window_s']:.0f}s, daemon "
                    f"{f['daemon_cpu_s']:.2f}s CPU, with children {f['group_cpu_s']:.2f}s; "
                    f"{f['children_at_end']} children alive at the end",
                    flush=True,
                )
        finally:
            proxy.stop()
    report(by_kind, args)
    print(f"\nLoad average at end: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    results.run(main, "kcl-idle", "kcl daemons on idle shards: CPU per poll")
