"""The executor-side file writer on S3 (moto's server; no Spark: a task attempt is
called as Spark calls it, with the library's S3 client, faults injected on it): an
attempt never completes or removes another attempt's object, a failed commit of a later
file leaves none of the attempt's files, and an aborted multipart upload leaves nothing."""

import json

import pyarrow as pa
import pytest

from kinesis_dstream.aws import ClientSpec
from kinesis_dstream.glue.sinks.file_formats import LINE_COLUMN
from kinesis_dstream.glue.sinks.file_sink import FileSetWriter
from kinesis_dstream.glue.sinks.file_stores import S3Store

from ..support.faults import CallErrors
from ..support.glue import s3_objects

MIB = 1024 * 1024


@pytest.fixture
def s3(local_aws, monkeypatch, unique_name):
    """The library's own S3 client (the one the writer uses) on the local AWS, and a bucket."""
    for key, value in local_aws.env().items():
        monkeypatch.setenv(key, value)
    client = ClientSpec("s3").client()
    client.create_bucket(Bucket=unique_name.lower())
    return client, unique_name.lower()


def writer(bucket, keys=()):
    return FileSetWriter(
        {
            "path": f"s3://{bucket}/out/",
            "format": "json",
            "partition_keys": json.dumps(list(keys)),
            "start_millis": "1",
            "token": "abcd1234",
            "file_options": json.dumps({"compression": "none"}),
        }
    )


def lines(*ids, key=None):
    columns = {} if key is None else {"__key_0": [key] * len(ids)}
    return pa.RecordBatch.from_pydict(
        {**columns, LINE_COLUMN: [json.dumps({"id": i}) for i in ids]}
    )


def failing_after(*batches):
    yield from batches
    raise ConnectionError("the executor lost its input")


def test_a_failing_attempt_neither_completes_nor_deletes_another_attempt_s_object(s3):
    client, bucket = s3
    writer(bucket).write_attempt(iter([lines(1, 2)]), 3, 0)
    with pytest.raises(ConnectionError):
        writer(bucket).write_attempt(failing_after(lines(9)), 3, 1)
    assert s3_objects(client, bucket) == {
        "out/run-1-abcd1234-part-r-00003-a0.json": b'{"id": 1}\n{"id": 2}\n'
    }


def test_a_failed_commit_of_a_later_file_removes_the_files_the_attempt_committed(s3):
    client, bucket = s3
    refused = CallErrors(client, "s3", "PutObject", lambda n: "AccessDenied" if n == 1 else None)
    try:
        with pytest.raises(Exception, match="AccessDenied") as e:
            writer(bucket, keys=["k"]).write_attempt(
                iter([lines(1, key="a"), lines(2, key="b")]), 0, 0
            )
    finally:
        refused.remove()
    assert refused.calls == 2  # the first file was committed, the second refused
    # the error names the object, not only the operation (botocore's message names neither)
    assert f"PutObject of s3://{bucket}/out/k=b/run-1-abcd1234-part-r-00000-a0.json" in str(e.value)
    assert s3_objects(client, bucket) == {}


def test_a_large_file_goes_up_in_parts_and_an_aborted_one_leaves_no_upload(s3):
    client, bucket = s3
    store = S3Store(bucket, "big", part_bytes=5 * MIB)
    kept = store.open("kept.bin")
    for _ in range(11):
        kept.write(b"x" * MIB)
    kept.close()
    dropped = store.open("dropped.bin")
    dropped.write(b"y" * (6 * MIB))
    dropped.abort()
    objects = s3_objects(client, bucket)
    assert list(objects) == ["big/kept.bin"] and objects["big/kept.bin"] == b"x" * (11 * MIB)
    assert client.list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []
