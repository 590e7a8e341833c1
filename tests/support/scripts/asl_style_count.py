"""A script written for pyspark.streaming.kinesis (the JVM kinesis-asl): the tests run it
with that import changed to kinesis_dstream and nothing else.

    asl_style_count.py <app-name> <stream-name> <endpoint-url> <region-name> <expected>
"""

import sys
import time

from pyspark import SparkContext
from pyspark.storagelevel import StorageLevel
from pyspark.streaming import StreamingContext
from pyspark.streaming.kinesis import (
    InitialPositionInStream,
    KinesisUtils,
    MetricsLevel,
    utf8_decoder,
)

if __name__ == "__main__":
    app_name, stream_name, endpoint_url, region_name, expected = sys.argv[1:6]
    sc = SparkContext(appName="AslStyleCount")
    sc.setLogLevel("ERROR")
    ssc = StreamingContext(sc, 1)
    lines = KinesisUtils.createStream(
        ssc,
        app_name,
        stream_name,
        endpoint_url,
        region_name,
        InitialPositionInStream.TRIM_HORIZON,
        2,
        MetricsLevel.NONE,
        StorageLevel.MEMORY_AND_DISK_2,
        decoder=utf8_decoder,
        stsAssumeRoleArn="arn:aws:iam::123456789012:role/kinesis-reader",
        stsSessionName="asl-style-count",
        stsExternalId="external-id-1",
    )
    seen = []
    lines.foreachRDD(lambda rdd: seen.extend(rdd.collect()))
    ssc.start()
    deadline = time.time() + 90
    while len(seen) < int(expected) and time.time() < deadline:
        ssc.awaitTerminationOrTimeout(0.5)
    print("COUNTED", len(seen), "DISTINCT", len(set(seen)))
    ssc.stop(stopSparkContext=True, stopGraceFully=True)
