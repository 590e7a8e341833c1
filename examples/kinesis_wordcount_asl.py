"""A kinesis-asl word count as the PySpark 2.x-3.3 era wrote it, kept exactly so.

    kinesis-dstream submit kinesis_wordcount_asl.py <app-name> <stream-name> <endpoint-url> \\
        <region-name> [<seconds>]

It imports ``pyspark.streaming.kinesis`` and passes ``StorageLevel.MEMORY_AND_DISK_2``
eighth, as the scripts of that era do (their layout; PySpark 3.4 put ``metricsLevel``
there). Under plain spark-submit it needs the JVM kinesis-asl jar; under ``kinesis-dstream
submit`` it runs on kinesis_dstream, with no line changed. It reads from TRIM_HORIZON,
counts the words of each 1 s batch and prints them (pprint); with <seconds> it stops
after that long, else it runs until stopped.
"""

import sys

from pyspark import SparkContext
from pyspark.storagelevel import StorageLevel
from pyspark.streaming import StreamingContext
from pyspark.streaming.kinesis import InitialPositionInStream, KinesisUtils

if __name__ == "__main__":
    if len(sys.argv) not in (5, 6):
        print(
            "Usage: kinesis_wordcount_asl.py <app-name> <stream-name> <endpoint-url> "
            "<region-name> [<seconds>]",
            file=sys.stderr,
        )
        sys.exit(-1)

    sc = SparkContext(appName="PythonStreamingKinesisWordCountAsl")
    ssc = StreamingContext(sc, 1)
    appName, streamName, endpointUrl, regionName = sys.argv[1:5]
    lines = KinesisUtils.createStream(
        ssc,
        appName,
        streamName,
        endpointUrl,
        regionName,
        InitialPositionInStream.TRIM_HORIZON,
        2,
        StorageLevel.MEMORY_AND_DISK_2,
    )
    counts = (
        lines.flatMap(lambda line: line.split(" "))
        .map(lambda word: (word, 1))
        .reduceByKey(lambda a, b: a + b)
    )
    counts.pprint()

    ssc.start()
    if len(sys.argv) == 6:
        ssc.awaitTerminationOrTimeout(float(sys.argv[5]))
        ssc.stop(stopSparkContext=True, stopGraceFully=True)
    else:
        ssc.awaitTermination()
