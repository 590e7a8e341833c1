"""ministack (PyPI) as a local server that speaks enhanced fan-out (SubscribeToShard).

moto and kinesalite do not implement SubscribeToShard; ministack does, over HTTP/1.1
event streams that boto3 reads. It pins an exact botocore, so it never goes into the
project's environment: :func:`ministack_venv` builds a virtualenv of its own once, in a
cache folder keyed by the version, and :class:`MinistackServer` runs it from there on a
free port on 127.0.0.1. Same client API as :class:`~kinesis_dstream.local.LocalAWS`.
"""

from __future__ import annotations

import fcntl
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from typing import Any, Optional

from kinesis_dstream.local import LocalEndpoint

MINISTACK_VERSION = "1.5.33"
CACHE_DIR = os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "kinesis_dstream"
)
_BUILD_TIMEOUT_S = 300.0
_START_TIMEOUT_S = 60.0
_STOP_TIMEOUT_S = 10.0
#: Marks a venv whose install finished (a killed build leaves no marker and is rebuilt).
_DONE_MARKER = ".installed"


def ministack_venv(version: str = MINISTACK_VERSION, cache_dir: str = CACHE_DIR) -> str:
    """The ``ministack`` executable of a venv holding exactly ``version``; built once."""
    venv = os.path.join(cache_dir, f"ministack-venv-{version}")
    executable = os.path.join(venv, "bin", "ministack")
    os.makedirs(cache_dir, exist_ok=True)
    # One build at a time: another test session may be building the same venv.
    with open(os.path.join(cache_dir, f"ministack-venv-{version}.lock"), "w") as lock:
        _lock(lock, deadline=time.monotonic() + 2 * _BUILD_TIMEOUT_S)
        if not (os.path.exists(os.path.join(venv, _DONE_MARKER)) and os.path.exists(executable)):
            _build(venv, version)
    return executable


def _lock(lock: Any, deadline: float) -> None:
    while True:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise RuntimeError(
                    f"{lock.name} stayed locked: is a ministack build hung?"
                ) from None
            time.sleep(0.5)


def _build(venv: str, version: str) -> None:
    steps = (
        [sys.executable, "-m", "venv", "--clear", venv],
        [
            os.path.join(venv, "bin", "python"),
            "-m",
            "pip",
            "install",
            "-q",
            f"ministack=={version}",
        ],
    )
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True, timeout=_BUILD_TIMEOUT_S)
        if done.returncode != 0:
            raise RuntimeError(
                f"building the ministack {version} virtualenv in {venv} failed at "
                f"{' '.join(step[:3])}: {done.stderr.strip()[-2000:]}"
            )
    with open(os.path.join(venv, _DONE_MARKER), "w") as marker:
        marker.write(version)


#: Runs ministack with two changes. Subscriptions last ``argv[1]`` seconds (300 unless a
#: test asks for short ones, to see the server end them as Kinesis does after 5 minutes).
#: And sequence numbers without leading zeros. ministack makes
#: them a zero-padded 20-digit millisecond clock plus a 10-digit counter and compares them
#: as strings; our positions keep a sequence number as an integer (Kinesis's have no
#: leading zeros), so "000...123" came back as "123" and sorted after every record. With
#: the 13-digit clock unpadded, all numbers have 23 digits and string order is numeric
#: order. Patched in the server process: executors' clients are out of a botocore hook's
#: reach, and a proxy would have to re-encode event-stream frames (CRCs) to rewrite them.
_BOOT = """
import sys, time
import ministack.services.kinesis as kinesis

def _next_sequence_number():
    with kinesis._sequence_lock:
        kinesis._sequence_counter += 1
        return f"{int(time.time() * 1000)}{kinesis._sequence_counter:010d}"

kinesis._next_sequence_number = _next_sequence_number
kinesis.SUBSCRIPTION_SECONDS = float(sys.argv[1])  # Kinesis: 300, 5 minutes
from ministack.app import main
sys.argv = ["ministack"]  # main() parses the command line
sys.exit(main())
"""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class MinistackServer(LocalEndpoint):
    """ministack in a child process on 127.0.0.1; a context manager yielding itself."""

    label = f"ministack {MINISTACK_VERSION}"
    region_name = "us-east-1"
    access_key_id = "testing"
    secret_access_key = "testing"

    def __init__(
        self, executable: Optional[str] = None, subscription_seconds: float = 300.0
    ) -> None:
        self._executable = executable
        #: How long a SubscribeToShard subscription lasts before the server ends it.
        self.subscription_seconds = subscription_seconds
        self._proc: Optional[subprocess.Popen[bytes]] = None
        self._log: Any = None
        self.port: Optional[int] = None

    def start(self) -> MinistackServer:
        executable = self._executable or ministack_venv()
        port = _free_port()
        env = {
            **os.environ,
            "BIND_HOST": "127.0.0.1",
            "GATEWAY_PORT": str(port),
            "MINISTACK_REGION": self.region_name,
        }
        # Its output goes to a file: a full pipe nobody reads would block the server.
        path = os.path.join(CACHE_DIR, f"ministack-{port}.log")
        self._log = open(path, "wb")  # noqa: SIM115 - open for the server's lifetime
        python = os.path.join(os.path.dirname(executable), "python")
        self._proc = subprocess.Popen(
            [python, "-c", _BOOT, str(self.subscription_seconds)],
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        self.port = port
        try:
            self._await_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def _await_ready(self) -> None:
        assert self._proc is not None
        deadline = time.monotonic() + _START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise RuntimeError(
                    f"{self.label} exited with {self._proc.returncode} before serving; "
                    f"its log is {self._log.name}"
                )
            try:
                with urllib.request.urlopen(self.endpoint_url + "/", timeout=2.0):
                    return
            except urllib.error.HTTPError:
                return  # it answered
            except OSError:
                time.sleep(0.1)
        raise RuntimeError(f"{self.label} did not answer within {_START_TIMEOUT_S:.0f}s")

    def stop(self) -> None:
        """Terminate, wait (bounded), kill; safe to call twice."""
        proc, self._proc = self._proc, None
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(timeout=_STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=_STOP_TIMEOUT_S)
        if self._log is not None:
            self._log.close()
            os.unlink(self._log.name)
            self._log = None
        self.port = None

    def __enter__(self) -> MinistackServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
