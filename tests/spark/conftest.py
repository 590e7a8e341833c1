"""The Spark tier: one local SparkContext per session, a SparkSession per module, a
StreamingContext per test; every test here is marked ``spark``."""

from __future__ import annotations

import os
import sys

import pytest

from ..support.tiers import mark_tier


def pytest_collection_modifyitems(items):
    mark_tier(items, __file__, "spark")


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


@pytest.fixture
def ssc(spark):
    """A StreamingContext of 0.5 s batches on the session's SparkContext, stopped after the test
    (the SparkContext stays)."""
    from pyspark.streaming import StreamingContext

    context = StreamingContext(spark, 0.5)
    yield context
    context.stop(stopSparkContext=False, stopGraceFully=False)
