"""A Structured Streaming driver killed with SIGKILL mid-stream, restarted on its checkpoint.

The query writes a parquet file sink (exactly-once through its ``_spark_metadata`` log);
with batches that replay exactly, every record must be in the output exactly once.
"""

import json
import os
import signal
import subprocess
import sys
import textwrap
from collections import Counter

import pyarrow.parquet as pq
import pytest

from kinesis_dstream import KinesisProducer
from kinesis_dstream.retrieval.streams import ensure_stream

from ..support.waiting import wait_until

pytestmark = pytest.mark.spark

DRIVER = textwrap.dedent(
    """
    import json, os, sys, time
    from pyspark.sql import SparkSession
    from kinesis_dstream.sql import KinesisDataSource

    stream, endpoint, base, extra = sys.argv[1:5]
    spark = SparkSession.builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    spark.dataSource.register(KinesisDataSource)
    df = (
        spark.readStream.format("kinesis")
        .option("streamName", stream)
        .option("endpointUrl", endpoint)
        .option("initialPosition", "trim_horizon")
        .option("maxFetchRecordsPerShard", "150")
        .option("metadataPath", os.path.join(base, "ends"))
        .options(**json.loads(extra))
        .load()
    )
    query = (
        df.selectExpr("cast(data as string) as data", "shardId", "sequenceNumber")
        .writeStream.format("parquet")
        .option("path", os.path.join(base, "out"))
        .option("checkpointLocation", os.path.join(base, "checkpoint"))
        .trigger(processingTime="200 milliseconds")
        .start()
    )
    print("STARTED", flush=True)
    while query.isActive and not os.path.exists(os.path.join(base, "STOP")):
        time.sleep(0.2)
    if query.exception():
        print("FAILED", query.exception(), flush=True)
        sys.exit(1)
    query.stop()
    print("STOPPED", flush=True)
    """
)


class Driver:
    def __init__(self, tmp_path, stream, endpoint, local_aws, tag, extra=None):
        script = tmp_path / "driver.py"
        script.write_text(DRIVER)
        env = {
            **os.environ,
            **local_aws.env(),
            "PYSPARK_PYTHON": sys.executable,
            "PYSPARK_SUBMIT_ARGS": "--master local[2] --conf spark.ui.enabled=false "
            "--conf spark.sql.shuffle.partitions=2 pyspark-shell",
        }
        self.log = tmp_path / f"{tag}.log"
        with open(self.log, "w") as log:
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    str(script),
                    stream,
                    endpoint,
                    str(tmp_path),
                    json.dumps(extra or {}),
                ],
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )

    def kill(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=30)

    def exited(self):
        """Why waiting on this driver is over (it exited), or None while it runs."""
        return None if self.proc.poll() is None else f"driver exited: {self.tail()}"

    def tail(self):
        return self.log.read_text()[-4000:]


def committed_files(out):
    """Files the parquet sink committed, from its _spark_metadata log (as Spark reads it)."""
    log = out / "_spark_metadata"
    if not log.exists():
        return []
    paths = set()
    entries = [p for p in log.iterdir() if p.name.split(".")[0].isdigit()]
    for entry in sorted(entries, key=lambda p: int(p.name.split(".")[0])):
        for line in entry.read_text().splitlines()[1:]:
            item = json.loads(line)
            if item.get("action", "add") == "add":
                paths.add(item["path"].replace("file://", ""))
            else:
                paths.discard(item["path"].replace("file://", ""))
    return sorted(paths)


def output(out):
    rows = []
    for path in committed_files(out):
        table = pq.read_table(path)
        rows += table.column("data").to_pylist()
    return rows


def commits(tmp_path):
    directory = tmp_path / "checkpoint" / "commits"
    return [p for p in directory.iterdir() if p.name.isdigit()] if directory.exists() else []


#: Enhanced fan-out: a range of a shard subscribes at most every 5 s, so fewer, larger
#: batches (ministack serves SubscribeToShard; moto and kinesalite do not).
TRANSPORTS = {
    "polling": ("local_aws", {}),
    "efo": ("ministack", {"consumerMode": "efo", "maxFetchRecordsPerShard": "400"}),
}


# 55-70 s each: left out of the README's command (under 20 minutes), run by .ci/run after it.
@pytest.mark.slow
@pytest.mark.parametrize("transport", ["polling", "efo"])
def test_a_killed_driver_restarts_on_its_checkpoint_and_writes_every_record_once(
    request, unique_name, tmp_path, transport
):
    server_fixture, extra = TRANSPORTS[transport]
    server = request.getfixturevalue(server_fixture)
    kinesis = server.client("kinesis")
    ensure_stream(kinesis, unique_name, 2)
    sent = []

    def produce(n):
        with KinesisProducer(unique_name, client=kinesis) as producer:
            for _ in range(n):
                data = f"record-{len(sent)}"
                producer.put(data, f"key-{len(sent)}")
                sent.append(data)

    def driver(tag):
        return Driver(tmp_path, unique_name, server.endpoint_url, server, tag, extra)

    produce(3000)
    first = driver("first")
    second = None
    try:
        wait_until(
            lambda: len(commits(tmp_path)) >= 2,
            180,
            "two committed batches",
            failed=first.exited,
            detail=first.tail,
        )
        first.kill()  # mid-stream: 3000 records need more batches than that
        killed_at = len(output(tmp_path / "out"))
        produce(1000)
        second = driver("second")
        wait_until(
            lambda: len(output(tmp_path / "out")) >= len(sent),
            240,
            f"{len(sent)} records in the sink",
            failed=second.exited,
            detail=second.tail,
        )
        (tmp_path / "STOP").touch()
        assert second.proc.wait(timeout=120) == 0, second.tail()
    finally:
        for process in (first, second):
            if process is not None:
                process.kill()
    got = Counter(output(tmp_path / "out"))
    duplicates = {k: n for k, n in got.items() if n > 1}
    assert not duplicates, f"{len(duplicates)} records written twice"
    assert set(got) == set(sent) and len(got) == 4000
    assert 0 < killed_at < 4000
    print(f"killed after {killed_at} records were committed; {len(sent)} exactly once")
