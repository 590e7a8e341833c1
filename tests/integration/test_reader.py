"""ShardReader against moto's server; faults injected with botocore hooks."""

import os
import pickle
import random
import subprocess
import sys
import time
from datetime import datetime, timezone

import pytest

from kinesis_dstream import (
    MessageHandlerError,
    StreamNotFoundError,
    ThrottledError,
)
from kinesis_dstream.aws import ClientSpec
from kinesis_dstream.backoff import Backoff
from kinesis_dstream.retrieval.reader import ReaderConfig, ShardReader, StartPosition, esn_key
from kinesis_dstream.retrieval.streams import (
    ensure_stream,
    list_shard_ids,
    list_shards,
    wait_active,
)

from ..support.faults import CallCounter, CallErrors
from ..support.records import put_records

FAST = ReaderConfig(min_call_interval_s=0.0, backoff=Backoff(0.001, 0.01, max_attempts=50))


class FakeSleep:
    def __init__(self):
        self.sleeps = []

    def __call__(self, seconds):
        self.sleeps.append(seconds)


def fill(kinesis, stream, n, aggregate=False, prefix="r"):
    """``n`` records ``{prefix}{i}`` over seven partition keys."""
    put_records(
        kinesis, stream, n, data=prefix + "{i}", key=lambda i: f"pk{i % 7}", aggregate=aggregate
    )


def read_all(reader, page=10_000):
    records = []
    while True:
        batch = reader.read(max_records=page)
        records += batch.records
        if not batch.records:
            return records


def hash_range(shard):
    keys = shard["HashKeyRange"]
    return int(keys["StartingHashKey"]), int(keys["EndingHashKey"])


def shard(kinesis, stream):
    return list_shard_ids(kinesis, stream)[0]


def test_trim_horizon_reads_everything_in_order_following_next_iterator(kinesis, stream):
    fill(kinesis, stream, 2500)
    iterators = CallCounter(kinesis, "kinesis", "GetShardIterator")
    reader = ShardReader(
        kinesis, stream, shard(kinesis, stream), StartPosition.trim_horizon(), config=FAST
    )
    records = read_all(reader, page=1000)
    assert [r.data for r in records] == [f"r{i}".encode() for i in range(2500)]
    assert iterators.count == 1  # pages follow NextShardIterator
    assert all(r.shard_id and r.stream_name == stream for r in records)


def test_calls_are_paced_per_shard(kinesis, stream):
    fill(kinesis, stream, 50)
    reader = ShardReader(
        kinesis,
        stream,
        shard(kinesis, stream),
        StartPosition.trim_horizon(),
        config=ReaderConfig(min_call_interval_s=0.1),
    )
    calls = CallCounter(kinesis, "kinesis", "GetRecords")
    start = time.monotonic()
    for _ in range(5):
        reader.read(max_records=10)
    assert calls.count == 5
    assert time.monotonic() - start >= 0.4  # 5 calls, 4 intervals of 100 ms


def test_thirty_percent_throttled_still_delivers_every_record_once_in_order(kinesis, stream):
    fill(kinesis, stream, 3000)
    rng = random.Random(3)
    faults = CallErrors(
        kinesis,
        "kinesis",
        "GetRecords",
        lambda n: "ProvisionedThroughputExceededException" if rng.random() < 0.3 else None,
    )
    reader = ShardReader(
        kinesis, stream, shard(kinesis, stream), StartPosition.trim_horizon(), config=FAST
    )
    records = read_all(reader, page=200)
    faults.remove()
    assert faults.injected >= 5
    assert [r.data for r in records] == [f"r{i}".encode() for i in range(3000)]


def test_ten_throttles_in_a_row_back_off_with_growing_bounded_sleeps(kinesis, stream):
    fill(kinesis, stream, 10)
    faults = CallErrors(
        kinesis, "kinesis", "GetRecords", lambda n: "LimitExceededException" if n < 10 else None
    )
    sleep = FakeSleep()
    backoff = Backoff(initial_delay_s=0.1, max_delay_s=2.0, max_attempts=20)
    reader = ShardReader(
        kinesis,
        stream,
        shard(kinesis, stream),
        StartPosition.trim_horizon(),
        config=ReaderConfig(min_call_interval_s=0.0, backoff=backoff),
        sleep=sleep,
    )
    batch = reader.read()
    faults.remove()
    assert len(batch.records) == 10
    assert len(sleep.sleeps) == 10  # one sleep per throttle: no busy loop
    assert all(s <= backoff.ceiling_s(i) for i, s in enumerate(sleep.sleeps))
    assert sum(sleep.sleeps[5:]) > sum(sleep.sleeps[:5])  # later waits are longer


