"""forEachBatch with its checkpoint on S3 where Spark has no S3 filesystem (pip-installed
PySpark): kept locally, mirrored to S3 after each commit, restored from S3 alone."""

import os

from kinesis_dstream.glue.options import ForEachBatchOptions
from kinesis_dstream.glue.streaming.foreach_batch import BatchLoop

from ..support.glue import create_words_table, running_loop, s3_objects
from ..support.records import put_records
from ..support.waiting import wait_until
from .test_glue import bucket, glue, glue_env  # noqa: F401 (the Glue tests' fixtures)


def test_a_checkpoint_on_s3_is_mirrored_and_a_fresh_directory_resumes_from_s3_alone(
    glue,  # noqa: F811
    local_aws,
    kinesis,
    stream,
    bucket,  # noqa: F811
    unique_name,
):
    """Two runs, each on a fresh local copy restored from S3: every record once, and
    the S3 prefix holds Spark's checkpoint and the source's range ends."""
    table = unique_name.replace("-", "_")
    create_words_table(local_aws, table, stream)
    checkpoint = f"s3://{bucket}/out/cp/"  # a public job's shape: <output_path>cp/
    options = ForEachBatchOptions.parse(
        {"windowSize": "1 second", "checkpointLocation": checkpoint}
    )
    seen: list = []

    def processBatch(data_frame, batchId):
        seen.extend(row.word1 for row in data_frame.select("word1").collect())

    def run(expected):
        frame = glue.create_data_frame.from_catalog(
            database="glue_tests",
            table_name=table,
            additional_options={"startingPosition": "TRIM_HORIZON", "inferSchema": "false"},
        )
        with running_loop(BatchLoop, frame, processBatch, options) as loop:
            wait_until(lambda: loop.loop.mirror is not None, 60, "the mirror", failed=loop.failed)
            local_dir = loop.loop.mirror.local_dir
            wait_until(
                lambda: len(seen) >= expected,
                120,
                f"{expected} records",
                failed=loop.failed,
                detail=lambda: f"(have {len(seen)})",
            )
        assert loop.error is None and loop.result.value == "stopped"
        assert not os.path.exists(local_dir)  # the local copy goes; S3 has it all
        return local_dir

    put_records(kinesis, stream, 40, data="w{i} x")
    first = run(40)
    keys = set(s3_objects(local_aws.client("s3"), bucket, "out/cp/"))
    assert {"out/cp/metadata", "out/cp/offsets/0", "out/cp/commits/0"} <= keys
    assert any(k.startswith("out/cp/kinesis-ends/queries/") for k in keys)  # the ends too
    assert not any("/." in k for k in keys)  # no .crc or .tmp files
    put_records(kinesis, stream, 30, data="w{i} x", start=40)
    second = run(70)
    assert second != first
    assert sorted(seen) == sorted(f"w{i}" for i in range(70))  # once each after a clean stop
