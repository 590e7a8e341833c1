"""kinesis-asl scripts with zero lines changed: PySpark 2.x-3.3's positional createStream
call on the session's StreamingContext."""

import pytest
from pyspark.storagelevel import StorageLevel

from kinesis_dstream import InitialPositionInStream, KinesisUtils
from kinesis_dstream.retrieval.streams import ensure_stream

from ..support.records import put_records
from ..support.streaming import Collected

pytestmark = pytest.mark.spark


def test_a_pyspark_2_x_positional_call_reads_every_record_with_its_keys_and_decoder(
    ssc, local_aws, kinesis, unique_name, caplog
):
    ensure_stream(kinesis, unique_name, 2)
    sent = list(put_records(kinesis, unique_name, 60, data="r{i}", key="pk-{i}"))
    aws = local_aws.env()

    def shouted(data):  # the script's own decoder (defined here: pickled by value)
        return data.decode("utf-8").upper()

    stream = KinesisUtils.createStream(
        ssc,
        unique_name,
        unique_name,
        local_aws.endpoint_url,
        local_aws.region_name,
        InitialPositionInStream.TRIM_HORIZON,
        1,
        StorageLevel.MEMORY_AND_DISK_2,  # 8th: storageLevel until PySpark 3.3
        aws["AWS_ACCESS_KEY_ID"],
        aws["AWS_SECRET_ACCESS_KEY"],
        shouted,
        dynamoDBEndpointUrl=local_aws.endpoint_url,
        cloudWatchEndpointUrl=local_aws.endpoint_url,
        fetchIntervalMs=200,
        failoverTimeMs=3000,
    )
    got = Collected(stream)
    ssc.start()
    got.wait_for(lambda items: len(items) >= len(sent), 90, f"{len(sent)} records")
    ssc.stop(stopSparkContext=False, stopGraceFully=True)
    assert sorted(got.snapshot()) == sorted(s.upper() for s in sent)
    assert "PySpark 2.x-3.3's positional layout" in caplog.text