def test_throttling_past_the_budget_names_stream_shard_and_operation(kinesis, stream):
    faults = CallErrors(
        kinesis, "kinesis", "GetRecords", lambda n: "ProvisionedThroughputExceededException"
    )
    shard_id = shard(kinesis, stream)
    reader = ShardReader(
        kinesis,
        stream,
        shard_id,
        StartPosition.trim_horizon(),
        config=ReaderConfig(min_call_interval_s=0, backoff=Backoff(0.001, 0.01, max_attempts=3)),
    )
    with pytest.raises(Exception) as info:
        reader.read()
    faults.remove()
    assert (
        stream in str(info.value)
        and shard_id in str(info.value)
        and "GetRecords" in str(info.value)
    )
    assert faults.calls == 3


def test_expired_iterator_mid_shard_continues_without_loss_or_duplicate(kinesis, stream):
    fill(kinesis, stream, 1000)
    faults = CallErrors(
        kinesis,
        "kinesis",
        "GetRecords",
        lambda n: "ExpiredIteratorException" if n in (2, 5) else None,
    )
    iterators = CallCounter(kinesis, "kinesis", "GetShardIterator")
    reader = ShardReader(
        kinesis, stream, shard(kinesis, stream), StartPosition.trim_horizon(), config=FAST
    )
    records = read_all(reader, page=100)
    faults.remove()
    assert reader.transport.iterators_renewed == 2 and iterators.count == 3
    assert [r.data for r in records] == [f"r{i}".encode() for i in range(1000)]


def test_a_deleted_stream_is_a_clear_error_not_a_retry_loop(kinesis, stream):
    fill(kinesis, stream, 5)
    calls = CallCounter(kinesis, "kinesis", "GetRecords")
    reader = ShardReader(
        kinesis, stream, shard(kinesis, stream), StartPosition.trim_horizon(), config=FAST
    )
    reader.read()
    kinesis.delete_stream(StreamName=stream)
    before = calls.count
    with pytest.raises(StreamNotFoundError, match=stream):
        reader.read()
    assert calls.count - before <= 1


def test_at_timestamp_returns_exactly_the_records_after_it(kinesis, stream):
    fill(kinesis, stream, 20, prefix="before")
    time.sleep(1.1)
    cut = datetime.now(timezone.utc)
    time.sleep(1.1)
    fill(kinesis, stream, 20, prefix="after")
    reader = ShardReader(
        kinesis, stream, shard(kinesis, stream), StartPosition.at_timestamp(cut), config=FAST
    )
    assert [r.data for r in read_all(reader)] == [f"after{i}".encode() for i in range(20)]


def test_resume_after_a_checkpoint_inside_an_aggregate_starts_at_the_next_sub_record(
    kinesis, stream
):
    fill(kinesis, stream, 300, aggregate=True)
    shard_id = shard(kinesis, stream)
    everything = read_all(
        ShardReader(kinesis, stream, shard_id, StartPosition.trim_horizon(), config=FAST)
    )
    assert len({r.sequence_number for r in everything}) < 300  # really aggregated
    checkpoint = everything[150]
    assert checkpoint.sub_sequence_number > 0
    resumed = read_all(
        ShardReader(
            kinesis,
            stream,
            shard_id,
            StartPosition.after_checkpoint(
                checkpoint.sequence_number, checkpoint.sub_sequence_number
            ),
            config=FAST,
        )
    )
    assert resumed == everything[151:]


