"""The checkpoint mirror against moto's S3 (no Spark: the local checkpoint's files are
written as Spark writes them): what reaches S3 after each commit, what a restore on a
fresh directory brings back, and a mirror that cannot upload failing loudly."""

import os

import pytest

from kinesis_dstream.glue.errors import GlueError
from kinesis_dstream.glue.streaming.checkpoint_mirror import CheckpointMirror
from kinesis_dstream.glue.streaming.checkpoint_plan import local_files

from ..support.faults import CallErrors
from ..support.glue import s3_objects
from ..support.waiting import wait_until
from .test_glue_file_stores import s3  # noqa: F401 (the library's S3 client and a bucket)


def write(mirror, relative, text="v1\n{}"):
    path = os.path.join(mirror.local_dir, *relative.split("/"))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as handle:
        handle.write(text)


def test_commits_reach_s3_with_their_offsets_and_a_fresh_directory_restores_them(s3):  # noqa: F811
    client, bucket = s3
    ends = "out/cp/kinesis-ends/ab/ab12.json"  # the source's, written by its tasks
    client.put_object(Bucket=bucket, Key=ends, Body=b"{}")
    mirror = CheckpointMirror(f"s3://{bucket}/out/cp/")
    assert mirror.restore() == 0 and mirror.committed is None
    for name in ("metadata", "offsets/0", "offsets/.0.crc", "commits/0", "offsets/1"):
        write(mirror, name)
    mirror.sync()
    assert set(s3_objects(client, bucket, "out/cp/")) == {
        "out/cp/metadata",
        "out/cp/offsets/0",
        "out/cp/commits/0",
        "out/cp/offsets/1",
        ends,
    }  # batch 1 runs: its offsets go up after commits/0, as Spark's own writes go

    for name in ("offsets/0", "commits/0"):  # Spark's clean-up of old batches
        os.remove(f"{mirror.local_dir}/{name}")
    write(mirror, "commits/1")
    write(mirror, "offsets/2")
    mirror.close()
    assert not os.path.exists(mirror.local_dir)
    assert set(s3_objects(client, bucket, "out/cp/")) == {
        "out/cp/metadata",
        "out/cp/offsets/1",
        "out/cp/commits/1",
        "out/cp/offsets/2",
        ends,
    }
    fresh = CheckpointMirror(f"s3://{bucket}/out/cp")
    assert fresh.local_dir != mirror.local_dir
    assert fresh.restore() == 4 and fresh.committed == 1
    assert set(local_files(fresh.local_dir)) == {
        "metadata",
        "offsets/1",
        "commits/1",
        "offsets/2",
    }
    fresh.discard()


def test_a_mirror_that_cannot_upload_stops_and_says_which_object(s3):  # noqa: F811
    client, bucket = s3
    mirror = CheckpointMirror(f"s3://{bucket}/cp/")
    mirror.restore()
    mirror.start()
    refused = CallErrors(client, "s3", "PutObject", lambda n: "AccessDenied")
    try:
        write(mirror, "offsets/0")
        write(mirror, "commits/0")
        wait_until(lambda: mirror.error is not None, 30, "the mirror's error")
        with pytest.raises(GlueError) as error:
            mirror.check()
        message = str(error.value)
        assert "\n" not in message
        assert f"put_object of s3://{bucket}/cp/offsets/0 failed" in message
        assert "AccessDenied" in message and mirror.local_dir in message
        with pytest.raises(GlueError, match="AccessDenied"):
            mirror.close()  # the thread is joined; the error is the job's
    finally:
        refused.remove()
        mirror.discard()
    assert s3_objects(client, bucket, "cp/") == {}
