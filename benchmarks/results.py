"""Dated result pages: every benchmark's ``--markdown`` option, written in one place.

A benchmark's ``__main__`` block runs its ``main`` through :func:`run`::

    if __name__ == "__main__":
        results.run(main, "aggregation", "KPL de-aggregation and aggregation")

Without ``--markdown`` nothing changes. With ``--markdown`` (the documentation's results
folder, ``docs/benchmarks/results/``) or ``--markdown PATH`` (a file or a folder), what
the benchmark prints is also written to ``YYYY-MM-DD-<name>.md``, headed by the machine
(cores, processor, load), the versions that matter and the command: a later run on the
same day is appended to that day's page, never written over it. The option is taken out
of ``sys.argv`` before ``main`` parses its own arguments.
"""

from __future__ import annotations

import datetime as dt
import io
import os
import platform
import shlex
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Callable, Optional

RESULTS_DIR = Path(__file__).resolve().parent.parent / "docs" / "benchmarks" / "results"
VERSIONED = ("kinesis_dstream", "pyspark", "boto3", "botocore", "moto", "protobuf", "msgspec",
             "aws-kinesis-agg", "pyarrow", "fastavro", "regex", "h11", "httptools", "cramjam",
             "zstandard")


def take_markdown_option(argv: list) -> tuple:
    """``(argv without --markdown, the page's folder or file or None)``."""
    rest: list = []
    target: Optional[Path] = None
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--markdown":
            following = argv[i + 1] if i + 1 < len(argv) else None
            if following is not None and not following.startswith("-"):
                target = Path(following)
                i += 2
                continue
            target = RESULTS_DIR
        elif arg.startswith("--markdown="):
            target = Path(arg.split("=", 1)[1])
        else:
            rest.append(arg)
        i += 1
    return rest, target


def page_path(target: Path, name: str, today: dt.date) -> Path:
    """A folder gets the dated page inside it; a ``.md`` path is taken as it is."""
    if target.suffix == ".md":
        return target
    return target / f"{today.isoformat()}-{name}.md"


def _java_version() -> str:
    try:
        done = subprocess.run(["java", "-version"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return "not found"
    lines = (done.stderr or done.stdout).strip().splitlines()
    return lines[0] if lines else "not found"


def _processor() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_lines() -> list:
    """What the figures were measured on, one Markdown list item a fact."""
    versions = []
    for package in VERSIONED:
        try:
            versions.append(f"{package} {metadata.version(package)}")
        except metadata.PackageNotFoundError:
            continue
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "?"
    return [
        f"- machine: {platform.system()} {platform.machine()}, {os.cpu_count()} cores"
        f" ({_processor()}), load average at the start {load}",
        f"- Python {platform.python_version()}; Java: {_java_version()}",
        f"- versions: {', '.join(versions)}",
    ]


def render(title: str, command: str, output: str, started: dt.datetime, seconds: float,
           exit_status: object, new_page: bool) -> str:
    """One run's section (with the page's heading when it starts the page)."""
    head = [f"# {started.date().isoformat()}: {title}", ""] if new_page else [""]
    body = [
        f"## Run at {started.strftime('%H:%M')} UTC",
        "",
        *machine_lines(),
        f"- command: `{command}`",
        f"- took {seconds:.0f} s; exit status {exit_status}",
        "",
        "```text",
        output.rstrip("\n"),
        "```",
        "",
    ]
    return "\n".join(head + body)


class _Tee(io.TextIOBase):
    """Writes to the terminal and keeps a copy."""

    def __init__(self, terminal) -> None:
        self.terminal = terminal
        self.copy = io.StringIO()

    def write(self, text: str) -> int:
        self.terminal.write(text)
        return self.copy.write(text)

    def flush(self) -> None:
        self.terminal.flush()


def run(main: Callable[[], object], name: str, title: str) -> None:
    """Run a benchmark's ``main``; with ``--markdown``, keep what it printed in a dated page."""
    argv, target = take_markdown_option(sys.argv[1:])
    if target is None:
        result = main()
        sys.exit(result if isinstance(result, int) else 0)
    spec = getattr(sys.modules["__main__"], "__spec__", None)
    module = spec.name if spec is not None else f"benchmarks.bench_{name}"
    command = shlex.join(["python", "-m", module, *argv])
    sys.argv = [sys.argv[0], *argv]
    started = dt.datetime.now(dt.timezone.utc)
    tee = _Tee(sys.stdout)
    sys.stdout = tee
    exit_status: object = 0
    try:
        result = main()
        exit_status = result if isinstance(result, int) else 0
    except SystemExit as stop:
        exit_status = stop.code if stop.code is not None else 0
    except BaseException:
        exit_status = "an exception (traceback on stderr)"
        raise
    finally:
        sys.stdout = tee.terminal
        seconds = (dt.datetime.now(dt.timezone.utc) - started).total_seconds()
        path = page_path(target, name, started.date())
        path.parent.mkdir(parents=True, exist_ok=True)
        new_page = not path.exists() or not path.read_text().strip()
        with path.open("a") as page:
            page.write(render(title, command, tee.copy.getvalue(), started, seconds,
                              exit_status, new_page))
        print(f"results written to {path}", file=sys.stderr)
    sys.exit(exit_status if isinstance(exit_status, int) else 1)