@pytest.mark.parametrize("first, last", [(0, 299), (37, 211), (150, 150)])
def test_range_reads_return_exactly_their_range_also_inside_aggregates(
    kinesis, stream, first, last
):
    fill(kinesis, stream, 300, aggregate=True)
    shard_id = shard(kinesis, stream)
    everything = read_all(
        ShardReader(kinesis, stream, shard_id, StartPosition.trim_horizon(), config=FAST)
    )
    start, end = everything[first], everything[last]
    reader = ShardReader(
        kinesis,
        stream,
        shard_id,
        StartPosition(
            "AT_SEQUENCE_NUMBER",
            start.sequence_number,
            drop_through=(int(start.sequence_number), start.sub_sequence_number - 1),
        ),
        config=FAST,
    )
    got = []
    while True:
        batch = reader.read(until=esn_key(end.sequence_number, end.sub_sequence_number))
        got += batch.records
        if not batch.records:
            break
    assert got == everything[first : last + 1]


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"iterator_type": "SOMEWHERE"}, "TRIM_HORIZON"),
        ({"iterator_type": "AT_SEQUENCE_NUMBER"}, "numeric"),
        ({"iterator_type": "AT_TIMESTAMP"}, "timestamp"),
    ],
)
def test_bad_start_positions_are_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        StartPosition(**kwargs)


