"""The interop tier: real peers. amazon-kclpy's sdist and sample, the Java KCL, Java's
Properties, aws-kinesis-agg, and ministack (SubscribeToShard, enhanced fan-out).

The amazon-kclpy sdist is fetched once per machine with ``pip download`` (its install
needs Maven; its download does not) into ``~/.cache/kinesis_dstream/``."""

from __future__ import annotations

import glob
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from ..support.java_kcl import CACHE
from ..support.tiers import mark_tier

KCLPY_VERSION = "3.2.0"


def pytest_collection_modifyitems(items):
    mark_tier(items, __file__, "interop")


@pytest.fixture
def mini(ministack):
    """A Kinesis client of the session's ministack."""
    return ministack.client("kinesis")


@pytest.fixture(scope="session")
def kclpy() -> Path:
    """The extracted amazon-kclpy sdist (``amazon_kclpy/`` and ``samples/`` inside)."""
    target = CACHE / f"amazon_kclpy-{KCLPY_VERSION}"
    if (target / "amazon_kclpy" / "kcl.py").exists():
        return target
    CACHE.mkdir(parents=True, exist_ok=True)
    download = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-binary",
            ":all:",
            "--no-deps",
            f"amazon-kclpy=={KCLPY_VERSION}",
            "-d",
            str(CACHE),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    archives = glob.glob(str(CACHE / f"amazon_kclpy-{KCLPY_VERSION}.tar.gz"))
    if download.returncode != 0 or not archives:
        pytest.fail(
            f"could not download the amazon-kclpy {KCLPY_VERSION} sdist from PyPI into "
            f"{CACHE} (needed for the multilang tests): pip said:\n{download.stderr[-2000:]}"
        )
    with tarfile.open(archives[0]) as archive:
        archive.extractall(CACHE, filter="data")
    return target


@pytest.fixture
def aws_env(local_aws, monkeypatch):
    for key, value in local_aws.env().items():
        if key != "AWS_ENDPOINT_URL":  # each client gets its endpoint from the properties
            monkeypatch.setenv(key, value)
    return local_aws
