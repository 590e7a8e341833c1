"""Count words from a Kinesis stream: Spark's kinesis_wordcount_asl.py, without the jar.

Usage:
    python examples/kinesis_wordcount.py <app-name> <stream-name> <endpoint-url> <region-name>
    python examples/kinesis_wordcount.py --local [--seconds N]

The first form is Spark's example with one changed import: 1 s batches, a checkpoint
interval of 2 s, LATEST, split -> (word, 1) -> reduceByKey -> pprint. Leases and
checkpoints go to the DynamoDB table named <app-name>; credentials come from the AWS
SDK's default chain.

``--local`` needs no AWS account: it starts the embedded local AWS (moto's server on
127.0.0.1), creates a stream, runs the word producer (1,000 records/s of 10 words) for N
seconds beside the count, prints the running totals next to the producer's totals, and
exits 0 only if they match.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import threading
import time
from collections import Counter

try:
    from pyspark import SparkConf, SparkContext
    from pyspark.streaming import StreamingContext
except ImportError:  # one line naming the extra, not a traceback
    sys.exit("error: this example needs PySpark: pip install 'kinesis_dstream[spark,local]'")

from kinesis_dstream import InitialPositionInStream, KinesisUtils  # was: pyspark.streaming.kinesis

LOCAL_APP = "kinesis-dstream-wordcount"
LOCAL_STREAM = "kinesis-dstream-wordcount"
LOCAL_SHARDS = 2


def word_counts(ssc, app_name, stream_name, endpoint_url, region_name):
    lines = KinesisUtils.createStream(
        ssc,
        app_name,
        stream_name,
        endpoint_url,
        region_name,
        InitialPositionInStream.LATEST,
        2,
    )
    counts = (
        lines.flatMap(lambda line: line.split(" "))
        .map(lambda word: (word, 1))
        .reduceByKey(lambda a, b: a + b)
    )
    counts.pprint()
    return counts


def run(app_name, stream_name, endpoint_url, region_name):
    sc = SparkContext(appName="PythonStreamingKinesisWordCountAsl")
    ssc = StreamingContext(sc, 1)
    word_counts(ssc, app_name, stream_name, endpoint_url, region_name)
    ssc.start()
    ssc.awaitTermination()


def wait_for_leases(dynamodb, app_name, shards, timeout_s=120.0):
    """Until every shard's lease has an owner: the count is reading from LATEST."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            items = dynamodb.scan(TableName=app_name, ConsistentRead=True)["Items"]
        except dynamodb.exceptions.ResourceNotFoundException:
            items = []
        if len([i for i in items if "leaseOwner" in i]) >= shards:
            return
        time.sleep(0.2)
    raise SystemExit(f"the count did not take its {shards} leases within {timeout_s:.0f}s")


def run_local(seconds):
    from kinesis_dstream import KinesisProducer
    from kinesis_dstream.demo.word_producer import produce
    from kinesis_dstream.local import LocalAWS
    from kinesis_dstream.retrieval.streams import ensure_stream

    with LocalAWS() as aws:
        os.environ.update(aws.env())  # the driver and Spark's Python workers use it
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        kinesis = aws.client("kinesis")
        ensure_stream(kinesis, LOCAL_STREAM, LOCAL_SHARDS)
        conf = (
            SparkConf()
            .setMaster("local[2]")
            .setAppName("kinesis-dstream-wordcount")
            .set("spark.ui.enabled", "false")
        )
        sc = SparkContext(conf=conf)
        sc.setLogLevel("ERROR")
        ssc = StreamingContext(sc, 1)
        counts = word_counts(ssc, LOCAL_APP, LOCAL_STREAM, aws.endpoint_url, aws.region_name)
        lock = threading.Lock()
        counted: Counter = Counter()

        def add(rdd):
            batch = dict(rdd.collect())
            with lock:
                counted.update(batch)

        counts.foreachRDD(add)
        ssc.start()
        try:
            wait_for_leases(aws.client("dynamodb"), LOCAL_APP, LOCAL_SHARDS)
            time.sleep(0.5)
            with KinesisProducer(LOCAL_STREAM, client=kinesis) as producer:
                sent = produce(producer, 1000, 10, seconds, random.Random(7))
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                with lock:
                    if counted == sent:
                        break
                time.sleep(0.2)
        finally:
            ssc.stop(stopSparkContext=True, stopGraceFully=True)
        print("Totals for the words sent:  ", sorted(sent.items()))
        print("Totals for the words counted:", sorted(counted.items()))
        if counted != sent:
            print("MISMATCH: the counts differ from what was sent")
            return 1
        print("OK: every word sent was counted exactly once")
        return 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("args", nargs="*", metavar="app-name stream-name endpoint-url region")
    parser.add_argument("--local", action="store_true", help="run on the embedded local AWS")
    parser.add_argument("--seconds", type=int, default=10, help="with --local: how long to produce")
    args = parser.parse_args(argv)
    if args.local:
        if args.args:
            parser.error("--local takes no positional arguments")
        if args.seconds < 1:
            parser.error("--seconds must be >= 1")
        return run_local(args.seconds)
    if len(args.args) != 4:
        parser.error("give <app-name> <stream-name> <endpoint-url> <region-name>, or --local")
    run(*args.args)
    return 0


if __name__ == "__main__":
    from kinesis_dstream.extras import MissingExtraError

    try:
        sys.exit(main())
    except MissingExtraError as missing:  # one line naming the extra, not a traceback
        sys.exit(f"error: {missing}")
