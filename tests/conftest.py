"""Shared fixtures: one embedded local AWS per test session, unique names per test."""

from __future__ import annotations

import uuid

import pytest

from kinesis_dstream.local import LocalAWS
from kinesis_dstream.streams import ensure_stream


@pytest.fixture(scope="session")
def local_aws():
    with LocalAWS() as aws:
        yield aws


@pytest.fixture
def kinesis(local_aws):
    return local_aws.client("kinesis")


@pytest.fixture
def unique_name(request):
    """A stream or app name unique to this test, readable in server state."""
    base = request.node.name.replace("[", "-").replace("]", "").replace("_", "-")[:40]
    return f"{base}-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def stream(kinesis, unique_name):
    """A fresh one-shard stream; tests needing more shards call ensure_stream themselves."""
    ensure_stream(kinesis, unique_name, 1)
    return unique_name
