"""A stateful word count that recovers from its Spark checkpoint (tests kill it with -9).

    stateful_app.py <checkpoint-dir> <app> <stream> <endpoint-url> <region> <out-dir>

Each batch writes its running totals (updateStateByKey) and its 4 s window
(reduceByKeyAndWindow with an inverse) to <out-dir> as JSON files; a file named STOP in
<out-dir> stops it gracefully.
"""

import json
import os
import sys
import threading
import time

from pyspark import SparkContext
from pyspark.streaming import StreamingContext

from kinesis_dstream import InitialPositionInStream, KinesisUtils

checkpoint_dir, app, stream, endpoint, region, out_dir = sys.argv[1:7]


def snapshot(kind):
    def write(time, rdd):
        path = os.path.join(out_dir, f"{kind}-{int(time.timestamp() * 1000)}-{os.getpid()}.json")
        with open(path + ".tmp", "w") as f:
            json.dump(dict(rdd.collect()), f)
        os.replace(path + ".tmp", path)

    return write


def setup():
    sc = SparkContext.getOrCreate()
    sc.setLogLevel("ERROR")
    ssc = StreamingContext(sc, 1)
    ssc.checkpoint(checkpoint_dir)
    lines = KinesisUtils.createStream(
        ssc,
        app,
        stream,
        endpoint,
        region,
        InitialPositionInStream.TRIM_HORIZON,
        1,
        dynamoDBEndpointUrl=endpoint,
        failoverTimeMs=2000,
        fetchIntervalMs=200,
    )
    pairs = lines.flatMap(lambda line: line.split(" ")).map(lambda word: (word, 1))
    totals = pairs.updateStateByKey(lambda new, old: sum(new) + (old or 0))
    window = pairs.reduceByKeyAndWindow(lambda a, b: a + b, lambda a, b: a - b, 4, 1)
    totals.foreachRDD(snapshot("totals"))
    window.foreachRDD(snapshot("window"))
    return ssc


ssc = StreamingContext.getOrCreate(checkpoint_dir, setup)


def stop_when_asked():
    while not os.path.exists(os.path.join(out_dir, "STOP")):
        time.sleep(0.2)
    ssc.stop(stopSparkContext=True, stopGraceFully=True)


threading.Thread(target=stop_when_asked, daemon=True).start()
ssc.start()
ssc.awaitTermination()
print("STOPPED", flush=True)