@pytest.mark.kinesalite
def test_split_while_reading_parent_reports_children_and_nothing_is_lost(kinesalite, unique_name):
    kinesis = kinesalite.client("kinesis")
    ensure_stream(kinesis, unique_name, 1)
    (parent,) = list_shards(kinesis, unique_name)
    produced = [(f"before{i}", f"pk{i % 7}") for i in range(300)]
    fill(kinesis, unique_name, 300, prefix="before")
    reader = ShardReader(
        kinesis,
        unique_name,
        parent["ShardId"],
        StartPosition.trim_horizon(),
        config=FAST,
        hash_key_range=hash_range(parent),
    )
    records = reader.read(max_records=100).records  # part-way through the parent
    low, high = hash_range(parent)
    kinesis.split_shard(
        StreamName=unique_name,
        ShardToSplit=parent["ShardId"],
        NewStartingHashKey=str((low + high) // 2),
    )
    wait_active(kinesis, unique_name)
    fill(kinesis, unique_name, 300, prefix="after")
    produced += [(f"after{i}", f"pk{i % 7}") for i in range(300)]

    records += read_all(reader)
    assert reader.shard_ended
    children = [s for s in list_shards(kinesis, unique_name) if s["ShardId"] != parent["ShardId"]]
    assert sorted(reader.child_shard_ids) == sorted(s["ShardId"] for s in children)
    assert len(children) == 2
    for child in children:
        child_reader = ShardReader(
            kinesis,
            unique_name,
            child["ShardId"],
            StartPosition.trim_horizon(),
            config=FAST,
            hash_key_range=hash_range(child),
        )
        child_records = read_all(child_reader)
        assert not child_reader.shard_ended  # open children: caught up, not ended
        records += child_records

    assert sorted((r.data.decode(), r.partition_key) for r in records) == sorted(produced)
    for key in {pk for _, pk in produced}:  # parent then child: each key's order is kept
        expected = [data for data, pk in produced if pk == key]
        assert [r.data.decode() for r in records if r.partition_key == key] == expected


def test_spark_retry_settings_shape_the_backoff():
    config = ReaderConfig.from_spark_conf(
        {
            "spark.streaming.kinesis.retry.waitTime": "250ms",
            "spark.streaming.kinesis.retry.maxAttempts": "7",
        }
    )
    assert config.backoff.initial_delay_s == 0.25
    assert config.backoff.max_attempts == 7
    assert ReaderConfig.from_spark_conf(None).backoff == ReaderConfig().backoff
    assert ReaderConfig.from_spark_conf({}, min_call_interval_s=1.0).min_call_interval_s == 1.0
    slow = ReaderConfig.from_spark_conf({"spark.streaming.kinesis.retry.waitTime": "1min"})
    assert slow.backoff.initial_delay_s == slow.backoff.max_delay_s == 60.0


def test_spark_retry_settings_are_honoured_by_reads(kinesis, stream):
    fill(kinesis, stream, 5)
    faults = CallErrors(
        kinesis, "kinesis", "GetRecords", lambda n: "ProvisionedThroughputExceededException"
    )
    sleep = FakeSleep()
    config = ReaderConfig.from_spark_conf(
        {
            "spark.streaming.kinesis.retry.waitTime": "2s",
            "spark.streaming.kinesis.retry.maxAttempts": "4",
        }
    )
    reader = ShardReader(
        kinesis,
        stream,
        shard(kinesis, stream),
        StartPosition.trim_horizon(),
        config=config,
        sleep=sleep,
    )
    with pytest.raises(ThrottledError, match=stream):
        reader.read()
    faults.remove()
    assert faults.injected == 4
    assert len(sleep.sleeps) == 3  # 4 attempts, 3 waits
    assert all(0 <= s <= 2.0 * 2**n for n, s in enumerate(sleep.sleeps))


@pytest.mark.parametrize(
    "conf, match",
    [
        ({"spark.streaming.kinesis.retry.waitTime": "soon"}, "waitTime.*'soon'"),
        ({"spark.streaming.kinesis.retry.maxAttempts": "0"}, "maxAttempts.*>= 1"),
        ({"spark.streaming.kinesis.retry.maxAttempts": "x"}, "maxAttempts.*'x'"),
    ],
)
def test_bad_spark_retry_settings_name_the_key_and_value(conf, match):
    with pytest.raises(ValueError, match=match):
        ReaderConfig.from_spark_conf(conf)


_CONTINUE_IN_ANOTHER_PROCESS = """
import pickle, sys
reader = pickle.load(sys.stdin.buffer)
first = reader.client
records = []
while True:
    batch = reader.read(max_records=100)
    if not batch.records:
        break
    records += batch.records
assert reader.client is first is reader.transport.client_spec.client()  # one per process
print(",".join(r.data.decode() for r in records))
"""


def test_a_reader_pickles_mid_shard_and_continues_in_another_process(
    local_aws, kinesis, stream, monkeypatch
):
    fill(kinesis, stream, 300)
    for name, value in local_aws.env().items():  # credentials from the default chain
        monkeypatch.setenv(name, value)
    spec = ClientSpec("kinesis", local_aws.region_name, local_aws.endpoint_url)
    reader = ShardReader(
        spec, stream, shard(kinesis, stream), StartPosition.trim_horizon(), config=FAST
    )
    first = reader.read(max_records=120).records
    payload = pickle.dumps(reader)
    assert local_aws.secret_access_key.encode() not in payload
    env = {**os.environ, **local_aws.env(), "AWS_ENDPOINT_URL": "http://127.0.0.1:9"}
    done = subprocess.run(
        [sys.executable, "-c", _CONTINUE_IN_ANOTHER_PROCESS],
        input=payload,
        env=env,
        capture_output=True,
        timeout=120,
        check=True,
    )
    rest = done.stdout.decode().strip().split(",")
    assert [r.data.decode() for r in first] + rest == [f"r{i}" for i in range(300)]


def test_a_reader_on_a_live_client_refuses_to_pickle_with_a_reason(kinesis, stream):
    reader = ShardReader(kinesis, stream, shard(kinesis, stream), StartPosition.trim_horizon())
    with pytest.raises(TypeError, match="ClientSpec"):
        pickle.dumps(reader)


def test_the_message_handler_sees_whole_records_and_errors_name_the_record(kinesis, stream):
    fill(kinesis, stream, 20, aggregate=True)
    reader = ShardReader(
        kinesis,
        stream,
        shard(kinesis, stream),
        StartPosition.trim_horizon(),
        config=FAST,
        message_handler=lambda r: (r.partition_key, r.data.decode(), r.sub_sequence_number),
    )
    batch = reader.read()
    assert [data for _, data, _ in batch.records] == [f"r{i}" for i in range(20)]
    assert {pk for pk, _, _ in batch.records} == {f"pk{i}" for i in range(7)}
    assert batch.records[-1][2] > 0  # sub-sequence numbers reach the handler
    assert batch.first_esn < batch.last_esn == reader.last_delivered

    def picky(record):
        if record.data == b"r5":
            raise ValueError("no fives")
        return record.data

    failing = ShardReader(
        kinesis,
        stream,
        shard(kinesis, stream),
        StartPosition.trim_horizon(),
        config=FAST,
        message_handler=picky,
    )
    with pytest.raises(MessageHandlerError, match=rf"{stream}.*shardId-0+.*/5: ValueError"):
        failing.read()


def test_a_reader_with_a_live_client_refuses_to_be_pickled_and_says_why():
    from kinesis_dstream.retrieval.fanout import FanOutShardReader

    live = object()  # a boto3 client stands here: never sent to another process
    readers = [
        ShardReader(live, "s", "shardId-1", StartPosition.trim_horizon()),
        FanOutShardReader(live, "s", "shardId-1", StartPosition.trim_horizon(), consumer_arn="a"),
    ]
    for reader in readers:
        name = type(reader).__name__
        with pytest.raises(TypeError, match=f"{name} for s/shardId-1 holds a live"):
            pickle.dumps(reader)
