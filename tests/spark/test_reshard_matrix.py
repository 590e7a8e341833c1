"""Resharding as streams really do it, under createStream and the Structured Streaming
source, polling and with enhanced fan-out (the kcl daemon's cases: tests/interop).

Each case puts records all through a split, a merge of two generations and
``UpdateShardCount`` doubling then halving the shards (kinesalite behind the test EFO
server, which carries UpdateShardCount out as Kinesis does: splits and merges, so the new
shards have parents), waits after each step until every open shard has delivered, and
checks with :mod:`benchmarks.reshard`: nothing missing, per-key order kept across
generations, no child record before its parents' last, and the reshard lag (printed).
One case per path stops in the middle of the resharding and starts again from its
checkpoints. The slowest cases are marked ``slow``; one of each kind runs by default.
"""

from __future__ import annotations

from typing import Any, Callable

import pytest
from pyspark.streaming import StreamingContext

from kinesis_dstream import InitialPositionInStream, KinesisUtils

from ..support.reshard_cases import Deliveries, run_case
from ..support.streaming import running

pytestmark = [pytest.mark.spark, pytest.mark.kinesalite]

_DELIVERIES: dict = {}  # key -> Deliveries: the output function holds only the key


def _deliver(key: int, rdd: Any) -> None:
    _DELIVERIES[key].add(rdd.collect())


# -- createStream ------------------------------------------------------------------------------


def create_stream(spark, server, dynamodb_url, stream, mode, deliveries):
    """A start function: createStream from TRIM_HORIZON on its own StreamingContext."""

    def start() -> Callable[[], None]:
        ssc = StreamingContext(spark, 0.5)
        dstream = KinesisUtils.createStream(
            ssc,
            f"app-{stream}",
            stream,
            server.endpoint_url,
            server.region_name,
            InitialPositionInStream.TRIM_HORIZON,
            1,
            messageHandler=lambda r: (r.data.decode(), r.shard_id),
            dynamoDBEndpointUrl=dynamodb_url,
            cloudWatchEndpointUrl=dynamodb_url,  # moto: never the real CloudWatch
            retrievalMode=mode,
        )
        key = id(deliveries)
        _DELIVERIES[key] = deliveries
        dstream.foreachRDD(lambda rdd: _deliver(key, rdd))
        ssc.start()

        def stop() -> None:
            ssc.stop(stopSparkContext=False, stopGraceFully=True)

        return stop

    return start


@pytest.mark.parametrize(
    "mode",
    # fan-out, 27 s: in CI's long scenarios; the kcl daemon's fan-out case and createStream's
    # polling case go through every reshard by default
    [pytest.param("FANOUT", marks=pytest.mark.slow), "POLLING"],
)
def test_create_stream_through_every_reshard(spark, efo_kinesalite, local_aws, unique_name, mode):
    got = Deliveries()
    url = local_aws.endpoint_url
    run_case(
        f"createStream, {mode.lower()}",
        efo_kinesalite,
        unique_name,
        got,
        create_stream(spark, efo_kinesalite, url, unique_name, mode, got),
    )


@pytest.mark.slow
def test_create_stream_stopped_mid_reshard_resumes_from_its_checkpoints(
    spark, efo_kinesalite, local_aws, unique_name
):
    got = Deliveries()
    url = local_aws.endpoint_url
    run_case(
        "createStream, polling, stopped during the merge",
        efo_kinesalite,
        unique_name,
        got,
        create_stream(spark, efo_kinesalite, url, unique_name, "POLLING", got),
        restart_around="merge",
    )


# -- the Structured Streaming source ------------------------------------------------------------


def source(session, server, stream, mode, tmp_path, deliveries):
    """A start function: readStream.format("kinesis") from TRIM_HORIZON, one checkpoint."""

    def start() -> Callable[[], None]:
        def each(batch_df, batch_id):
            rows = batch_df.selectExpr("cast(data as string) d", "shardId").collect()
            deliveries.add([(row.d, row.shardId) for row in rows])

        df = (
            session.readStream.format("kinesis")
            .options(
                streamName=stream,
                endpointUrl=server.endpoint_url,
                region=server.region_name,
                initialPosition="trim_horizon",
                consumerMode=mode,
                consumerName=f"c-{stream}",
                describeShardInterval="1s",
                metadataPath=str(tmp_path / "ends"),
            )
            .load()
        )
        query = (
            df.writeStream.foreachBatch(each)
            .option("checkpointLocation", str(tmp_path / "cp"))
            .trigger(processingTime="200 milliseconds")
            .start()
        )

        def stop() -> None:
            with running(query):
                pass
            error = query.exception()
            assert error is None, error

        return stop

    return start


@pytest.mark.parametrize("mode", ["polling", pytest.param("efo", marks=pytest.mark.slow)])
def test_the_source_through_every_reshard(session, efo_kinesalite, unique_name, tmp_path, mode):
    got = Deliveries()
    run_case(
        f"Structured Streaming, {'fan-out' if mode == 'efo' else 'polling'}",
        efo_kinesalite,
        unique_name,
        got,
        source(session, efo_kinesalite, unique_name, mode, tmp_path, got),
    )


@pytest.mark.slow  # 32 s; the source's polling case through every reshard stays by default
def test_the_source_stopped_mid_reshard_resumes_from_its_checkpoint(
    session, efo_kinesalite, unique_name, tmp_path
):
    got = Deliveries()
    run_case(
        "Structured Streaming, fan-out, stopped during the split",
        efo_kinesalite,
        unique_name,
        got,
        source(session, efo_kinesalite, unique_name, "efo", tmp_path, got),
        restart_around="split",
    )
