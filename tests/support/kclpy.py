"""The amazon-kclpy sdist, fetched once per machine with ``pip download`` (its install
needs Maven; its download does not) into ``~/.cache/kinesis_dstream/``: the interop
tests' ``kclpy`` fixture and the kcl daemon benchmark both take it from here."""

from __future__ import annotations

import glob
import subprocess
import sys
import tarfile
from pathlib import Path

from .java_kcl import CACHE

KCLPY_VERSION = "3.2.0"


def kclpy_sdist() -> Path:
    """The extracted sdist (``amazon_kclpy/`` and ``samples/`` inside); a download that
    fails raises :class:`RuntimeError` with pip's words."""
    target = CACHE / f"amazon_kclpy-{KCLPY_VERSION}"
    if (target / "amazon_kclpy" / "kcl.py").exists():
        return target
    CACHE.mkdir(parents=True, exist_ok=True)
    download = subprocess.run(
        [
            sys.executable, "-m", "pip", "download", "--no-binary", ":all:", "--no-deps",
            f"amazon-kclpy=={KCLPY_VERSION}", "-d", str(CACHE),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    archives = glob.glob(str(CACHE / f"amazon_kclpy-{KCLPY_VERSION}.tar.gz"))
    if download.returncode != 0 or not archives:
        raise RuntimeError(
            f"could not download the amazon-kclpy {KCLPY_VERSION} sdist from PyPI into "
            f"{CACHE}: pip said:\n{download.stderr[-2000:]}"
        )
    with tarfile.open(archives[0]) as archive:
        archive.extractall(CACHE, filter="data")
    return target
