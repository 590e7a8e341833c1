"""The checkpoint mirror's pure logic (which files go to S3, in which order; where a
restore puts them) and where the Glue layer's sources keep their range ends."""

import json
import os

import pytest

from kinesis_dstream.glue.streaming.checkpoint_ends import (
    choose_place,
    ends_place,
    place_ends,
    with_deferred_ends,
)
from kinesis_dstream.glue.streaming.checkpoint_plan import local_files, plan_sync, restored_path
from kinesis_dstream.sql.config.end_store_options import DEFAULT_STORE_DIR
from kinesis_dstream.sql.config.options import OptionError, SourceOptions
from kinesis_dstream.sql.ends.opening import build_end_store
from kinesis_dstream.sql.ends.s3 import S3EndStore
from kinesis_dstream.sql.ends.store import DirectoryEndStore

SIG = (10, 1)


def files(*names, sig=SIG):
    return {name: sig for name in names}


def test_before_the_first_commit_what_batch_0_starts_from_goes_to_s3():
    """(review) Nothing went up before the first commit, so a job killed during batch 0
    lost offsets/0, where a pinned LATEST lives: the restart pinned LATEST again and
    skipped the records put in between. Spark's own S3 checkpoint would have had it."""
    plan = plan_sync(files("metadata", "offsets/0", "offsets/1", "sources/0/0"), {})
    assert plan.committed is None and plan.deletes == ()
    assert plan.uploads == ("metadata", "sources/0/0", "offsets/0")


def test_a_commit_goes_last_after_its_offsets_and_the_query_s_other_files():
    local = files(
        "offsets/0",
        "commits/0",
        "offsets/1",
        "commits/1",
        "metadata",
        "sources/0/0",
        "offsets/2",  # batch 2 is running: its offsets go last, after commits/1
        "offsets/3",  # never written by Spark before commits/2; not mirrored if seen
        ".metadata.crc",
        "offsets/.1.crc",
        "commits/.2.abc.tmp",  # Hadoop's and Spark's
    )
    plan = plan_sync(local, {})
    assert plan.committed == 1
    assert plan.uploads == (
        "metadata",
        "sources/0/0",
        "offsets/0",
        "offsets/1",
        "commits/0",
        "commits/1",
        "offsets/2",
    )


def test_only_what_changed_since_the_last_sync_goes_and_spark_s_clean_up_is_mirrored():
    uploaded = files("metadata", "offsets/0", "commits/0", "offsets/1", "commits/1")
    local = files("metadata", "offsets/1", "commits/1", "offsets/2", "commits/2", "offsets/3")
    plan = plan_sync(local, uploaded)
    assert plan.uploads == ("offsets/2", "commits/2", "offsets/3")
    assert plan.deletes == ("commits/0", "offsets/0")  # a commit never outlives its offsets
    rewritten = plan_sync({**local, "metadata": (11, 2)}, {**uploaded, **files("offsets/2")})
    assert rewritten.uploads == ("metadata", "commits/2", "offsets/3")


def test_state_files_go_up_to_the_committed_batch_s_version():
    local = files(
        "offsets/4",
        "commits/4",
        "state/0/0/5.delta",
        "state/0/0/6.delta",
        "state/0/0/_metadata/schema",
    )
    assert plan_sync(local, {}).uploads == (
        "state/0/0/5.delta",
        "state/0/0/_metadata/schema",
        "offsets/4",
        "commits/4",
    )


def test_a_restore_puts_spark_s_files_in_place_and_leaves_the_range_ends_in_s3(tmp_path):
    root = str(tmp_path)
    skip = ("kinesis-ends",)
    assert restored_path(root, "out/cp/", "out/cp/offsets/3", skip) == os.path.join(
        root, "offsets", "3"
    )
    assert restored_path(root, "", "metadata", skip) == os.path.join(root, "metadata")
    assert restored_path(root, "out/cp/", "out/cp/kinesis-ends/ab/ab1.json", skip) is None
    assert restored_path(root, "out/cp/", "out/cp/offsets/", skip) is None  # a "folder"
    with pytest.raises(ValueError, match="not a path inside the checkpoint"):
        restored_path(root, "out/cp/", "out/cp/../../etc/x", skip)
    # a NUL in a key: open() would raise its own ValueError past the mirror's GlueError
    with pytest.raises(ValueError, match="not a path inside the checkpoint"):
        restored_path(root, "out/cp/", "out/cp/offsets/3\x00", skip)


