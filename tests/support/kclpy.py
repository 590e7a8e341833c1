"""The amazon-kclpy sdists, fetched once per machine with ``pip download`` (their install
needs Maven; their download does not) into ``~/.cache/kinesis_dstream/``: the interop
tests' ``kclpy`` fixture (3.x) and ``kclpy1`` fixture (1.4.4, the KCL 1.7.5 era's
client) and the kcl daemon benchmark all take them from here."""

from __future__ import annotations

import glob
import subprocess
import sys
import tarfile
from pathlib import Path

from .java_kcl import CACHE

KCLPY_VERSION = "3.2.0"
#: The last amazon-kclpy of the KCL 1.7.x protocol (no shutdownRequested).
KCLPY1_VERSION = "1.4.4"


def kclpy_sdist(version: str = KCLPY_VERSION) -> Path:
    """The extracted sdist of ``version`` (``amazon_kclpy/`` and ``samples/`` inside); a
    download that fails raises :class:`RuntimeError` with pip's words."""
    target = CACHE / f"amazon_kclpy-{version}"
    if (target / "amazon_kclpy" / "kcl.py").exists():
        return target
    CACHE.mkdir(parents=True, exist_ok=True)
    download = subprocess.run(
        [
            sys.executable, "-m", "pip", "download", "--no-binary", ":all:", "--no-deps",
            f"amazon-kclpy=={version}", "-d", str(CACHE),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    archives = glob.glob(str(CACHE / f"amazon_kclpy-{version}.tar.gz"))
    if download.returncode != 0 or not archives:
        raise RuntimeError(
            f"could not download the amazon-kclpy {version} sdist from PyPI into "
            f"{CACHE}: pip said:\n{download.stderr[-2000:]}"
        )
    with tarfile.open(archives[0]) as archive:
        archive.extractall(CACHE, filter="data")
    return target
