"""The Kinesis sink on local Spark and moto's server, read back with the source."""

from collections import Counter

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.streaming import StreamingContext

from kinesis_dstream import InitialPositionInStream, KinesisUtils
from kinesis_dstream.demo.readback import read_all_records
from kinesis_dstream.kpl import MAGIC
from kinesis_dstream.retrieval.streams import ensure_stream

from ..support.streaming import Collected, running
from .test_sql_spark import available_now, source

pytestmark = pytest.mark.spark


def rows_dir(tmp_path, n, prefix="row"):
    directory = tmp_path / "input"
    directory.mkdir()
    table = pa.table(
        {
            "data": [f"{prefix}-{i}" for i in range(n)],
            "partitionKey": [f"key-{i % 97}" for i in range(n)],
            "extra": list(range(n)),
        }
    )
    pq.write_table(table, directory / "part-0.parquet")
    return directory, Counter(zip(table["data"].to_pylist(), table["partitionKey"].to_pylist()))


def write_stream(session, local_aws, stream, directory, tmp_path, **options):
    df = session.readStream.schema("data string, partitionKey string, extra long").parquet(
        str(directory)
    )
    writer = df.writeStream.format("kinesis").options(
        streamName=stream, endpointUrl=local_aws.endpoint_url, **options
    )
    return (
        writer.option("checkpointLocation", str(tmp_path / "sink-cp"))
        .trigger(availableNow=True)
        .start()
    )


def read_back(session, local_aws, stream, tmp_path, name):
    _, got = available_now(session, source(session, local_aws, stream, tmp_path), tmp_path, name)
    return got


def test_ten_thousand_rows_written_by_write_stream_read_back_by_the_source(
    session,
    local_aws,
    kinesis,
    unique_name,
    tmp_path,
):
    ensure_stream(kinesis, unique_name, 4)
    directory, sent = rows_dir(tmp_path, 10_000)
    query = write_stream(session, local_aws, unique_name, directory, tmp_path)
    with running(query):
        assert query.awaitTermination(180)
        assert query.exception() is None, query.exception()
    got = read_back(session, local_aws, unique_name, tmp_path, "sink_back")
    assert Counter((r.data.decode(), r.partitionKey) for r in got) == sent


def test_aggregated_writes_are_kpl_aggregates_that_both_readers_de_aggregate(
    session,
    spark,
    local_aws,
    kinesis,
    unique_name,
    tmp_path,
):
    ensure_stream(kinesis, unique_name, 2)
    directory, sent = rows_dir(tmp_path, 3000, prefix="agg")
    query = write_stream(
        session, local_aws, unique_name, directory, tmp_path, aggregationEnabled="true"
    )
    with running(query):
        assert query.awaitTermination(180)
        assert query.exception() is None, query.exception()
    raw = read_all_records(kinesis, unique_name)
    assert raw and all(r["Data"].startswith(MAGIC) for r in raw)
    assert len(raw) < 3000 / 10  # many user records per Kinesis record
    got = read_back(session, local_aws, unique_name, tmp_path, "agg_back")
    assert Counter((r.data.decode(), r.partitionKey) for r in got) == sent
    # and the DStream API de-aggregates the same records
    ssc = StreamingContext(spark, 0.5)
    try:
        lines = KinesisUtils.createStream(
            ssc,
            unique_name,
            unique_name,
            local_aws.endpoint_url,
            local_aws.region_name,
            InitialPositionInStream.TRIM_HORIZON,
            1,
            dynamoDBEndpointUrl=local_aws.endpoint_url,
            cloudWatchEndpointUrl=local_aws.endpoint_url,
        )
        collected = Collected(lines)
        ssc.start()
        items = collected.wait_for(lambda items: len(items) >= 3000, 120, "3,000 records")
    finally:
        ssc.stop(stopSparkContext=False, stopGraceFully=False)
    assert Counter(items) == Counter(data for data, _ in sent.elements())


def test_a_sink_whose_stream_does_not_exist_fails_naming_stream_and_endpoint(
    session,
    local_aws,
    unique_name,
    tmp_path,
):
    directory, _ = rows_dir(tmp_path, 10)
    with pytest.raises(Exception) as info:
        query = write_stream(session, local_aws, unique_name, directory, tmp_path)
        with running(query):
            query.awaitTermination(60)
            raise AssertionError(f"no failure: {query.exception()}")
    assert unique_name in str(info.value) and local_aws.endpoint_url in str(info.value)


def test_missing_sink_columns_fail_before_the_query_starts(
    session,
    local_aws,
    kinesis,
    unique_name,
    tmp_path,
):
    ensure_stream(kinesis, unique_name, 1)
    (tmp_path / "in").mkdir()
    pq.write_table(pa.table({"payload": ["x"]}), tmp_path / "in" / "part-0.parquet")
    df = session.readStream.schema("payload string").parquet(str(tmp_path / "in"))
    with pytest.raises(Exception) as info:
        query = (
            df.writeStream.format("kinesis")
            .options(streamName=unique_name, endpointUrl=local_aws.endpoint_url)
            .option("checkpointLocation", str(tmp_path / "cp"))
            .start()
        )
        with running(query):  # the writer is built at the first trigger, before any write
            query.awaitTermination(60)
            raise AssertionError(f"no failure: {query.exception()}")
    assert "data" in str(info.value) and "partitionKey" in str(info.value)
    assert "needs column" in str(info.value)
    # the batch writer checks the same
    with pytest.raises(Exception, match="needs column"):
        session.createDataFrame([("x",)], "payload string").write.format("kinesis").options(
            streamName=unique_name, endpointUrl=local_aws.endpoint_url
        ).mode("append").save()
