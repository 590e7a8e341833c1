"""kinesis-asl scripts with zero lines changed: PySpark 2.x-3.3's positional createStream
call on the session's StreamingContext; the executors' side of the pyspark.streaming.kinesis
stand-in; and the migration page's `kinesis-dstream submit` commands, run as printed."""

import importlib.util
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from pyspark.storagelevel import StorageLevel

from kinesis_dstream import InitialPositionInStream, KinesisUtils
from kinesis_dstream.asl.kinesis_utils import carry_to_workers
from kinesis_dstream.asl.standin import SHIM_DIR, STANDIN_FILE
from kinesis_dstream.retrieval.streams import ensure_stream

from ..support.records import put_records
from ..support.streaming import Collected, our_threads

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[2]
PAGE_PORT = "4566"


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


@pytest.mark.parametrize(
    "positional, keywords",
    [((0, "MEMORY_AND_DISK_2"), {}), ((), {"storageLevel": "MEMORY_AND_DISK_2"})],
    ids=["positional", "keyword"],
)
def test_a_storage_level_that_is_not_one_is_refused_at_the_call(
    ssc, local_aws, unique_name, positional, keywords
):
    # it used to be accepted, and the first round's persist failed in the round thread
    with pytest.raises(TypeError) as e:
        KinesisUtils.createStream(
            ssc,
            unique_name,
            unique_name,
            local_aws.endpoint_url,
            local_aws.region_name,
            InitialPositionInStream.LATEST,
            1,
            *positional,
            **keywords,
        )
    assert str(e.value) == (
        "storageLevel must be a pyspark StorageLevel (StorageLevel.MEMORY_AND_DISK_2 by "
        "default), got 'MEMORY_AND_DISK_2'"
    )
    assert our_threads() == []


def test_without_the_runner_the_workers_import_pyspark_s_own_and_with_it_the_library_s(spark):
    """The executors' side of the stand-in on any cluster manager: createStream under the
    runner puts its folder on the SparkContext's environment, which the Python workers of
    every function shipped after it start with."""

    def module_file(_):
        import pyspark.streaming.kinesis as module

        return module.__file__

    saved = dict(spark.environment)
    try:
        (pysparks,) = spark.parallelize([0], 1).map(module_file).collect()
        assert pysparks.endswith(os.path.join("pyspark", "streaming", "kinesis.py"))
        carry_to_workers(spark)
        carry_to_workers(spark)  # once is enough; a second changes nothing
        assert spark.environment["PYTHONPATH"].split(os.pathsep).count(SHIM_DIR) == 1
        assert spark.parallelize([0], 1).map(module_file).collect() == [STANDIN_FILE]
    finally:
        spark.environment.clear()
        spark.environment.update(saved)


def page_commands():
    spec = importlib.util.spec_from_file_location(
        "gen_reference", ROOT / "docs" / "gen_reference.py"
    )
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    (block,) = gen.marked_blocks(ROOT / "docs" / "migrate-dstream.md", "run: submit")
    return block.strip().splitlines()


def word_totals(lines):
    """Word -> count summed over ``(word, n)`` lines (the producer's totals, or pprint's
    ``('word', n)`` of every batch)."""
    totals = Counter()
    for line in lines:
        match = re.match(r"^\('?(\w+)'?, (\d+)\)$", line)
        if match:
            totals[match.group(1)] += int(match.group(2))
    return totals


@pytest.mark.slow  # a spark-submit of its own, 40-60 s: CI's long scenarios run it
def test_the_migration_page_runs_a_kinesis_asl_script_unchanged_under_submit(local_aws):
    """The page's commands as printed (on the suite's local AWS and port): the 2.x-era
    word count (pyspark.streaming.kinesis, StorageLevel 8th) under kinesis-dstream submit
    counts every word of every record the producer put."""
    export, produce, submit = page_commands()
    settings = dict(item.split("=", 1) for item in export.split()[1:])
    endpoint = settings.pop("AWS_ENDPOINT_URL")
    assert endpoint.replace(PAGE_PORT, str(local_aws.port)) == local_aws.endpoint_url
    assert settings == {k: v for k, v in local_aws.env().items() if k in settings}
    script = (ROOT / "examples" / "kinesis_wordcount_asl.py").read_text()
    assert "from pyspark.streaming.kinesis import InitialPositionInStream, KinesisUtils" in script
    assert "StorageLevel.MEMORY_AND_DISK_2,\n    )" in script  # the 8th, positionally
    env = {
        **{k: v for k, v in os.environ.items() if k not in ("PYSPARK_PYTHON", "PYTHONPATH")},
        "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"],
        "AWS_ENDPOINT_URL": local_aws.endpoint_url,
    }

    def run(command, timeout):
        done = subprocess.run(
            ["bash", "-c", command],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]
        return done

    env.update(settings)
    sent = word_totals(run(produce, 120).stdout.splitlines())
    assert sum(sent.values()) == 2 * 100 * 5
    done = run(submit, 300)
    first = done.stderr.splitlines()[0]
    assert first.startswith("kinesis-dstream submit: pyspark.streaming.kinesis is kinesis_dstream")
    # the one warning (the driver's stderr: spark-submit merges it into its stdout)
    assert "PySpark 2.x-3.3's positional layout" in done.stdout
    assert word_totals(done.stdout.splitlines()) == sent
