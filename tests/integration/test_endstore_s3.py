"""The S3 end store on moto's S3 server (no Spark): create-if-absent, markers, options."""

from __future__ import annotations

import pickle
import subprocess
import sys
import threading
import uuid

import pytest
from botocore.exceptions import ClientError

from kinesis_dstream.aws import AWSCredentials, ClientSpec
from kinesis_dstream.local import LocalAWS
from kinesis_dstream.retrieval.streams import ensure_stream
from kinesis_dstream.sql.config.options import OptionError, SourceOptions
from kinesis_dstream.sql.ends.opening import build_end_store
from kinesis_dstream.sql.ends.s3 import S3EndStore
from kinesis_dstream.sql.ends.store import DirectoryEndStore, EndStoreError
from kinesis_dstream.sql.offsets import MAX_END_BYTES, CorruptOffsetError, RangeEnd

from ..support.faults import CallErrors
from ..support.records import put_records
from .test_sql_runner import _all, reader_for, rows

BASE = {"streamName": "s", "region": "us-east-1"}


@pytest.fixture
def s3(local_aws, monkeypatch):
    """moto's S3 client; the options' S3 clients find moto through AWS_ENDPOINT_URL_S3."""
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", local_aws.endpoint_url)
    return local_aws.client("s3", max_pool_connections=20)


@pytest.fixture
def bucket(s3):
    name = f"ends-{uuid.uuid4().hex[:12]}"
    s3.create_bucket(Bucket=name)
    return name


def store_on(aws, bucket, prefix="q/ends"):
    credentials = AWSCredentials(aws.access_key_id, aws.secret_access_key)
    return S3EndStore(
        bucket, prefix, ClientSpec("s3", aws.region_name, aws.endpoint_url, credentials)
    )


def end(n):
    return RangeEnd(n, {"seq": str(1000 + n), "sub": 0}, last={"seq": str(999 + n), "sub": 0})


def test_moto_refuses_a_second_if_none_match_put_with_412(s3, bucket):
    s3.put_object(Bucket=bucket, Key="k", Body=b"first", IfNoneMatch="*")
    with pytest.raises(ClientError) as info:
        s3.put_object(Bucket=bucket, Key="k", Body=b"second", IfNoneMatch="*")
    assert info.value.response["ResponseMetadata"]["HTTPStatusCode"] == 412
    assert info.value.response["Error"]["Code"] == "PreconditionFailed"
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"first"


