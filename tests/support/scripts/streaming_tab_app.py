"""Two createStream calls (one also through a window) with Spark's UI on; at the end, what
Spark's REST API and the Streaming tab say, as JSON on the last line of stdout.

    streaming_tab_app.py <app> <stream-a> <count-a> <stream-b> <count-b> <endpoint> <region> <mode>

``mode`` "plain": each stream's records collected every batch; "window": only through a
window of 3 batches sliding every 3 (so job times are every 3rd batch time, and the
batches between them are reported under the next job time).
"""

import json
import socket
import sys
import time
import urllib.request

from pyspark import SparkConf, SparkContext
from pyspark.streaming import StreamingContext

from kinesis_dstream import InitialPositionInStream, KinesisUtils


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def get(url):
    with urllib.request.urlopen(url, timeout=30) as answer:
        return answer.read().decode("utf-8")


def collector(into):
    return lambda rdd: into.extend(rdd.collect())


if __name__ == "__main__":
    app, stream_a, count_a, stream_b, count_b, endpoint, region, mode = sys.argv[1:9]
    port = free_port()
    conf = (
        SparkConf()
        .setAppName("StreamingTab")
        .set("spark.ui.enabled", "true")
        .set("spark.ui.port", str(port))
        .set("spark.ui.host", "127.0.0.1")
        .set("spark.driver.host", "127.0.0.1")
    )
    sc = SparkContext(conf=conf)
    sc.setLogLevel("ERROR")
    ssc = StreamingContext(sc, 1)
    seen = {stream_a: [], stream_b: []}
    for stream in (stream_a, stream_b):
        records = KinesisUtils.createStream(
            ssc, f"{app}-{stream}", stream, endpoint, region,
            InitialPositionInStream.TRIM_HORIZON, 2,
        )
        if mode == "window":
            records = records.window(3, 3)
        records.foreachRDD(collector(seen[stream]))
    ssc.start()
    try:
        deadline = time.time() + 120
        want = {stream_a: int(count_a), stream_b: int(count_b)}
        while any(len(seen[s]) < n for s, n in want.items()) and time.time() < deadline:
            ssc.awaitTerminationOrTimeout(0.5)
        ssc.awaitTerminationOrTimeout(4.0)  # a few more batches: every one reported
        base = f"http://127.0.0.1:{port}/api/v1/applications"
        app_id = json.loads(get(base))[0]["id"]
        batches = json.loads(get(f"{base}/{app_id}/streaming/batches"))
        page = get(f"http://127.0.0.1:{port}/streaming/")
        batch_pages = [
            get(f"http://127.0.0.1:{port}/streaming/batch/?id={b['batchId']}")
            for b in batches
            if b.get("inputSize")
        ][:3]
    finally:
        ssc.stop(stopSparkContext=True, stopGraceFully=False)
    print(
        json.dumps(
            {
                "delivered": {s: len(v) for s, v in seen.items()},
                "input_sizes": [b.get("inputSize", 0) for b in batches],
                "page": page,
                "batch_pages": batch_pages,
            }
        )
    )
