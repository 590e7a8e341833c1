"""Shared fixtures: one embedded local AWS per test session, unique names per test."""

from __future__ import annotations

import os
import sys
import uuid

import pytest

from kinesis_dstream.local import LocalAWS
from kinesis_dstream.retrieval.streams import ensure_stream

from .ministack_server import MinistackServer
from .npm_servers import NodeServer


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


@pytest.fixture(autouse=True)
def no_streaming_context_outlives_its_test():
    """Stop any StreamingContext a test left running, even a failing test's: otherwise
    every later Spark test fails with "Only one StreamingContext may be started"."""
    yield
    if "pyspark.streaming" not in sys.modules:
        return
    from pyspark.streaming import StreamingContext

    active = StreamingContext.getActive()
    if active is not None:
        active.stop(stopSparkContext=False, stopGraceFully=False)


@pytest.fixture(scope="session")
def spark(local_aws):
    """One local[2] SparkContext for the session; its Python workers see the local AWS.

    Credentials and region go into the environment before the JVM starts (executors
    inherit it); endpoints are passed explicitly by each test.
    """
    saved = dict(os.environ)
    os.environ.update({k: v for k, v in local_aws.env().items() if k != "AWS_ENDPOINT_URL"})
    os.environ["PYSPARK_PYTHON"] = sys.executable
    from pyspark import SparkConf, SparkContext

    conf = (
        SparkConf()
        .setMaster("local[2]")
        .setAppName("kinesis-dstream-tests")
        .set("spark.ui.enabled", "false")
        .set("spark.ui.showConsoleProgress", "false")
    )
    sc = SparkContext(conf=conf)
    sc.setLogLevel("ERROR")
    yield sc
    sc.stop()
    os.environ.clear()
    os.environ.update(saved)


@pytest.fixture(scope="module")
def session(spark):
    """A SparkSession on the session's SparkContext, both Kinesis data sources registered."""
    from pyspark.sql import SparkSession

    from kinesis_dstream.sql import AwsKinesisDataSource, KinesisDataSource

    ss = SparkSession(spark)
    ss.dataSource.register(KinesisDataSource)
    ss.dataSource.register(AwsKinesisDataSource)
    return ss