def test_local_files_are_relative_with_their_size(tmp_path):
    (tmp_path / "offsets").mkdir()
    (tmp_path / "offsets" / "0").write_text("v1\n{}")
    assert {k: v[0] for k, v in local_files(str(tmp_path)).items()} == {"offsets/0": 5}


def test_range_ends_go_inside_the_checkpoint_unless_the_script_names_a_store(tmp_path):
    assert ends_place("s3://bkt/out/cp/") == "s3://bkt/out/cp/kinesis-ends"
    assert ends_place("s3a://bkt") == "s3://bkt/kinesis-ends"
    assert ends_place(f"file://{tmp_path}/cp") == f"{tmp_path}/cp/kinesis-ends"
    assert ends_place("hdfs://nn/cp") is None
    assert choose_place("hdfs://nn/cp", False, False) == DEFAULT_STORE_DIR
    # an old checkpoint whose ends are in the old default keeps them there
    assert choose_place("s3://bkt/cp/", True, False) == DEFAULT_STORE_DIR
    assert choose_place("s3://bkt/cp/", True, True) == "s3://bkt/cp/kinesis-ends"
    assert choose_place("s3://bkt/cp/", False, False) == "s3://bkt/cp/kinesis-ends"
    assert "endsLocationFile" not in with_deferred_ends({"kinesis.metadataPath": "/x"})
    assert "endsLocationFile" not in with_deferred_ends({"metadataCommitterType": "DYNAMODB"})
    assert "endsLocationFile" in with_deferred_ends({"streamName": "s"})


def test_a_deferred_place_is_read_when_the_reader_is_built(tmp_path):
    options = SourceOptions.parse(with_deferred_ends({"streamName": "s", "region": "us-east-1"}))
    assert options.end_store.kind == "deferred"
    unplaced = build_end_store(options)  # started by the script's own writeStream
    assert isinstance(unplaced, DirectoryEndStore)
    assert unplaced.root == os.path.expanduser(DEFAULT_STORE_DIR)
    place_ends(str(tmp_path / "cp"), started=False)
    local = build_end_store(options)
    assert isinstance(local, DirectoryEndStore)
    assert local.root == str(tmp_path / "cp" / "kinesis-ends")
    with open(options.end_store.path, "w") as handle:
        json.dump({"metadataPath": "s3://bucket-1/out/cp/kinesis-ends"}, handle)
    remote = build_end_store(options)
    assert isinstance(remote, S3EndStore)
    assert (remote.bucket, remote.prefix) == ("bucket-1", "out/cp/kinesis-ends")
    with open(options.end_store.path, "w") as handle:
        json.dump({"metadataPath": "gs://b/x"}, handle)
    with pytest.raises(OptionError, match="'gs://b/x' is neither S3 nor"):
        build_end_store(options)
    os.remove(options.end_store.path)


def test_a_checkpoint_started_before_keeps_its_ends_in_the_old_default(tmp_path):
    from kinesis_dstream.glue.streaming.checkpoint_ends import checkpoint_started, clear_ends

    checkpoint = tmp_path / "cp"
    assert not checkpoint_started(str(checkpoint))
    (checkpoint / "offsets").mkdir(parents=True)
    (checkpoint / "offsets" / ".0.crc").write_text("")
    assert not checkpoint_started(str(checkpoint))
    (checkpoint / "offsets" / "0").write_text("v1")
    assert checkpoint_started(f"file://{checkpoint}")
    assert place_ends(str(checkpoint), started=True) == DEFAULT_STORE_DIR
    (checkpoint / "kinesis-ends" / "queries").mkdir(parents=True)
    (checkpoint / "kinesis-ends" / "queries" / "q").write_text("host")
    assert place_ends(str(checkpoint), started=True) == str(checkpoint / "kinesis-ends")
    clear_ends()
