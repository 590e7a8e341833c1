"""Fixtures shared by every tier: one embedded local AWS per test session, unique names per
test, the npm servers (kinesalite alone and behind the enhanced fan-out front) and
ministack (each started once, when a test first asks for it).

Each tier's own fixtures live in its conftest: Spark's in ``spark/``, kclpy's and the
ministack client's in ``interop/``."""

from __future__ import annotations

import uuid

import pytest

from kinesis_dstream.local import LocalAWS
from kinesis_dstream.retrieval.streams import ensure_stream

from .support import fuzzing
from .support.ministack_server import MinistackServer
from .support.npm_servers import EfoKinesalite, NodeServer


def pytest_report_header(config):
    return fuzzing.header(config)


def pytest_collection_modifyitems(config, items):
    fuzzing.seed_fuzz_targets(config, items)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.failed and fuzzing.is_fuzz_item(item):
        report.sections.append(fuzzing.replay_section(item))


@pytest.fixture(autouse=True)
def fresh_warnings_once(monkeypatch):
    """Each test starts as a new process for the library's warn-once state (an ARN's odd
    account, createStream's older layout): what an earlier test warned is not this one's."""
    import threading

    from kinesis_dstream import arns
    from kinesis_dstream.dstream import legacy_layout

    monkeypatch.setattr(arns, "_warned", set())
    monkeypatch.setattr(legacy_layout, "_warned", threading.Event())


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
def registry_name(local_aws, unique_name):
    """A Schema Registry registry of this test's own on the session's moto, deleted when
    the test ends: moto allows 10 registries per account and the session shares one."""
    glue = local_aws.client("glue")
    glue.create_registry(RegistryName=unique_name)
    yield unique_name
    glue.delete_registry(RegistryId={"RegistryName": unique_name})


@pytest.fixture
def stream(kinesis, unique_name):
    """A fresh one-shard stream; tests needing more shards call ensure_stream themselves."""
    ensure_stream(kinesis, unique_name, 1)
    return unique_name


@pytest.fixture(scope="session")
def kinesalite():
    """kinesalite on 127.0.0.1: correct split and merge, 56-digit sequence numbers."""
    with NodeServer("kinesalite") as server:
        yield server


@pytest.fixture(scope="session")
def dynalite():
    """dynalite on 127.0.0.1: a second, independent DynamoDB."""
    with NodeServer("dynalite") as server:
        yield server


@pytest.fixture(scope="session")
def efo_kinesalite():
    """kinesalite behind a front that speaks enhanced fan-out (SubscribeToShard, consumers)
    and carries out UpdateShardCount as splits and merges; Kinesis's timings (5-minute
    subscriptions, the 5 s rule). Tests that need other timings start their own
    ``EfoKinesalite(subscription_s=..., resubscribe_interval_s=...)``."""
    with EfoKinesalite() as server:
        yield server


@pytest.fixture
def efo(efo_kinesalite):
    """A Kinesis client of the session's EFO server, botocore's parsers throughout (no fast
    GetRecords decoder), a 20 s read timeout (the server sends an event every 5 s)."""
    return efo_kinesalite.client("kinesis", fast_get_records=False, read_timeout_s=20)


@pytest.fixture(scope="session")
def ministack():
    """ministack on 127.0.0.1, from a virtualenv of its own: speaks SubscribeToShard."""
    with MinistackServer() as server:
        yield server


@pytest.fixture(params=["moto", "dynalite"])
def dynamodb_server(request):
    """moto's server, then dynalite: the lease code must pass on both DynamoDBs."""
    return request.getfixturevalue("local_aws" if request.param == "moto" else "dynalite")


@pytest.fixture
def dynamodb(dynamodb_server):
    return dynamodb_server.client("dynamodb")
