"""KinesisProducer against the real local server; faults injected with botocore hooks."""

import threading
from collections import Counter

import pytest

from kinesis_dstream import KinesisProducer, ProducerError
from kinesis_dstream.backoff import Backoff
from kinesis_dstream.demo.readback import read_all_records
from kinesis_dstream.kpl import deaggregate
from kinesis_dstream.producer import MAX_BYTES_PER_PUT, MAX_RECORD_BYTES
from kinesis_dstream.retrieval.streams import ensure_stream, list_shards, wait_active

from ..support.faults import CallCounter, PutRecordsFailures

FAST_RETRY = Backoff(initial_delay_s=0.001, max_delay_s=0.01, max_attempts=20, max_elapsed_s=30)


def stream_data(kinesis, stream):
    return Counter(r["Data"] for r in read_all_records(kinesis, stream))


def test_600_small_records_take_two_calls(kinesis, stream):
    calls = CallCounter(kinesis, "kinesis", "PutRecords")
    with KinesisProducer(stream, client=kinesis) as producer:
        for i in range(600):
            producer.put(f"r{i}", f"pk{i}")
    assert [len(r["Records"]) for r in calls.requests] == [500, 100]
    assert producer.records_written == 600
    assert stream_data(kinesis, stream) == Counter(f"r{i}".encode() for i in range(600))


def test_six_mib_of_records_are_split_by_size(kinesis, stream):
    calls = CallCounter(kinesis, "kinesis", "PutRecords")
    record = b"x" * (512 * 1024 - 16)
    with KinesisProducer(stream, client=kinesis) as producer:
        for i in range(12):
            producer.put(record, f"pk-{i:02d}")
    sizes = [
        sum(len(e["Data"]) + len(e["PartitionKey"]) for e in r["Records"]) for r in calls.requests
    ]
    assert len(calls.requests) == 2
    assert all(size <= MAX_BYTES_PER_PUT for size in sizes)
    assert sum(len(r["Records"]) for r in calls.requests) == 12
    assert sum(stream_data(kinesis, stream).values()) == 12


def test_oversize_record_is_refused_naming_its_size_and_the_limit(kinesis, stream):
    producer = KinesisProducer(stream, client=kinesis)
    data = b"x" * MAX_RECORD_BYTES  # plus a 2-byte key: one MiB + 2
    with pytest.raises(ValueError) as info:
        producer.put(data, "pk")
    assert str(MAX_RECORD_BYTES + 2) in str(info.value)
    assert str(MAX_RECORD_BYTES) in str(info.value)
    producer.put(b"x" * (MAX_RECORD_BYTES - 2), "pk")  # exactly at the limit is fine
    producer.flush()
    assert producer.records_written == 1


@pytest.mark.parametrize(
    "key, hash_key, match",
    [
        ("", None, "partition key"),
        ("k" * 257, None, "partition key"),
        ("pk", "-1", "explicit hash key"),
        ("pk", str(2**128), "explicit hash key"),
    ],
)
def test_bad_keys_are_refused_naming_the_field(kinesis, stream, key, hash_key, match):
    with pytest.raises(ValueError, match=match):
        KinesisProducer(stream, client=kinesis).put(b"d", key, hash_key)


def test_injected_per_record_failures_end_with_every_record_written_once(kinesis, stream):
    faults = PutRecordsFailures.fraction(kinesis, 0.3, seed=7)
    with KinesisProducer(stream, client=kinesis, put_backoff=FAST_RETRY) as producer:
        for i in range(1200):
            producer.put(f"r{i}", f"pk{i % 17}")
    faults.remove()
    assert faults.failed_entries > 200  # the fault really happened
    assert producer.records_retried == faults.failed_entries
    assert stream_data(kinesis, stream) == Counter(f"r{i}".encode() for i in range(1200))


def test_records_failing_past_the_budget_are_raised_with_counts_not_dropped(kinesis, stream):
    faults = PutRecordsFailures(kinesis, lambda i, entry: entry["Data"].startswith(b"bad"))
    producer = KinesisProducer(
        stream, client=kinesis, put_backoff=Backoff(0.001, 0.01, max_attempts=3, max_elapsed_s=5)
    )
    for i in range(10):
        producer.put(f"good{i}", "pk")
        producer.put(f"bad{i}", "pk")
    with pytest.raises(ProducerError) as info:
        producer.flush()
    faults.remove()
    error = info.value
    assert "10 of 20 records" in str(error) and stream in str(error)
    assert sorted(e["Data"] for e in error.failed) == sorted(f"bad{i}".encode() for i in range(10))
    assert error.error_codes == {"ProvisionedThroughputExceededException": 30}
    assert stream_data(kinesis, stream) == Counter(f"good{i}".encode() for i in range(10))


def test_a_missing_stream_raises_with_the_unsent_records(kinesis, unique_name):
    producer = KinesisProducer(unique_name, client=kinesis)
    producer.put(b"d", "pk")
    with pytest.raises(ProducerError, match=unique_name) as info:
        producer.flush()
    assert len(info.value.failed) == 1


