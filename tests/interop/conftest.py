"""The interop tier: real peers. amazon-kclpy's sdist and sample, the Java KCL, Java's
Properties, aws-kinesis-agg, and ministack (SubscribeToShard, enhanced fan-out).

The amazon-kclpy sdist is fetched once per machine with ``pip download`` (its install
needs Maven; its download does not) into ``~/.cache/kinesis_dstream/``."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..support.kclpy import KCLPY1_VERSION, kclpy_sdist
from ..support.tiers import mark_tier


def pytest_collection_modifyitems(items):
    mark_tier(items, __file__, "interop")


@pytest.fixture
def mini(ministack):
    """A Kinesis client of the session's ministack."""
    return ministack.client("kinesis")


@pytest.fixture(scope="session")
def kclpy() -> Path:
    """The extracted amazon-kclpy sdist (``amazon_kclpy/`` and ``samples/`` inside)."""
    try:
        return kclpy_sdist()
    except RuntimeError as exc:
        pytest.fail(f"{exc} (needed for the multilang tests)")


@pytest.fixture(scope="session")
def kclpy1() -> Path:
    """The extracted amazon-kclpy 1.4.4 sdist (KCL 1.7.5's protocol), as :func:`kclpy`."""
    try:
        return kclpy_sdist(KCLPY1_VERSION)
    except RuntimeError as exc:
        pytest.fail(f"{exc} (needed for the kclpy 1.x tests)")


@pytest.fixture
def aws_env(local_aws, monkeypatch):
    for key, value in local_aws.env().items():
        if key != "AWS_ENDPOINT_URL":  # each client gets its endpoint from the properties
            monkeypatch.setenv(key, value)
    return local_aws
