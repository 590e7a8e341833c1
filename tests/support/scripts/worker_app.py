"""One worker of a shared application: writes every record it receives to <out-dir>.

    worker_app.py <app> <stream> <endpoint-url> <region> <out-dir> <name>

Files are <name>-<batch>.txt, one record a line, renamed into place whole. A file named
STOP-<name> in <out-dir> stops it gracefully.
"""

import os
import sys
import threading
import time

from pyspark import SparkContext
from pyspark.streaming import StreamingContext

from kinesis_dstream import InitialPositionInStream, KinesisUtils

app, stream, endpoint, region, out_dir, name = sys.argv[1:7]
sc = SparkContext.getOrCreate()
sc.setLogLevel("ERROR")
ssc = StreamingContext(sc, 1)
records = KinesisUtils.createStream(
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
    workerId=name,
)


def write(time, rdd):
    rows = rdd.collect()
    if rows:
        path = os.path.join(out_dir, f"{name}-{int(time.timestamp() * 1000)}.txt")
        with open(path + ".tmp", "w") as f:
            f.write("\n".join(rows) + "\n")
        os.replace(path + ".tmp", path)


records.foreachRDD(write)


def stop_when_asked():
    while not os.path.exists(os.path.join(out_dir, f"STOP-{name}")):
        time.sleep(0.2)
    ssc.stop(stopSparkContext=True, stopGraceFully=True)


threading.Thread(target=stop_when_asked, daemon=True).start()
ssc.start()
ssc.awaitTermination()
print("STOPPED", flush=True)
