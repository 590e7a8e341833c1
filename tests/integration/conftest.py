"""The integration tier: local servers on 127.0.0.1 (moto's server, kinesalite, dynalite)
and the command line in subprocesses."""

from __future__ import annotations

import socket

import pytest

from ..support.tiers import mark_tier


def pytest_collection_modifyitems(items):
    mark_tier(items, __file__, "integration")


@pytest.fixture
def dead_endpoint():
    """A URL on 127.0.0.1 where nothing listens: connections are refused at once."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


@pytest.fixture
def no_credentials(monkeypatch, tmp_path):
    """An environment where the default credential chain finds nothing."""
    for name in (
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_PROFILE",
        "AWS_DEFAULT_PROFILE",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
        "AWS_ROLE_ARN",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    # clients an earlier test built with credentials are kept per process and spec: a
    # test of the chain finding nothing must not be handed one of them
    from kinesis_dstream import aws

    monkeypatch.setattr(aws, "_CLIENTS", {})