def test_concurrent_puts_from_many_threads_all_arrive_once(kinesis, stream):
    producer = KinesisProducer(stream, client=kinesis)

    def put_many(thread):
        for i in range(700):
            producer.put(f"t{thread}-{i}", f"pk{i}")

    threads = [threading.Thread(target=put_many, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    producer.flush()
    expected = Counter(f"t{t}-{i}".encode() for t in range(4) for i in range(700))
    assert stream_data(kinesis, stream) == expected


def test_aggregate_true_delivers_every_user_record_once_on_its_own_shard(kinesis, unique_name):
    from kinesis_dstream.kpl import deaggregate
    from kinesis_dstream.retrieval.streams import ensure_stream, list_shards

    ensure_stream(kinesis, unique_name, 4)
    calls = CallCounter(kinesis, "kinesis", "PutRecords")
    with KinesisProducer(unique_name, client=kinesis, aggregate=True) as producer:
        for i in range(5000):
            producer.put(f"user-record-{i}".encode() * 3, f"key-{i % 211}")
    # 5,000 user records of ~50 bytes pack into a handful of 51,200-byte aggregates.
    outer_records = sum(len(r["Records"]) for r in calls.requests)
    assert outer_records < 50
    ranges = {
        s["ShardId"]: (s["HashKeyRange"]["StartingHashKey"], s["HashKeyRange"]["EndingHashKey"])
        for s in list_shards(kinesis, unique_name)
    }
    by_shard = {}
    for record in read_all_records(kinesis, unique_name):
        by_shard.setdefault(record["ShardId"], []).append(record)
    assert len(by_shard) == 4  # grouped by shard: every shard got its own aggregates
    delivered = Counter()
    for shard_id, records in by_shard.items():
        start, end = ranges[shard_id]
        for user in deaggregate(records, start, end, shard_id=shard_id):  # KCL range check on
            delivered[user.data] += 1
    assert delivered == Counter(f"user-record-{i}".encode() * 3 for i in range(5000))


ONE_TRY = Backoff(0.001, 0.01, max_attempts=1, max_elapsed_s=5)


def test_the_record_whose_put_raises_is_listed_in_the_error(kinesis, stream):
    faults = PutRecordsFailures(kinesis, lambda i, entry: entry["Data"].startswith(b"a"))
    producer = KinesisProducer(
        stream, client=kinesis, put_backoff=ONE_TRY, max_bytes_per_put=MAX_RECORD_BYTES
    )
    big = 600 * 1024
    producer.put(b"a" * big, "pk")  # buffered
    with pytest.raises(ProducerError) as info:
        producer.put(b"b" * big, "pk")  # no room: sends the first, which fails
    faults.remove()
    producer.flush()
    listed = [bytes(e["Data"][:1]) for e in info.value.failed]
    written = [r["Data"][:1] for r in read_all_records(kinesis, stream)]
    assert sorted(listed + written) == [b"a", b"b"]  # each once: written or listed


def test_a_send_failing_during_a_flush_lists_the_aggregates_not_yet_sent(kinesis, unique_name):
    ensure_stream(kinesis, unique_name, 4)
    faults = PutRecordsFailures(kinesis, lambda i, entry: faults.calls == 1)  # the first call
    producer = KinesisProducer(
        unique_name, client=kinesis, aggregate=True, put_backoff=ONE_TRY, max_records_per_put=1
    )
    for i in range(400):
        producer.put(f"user-{i}".encode(), f"key-{i}")
    with pytest.raises(ProducerError) as info:
        producer.flush()  # one aggregate a shard, one a call: the first call fails
    faults.remove()
    producer.flush()
    listed = [dict(e, SequenceNumber="1") for e in info.value.failed]
    accounted = Counter(u.data for u in deaggregate(listed))
    accounted.update(u.data for u in deaggregate(read_all_records(kinesis, unique_name)))
    assert accounted == Counter(f"user-{i}".encode() for i in range(400))  # each once


def test_an_exception_in_the_block_counts_the_user_records_left_in_open_aggregates(
    kinesis, stream, caplog
):
    producer = KinesisProducer(stream, client=kinesis, aggregate=True)
    with pytest.raises(RuntimeError), producer:
        for i in range(3):
            producer.put(f"user-{i}".encode(), f"key-{i}")
        raise RuntimeError("the caller's own failure")
    assert "with 0 records and 3 user records in open aggregates unsent" in caplog.text


@pytest.mark.kinesalite
def test_after_a_split_aggregates_a_stale_shard_map_misplaced_are_sent_again(
    kinesalite, unique_name, caplog
):
    kinesis = kinesalite.client("kinesis")
    ensure_stream(kinesis, unique_name, 1)
    producer = KinesisProducer(
        unique_name, client=kinesis, aggregate=True, shard_map_refresh_s=3600
    )
    producer.put(b"before", "k")
    producer.flush()  # the shard map is read now: one shard
    (parent,) = list_shards(kinesis, unique_name)
    middle = (int(parent["HashKeyRange"]["EndingHashKey"]) + 1) // 2
    kinesis.split_shard(
        StreamName=unique_name, ShardToSplit=parent["ShardId"], NewStartingHashKey=str(middle)
    )
    wait_active(kinesis, unique_name)
    sent = [f"user-{i}".encode() for i in range(200)]
    for i, data in enumerate(sent):
        producer.put(data, f"key-{i}")
    producer.flush()  # grouped by the stale map: one aggregate, which lands on one child
    assert producer.records_resent > 0 and "was resharded" in caplog.text
    # Read as the KCL reads: an aggregate holding another shard's records is dropped whole.
    delivered: Counter = Counter()
    records = read_all_records(kinesis, unique_name)
    for shard in list_shards(kinesis, unique_name):
        keys = shard["HashKeyRange"]
        mine = [r for r in records if r["ShardId"] == shard["ShardId"]]
        users = deaggregate(
            mine, keys["StartingHashKey"], keys["EndingHashKey"], drop_outside_shard=True
        )
        delivered.update(u.data for u in users)
    assert delivered == Counter([b"before", *sent])  # each once, under the KCL's rule