def test_racing_writers_of_different_ends_all_get_the_one_winner(local_aws, bucket):
    store = store_on(local_aws, bucket)
    writers = 6
    for round_ in range(5):
        key = f"{round_:02d}" + uuid.uuid4().hex
        barrier = threading.Barrier(writers, timeout=30)
        results: dict = {}

        def write(i, key=key, barrier=barrier, results=results):
            barrier.wait()
            results[i] = store.put_if_absent(key, end(i + 1))

        threads = [threading.Thread(target=write, args=(i,)) for i in range(writers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        assert not any(t.is_alive() for t in threads)
        assert len(results) == writers
        winner = store.get(key)
        assert winner in [end(i + 1) for i in range(writers)]
        assert all(result == winner for result in results.values()), results


def test_get_put_delete_round_trip_in_batches(local_aws, s3, bucket, monkeypatch):
    store = store_on(local_aws, bucket, prefix="")
    assert store.get("ab" + "0" * 38) is None
    keys = [f"{i:02x}" + uuid.uuid4().hex for i in range(5)]
    for i, key in enumerate(keys):
        assert store.put_if_absent(key, end(i)) == end(i)
        assert store.put_if_absent(key, end(i + 100)) == end(i)  # the first write stays
    assert [store.get(k) for k in keys] == [end(i) for i in range(5)]
    listed = s3.list_objects_v2(Bucket=bucket)["Contents"]
    assert sorted(o["Key"] for o in listed) == sorted(f"{k[:2]}/{k}.json" for k in keys)
    monkeypatch.setattr("kinesis_dstream.sql.ends.s3.DELETE_BATCH", 2)
    deletes = CallErrors(store.client_spec.client(), "s3", "DeleteObjects", lambda n: None)
    try:
        store.delete([*keys[:4], "ff" + "0" * 38])  # a key never written is no error
    finally:
        deletes.remove()
    assert deletes.calls == 3
    assert [store.get(k) for k in keys] == [None] * 4 + [end(4)]


def test_a_conflicting_conditional_write_in_flight_is_retried(local_aws, bucket):
    store = store_on(local_aws, bucket)
    conflicts = CallErrors(
        store.client_spec.client(),
        "s3",
        "PutObject",
        lambda n: "ConditionalRequestConflict" if n < 2 else None,
    )
    try:
        assert store.put_if_absent("cd" + "1" * 38, end(3)) == end(3)
    finally:
        conflicts.remove()
    assert conflicts.injected == 2 and store.get("cd" + "1" * 38) == end(3)


def test_errors_name_bucket_key_and_operation(local_aws, s3):
    store = store_on(local_aws, "no-such-bucket-" + uuid.uuid4().hex[:8])
    with pytest.raises(EndStoreError) as info:
        store.mark("q1")
    message = str(info.value)
    assert store.bucket in message and "metadataPath" in message
    assert f"PutObject s3://{store.bucket}/q/ends/queries/q1" in message


@pytest.mark.parametrize(
    "body, what",
    [
        (b"null", "not an object"),
        (b'{"v": 1, "count": 2}', "'next':"),
        (b"\xff\xfe", "not UTF-8"),
        (b"[" * 2000, "nested 2000 deep"),
        (b" " * (MAX_END_BYTES + 10), f"at most {MAX_END_BYTES}"),
    ],
)
def test_a_corrupted_range_end_object_is_one_error_naming_its_key(
    local_aws, s3, bucket, body, what
):
    store = store_on(local_aws, bucket)
    key = "cd" + uuid.uuid4().hex
    store.put_if_absent(key, end(1))
    s3.put_object(Bucket=bucket, Key=f"q/ends/cd/{key}.json", Body=body)
    with pytest.raises(CorruptOffsetError) as info:
        store.get(key)
    message = str(info.value)
    assert message.startswith(f"end-store object s3://{bucket}/q/ends/cd/{key}.json: not a ")
    assert what in message, message


def test_a_server_that_ignores_if_none_match_is_refused_at_the_first_marker(local_aws, bucket):
    store = store_on(local_aws, bucket)
    events = store.client_spec.client().meta.events

    def drop_condition(request, **_):
        if "If-None-Match" in request.headers:
            del request.headers["If-None-Match"]

    events.register("before-sign.s3.PutObject", drop_condition)
    try:
        with pytest.raises(EndStoreError) as info:
            store.mark("q-ignored")
    finally:
        events.unregister("before-sign.s3.PutObject", drop_condition)
    assert "If-None-Match" in str(info.value) and "DYNAMODB" in str(info.value)


def test_markers_as_the_other_stores_keep_them(local_aws, bucket, tmp_path):
    store = store_on(local_aws, bucket)
    assert store.mark("q2") is False  # created here
    assert store.mark("q2") is True  # there already: another process, or a restart
    store.check_marker("q2")  # this process sees it
    directory = DirectoryEndStore(str(tmp_path))
    assert (directory.mark("q2"), directory.mark("q2")) == (False, True)


_CHECK_IN_CHILD = """
import pickle, sys
store, query = pickle.load(sys.stdin.buffer)
store.check_marker(query)
print("seen")
"""


def _check_in_child(store, query, endpoint, home="/nonexistent"):
    """``check_marker`` in a fresh process whose S3 endpoint and HOME come from its
    environment, as an executor's do."""
    env = {"PATH": "/usr/bin:/bin", "AWS_ENDPOINT_URL_S3": endpoint, "HOME": home}
    return subprocess.run(
        [sys.executable, "-c", _CHECK_IN_CHILD],
        input=pickle.dumps((store, query)),
        capture_output=True,
        timeout=120,
        env=env,
        cwd=str(__import__("pathlib").Path(__file__).resolve().parents[2]),
    )


def test_an_executor_that_cannot_see_the_drivers_marker_fails_naming_the_option(local_aws, bucket):
    """The driver's store is pickled into processes as Spark pickles it into tasks: the
    one reaching the driver's S3 sees the marker; the one reaching another S3 fails at
    once with one line that names the option to set."""
    driver = S3EndStore.from_url(
        f"s3://{bucket}/p",
        ClientSpec(
            "s3", local_aws.region_name, None, store_on(local_aws, bucket).client_spec.credentials
        ),
    )
    with pytest.MonkeyPatch.context() as env:
        env.setenv("AWS_ENDPOINT_URL_S3", local_aws.endpoint_url)
        assert driver.mark("q3") is False
    same = _check_in_child(driver, "q3", local_aws.endpoint_url)
    assert same.returncode == 0 and same.stdout.strip() == b"seen", same.stderr[-2000:]
    with LocalAWS() as other:  # another S3: the executor's environment differs
        other.client("s3").create_bucket(Bucket=bucket)
        other_endpoint = other.endpoint_url
        elsewhere = _check_in_child(driver, "q3", other_endpoint)
    assert elsewhere.returncode != 0
    last = elsewhere.stderr.decode().strip().splitlines()[-1]
    assert last.startswith("kinesis_dstream.sql.ends.store.EndStoreError: ")
    assert "'metadataPath'" in last and f"s3://{bucket}/p/queries/q3" in last
    assert other_endpoint in last


@pytest.mark.parametrize(
    "path, bucket, prefix",
    [
        ("s3://my-bucket/some/prefix/", "my-bucket", "some/prefix"),
        ("s3a://my-bucket/p", "my-bucket", "p"),
        ("S3A://my.bucket", "my.bucket", ""),
    ],
)
def test_s3_paths_pick_the_s3_store(path, bucket, prefix):
    for committer in ({}, {"metadataCommitterType": "HDFS"}):
        options = SourceOptions.parse({**BASE, **committer, "metadataPath": path})
        assert options.end_store.kind == "s3"
        store = build_end_store(options)
        assert isinstance(store, S3EndStore)
        assert (store.bucket, store.prefix) == (bucket, prefix)
        assert store.client_spec.service == "s3" and store.client_spec.endpoint_url is None
        assert store.client_spec.region_name == "us-east-1"


@pytest.mark.parametrize(
    "options, words",
    [
        (
            {"metadataPath": "hdfs://nn/x"},
            ["'metadataPath'", "'hdfs://nn/x'", "s3://bucket/prefix", "DYNAMODB"],
        ),
        ({"metadataPath": "gs://b/x"}, ["'gs://b/x'", "s3://bucket/prefix"]),
        ({"metadataPath": "s3://B_ad/x"}, ["'metadataPath'", "does not name an S3 bucket"]),
        ({"metadataPath": "s3:///x"}, ["does not name an S3 bucket"]),
        (
            {
                "metadataCommitterType": "DYNAMODB",
                "dynamodb.tableName": "t",
                "metadataPath": "s3://bb1/x",
            },
            ["'metadataPath' applies only to metadataCommitterType=HDFS"],
        ),
    ],
)
def test_other_metadata_paths_are_refused_saying_what_to_use(options, words):
    with pytest.raises(OptionError) as info:
        SourceOptions.parse({**BASE, **options})
    for word in words:
        assert word in str(info.value)


def test_records_arrive_once_and_a_lost_s3_store_fails_the_query(
    local_aws, kinesis, s3, bucket, unique_name, tmp_path
):
    ensure_stream(kinesis, unique_name, 2)
    put_records(kinesis, unique_name, 12)
    url = f"s3a://{bucket}/{unique_name}"
    reader = reader_for(local_aws, unique_name, tmp_path, metadataPath=url)
    assert isinstance(reader.store, S3EndStore)
    start = reader.initialOffset()
    end_ = reader.latestOffset(start, _all())
    first = rows(reader, start, end_)
    assert sorted(r[0] for r in first) == sorted(f"r{i}".encode() for i in range(12))
    assert rows(reader, start, end_) == first  # a replayed batch reads the recorded ranges
    listed = s3.list_objects_v2(Bucket=bucket, Prefix=unique_name)["Contents"]
    s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": o["Key"]} for o in listed]})
    restarted = reader_for(local_aws, unique_name, tmp_path, metadataPath=url)
    with pytest.raises(EndStoreError) as info:
        restarted.latestOffset(end_, _all())
    message = str(info.value)
    assert f"s3://{bucket}/{unique_name}" in message and "metadataPath" in message
    assert any(shard in message for shard in end_["shards"])


def test_the_default_directory_is_each_processs_home_so_another_home_fails_at_once(
    tmp_path, monkeypatch
):
    """No store option: the driver marks its own home; an executor with another HOME
    (another machine, or spark.executorEnv.HOME) fails naming the options to set."""
    driver_home, executor_home = tmp_path / "driver", tmp_path / "executor"
    monkeypatch.setenv("HOME", str(driver_home))
    store = build_end_store(SourceOptions.parse(BASE))
    assert isinstance(store, DirectoryEndStore) and store.path.startswith("~")
    assert store.mark("q4") is False
    assert (driver_home / ".kinesis_dstream" / "sql-ends" / "queries" / "q4").exists()
    same = _check_in_child(store, "q4", "http://127.0.0.1:9", home=str(driver_home))
    assert same.returncode == 0 and same.stdout.strip() == b"seen", same.stderr[-2000:]
    other = _check_in_child(store, "q4", "http://127.0.0.1:9", home=str(executor_home))
    assert other.returncode != 0
    last = other.stderr.decode().strip().splitlines()[-1]
    assert last.startswith("kinesis_dstream.sql.ends.store.EndStoreError: ")
    assert str(executor_home / ".kinesis_dstream" / "sql-ends") in last
    assert "'metadataPath'" in last and "metadataCommitterType=DYNAMODB" in last
    assert not executor_home.exists()  # the check writes nothing
