"""What ministack implements faithfully, and where it differs from Kinesis.

These pin the findings written in docs/efo.md: a test here failing after a ministack
upgrade means the notes (and maybe a workaround in the EFO tests) need revisiting.
"""

from __future__ import annotations

import time

import pytest
from botocore.exceptions import ClientError

from kinesis_dstream.retrieval.streams import ensure_stream

SHARD0 = "shardId-000000000000"


def _arn(client, stream):
    return client.describe_stream_summary(StreamName=stream)["StreamDescriptionSummary"][
        "StreamARN"
    ]


def _consumer(client, stream, name="c"):
    return client.register_stream_consumer(StreamARN=_arn(client, stream), ConsumerName=name)[
        "Consumer"
    ]["ConsumerARN"]


def _events(client, consumer, start, count, shard=SHARD0):
    response = client.subscribe_to_shard(
        ConsumerARN=consumer, ShardId=shard, StartingPosition=start
    )
    stream = response["EventStream"]
    out = []
    try:
        for event in stream:
            out.append(event["SubscribeToShardEvent"])
            if len(out) >= count or out[-1].get("ChildShards"):
                break
    finally:
        stream.close()
    return out


def test_list_put_get_round_trip(mini, unique_name):
    ensure_stream(mini, unique_name, 2)
    shards = mini.list_shards(StreamName=unique_name)["Shards"]
    assert [s["ShardId"] for s in shards] == [SHARD0, "shardId-000000000001"]
    answer = mini.put_records(
        StreamName=unique_name,
        Records=[{"Data": b"r%d" % i, "PartitionKey": str(i)} for i in range(20)],
    )
    assert answer["FailedRecordCount"] == 0
    got = []
    for shard in shards:
        iterator = mini.get_shard_iterator(
            StreamName=unique_name, ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON"
        )["ShardIterator"]
        got += mini.get_records(ShardIterator=iterator)["Records"]
    assert sorted(r["Data"] for r in got) == sorted(b"r%d" % i for i in range(20))


def test_subscription_continuation_advances_with_data(mini, unique_name):
    ensure_stream(mini, unique_name, 1)
    consumer = _consumer(mini, unique_name)
    seqs = [
        mini.put_record(StreamName=unique_name, Data=b"x", PartitionKey="k")["SequenceNumber"]
        for _ in range(3)
    ]
    first = _events(mini, consumer, {"Type": "TRIM_HORIZON"}, 1)[0]
    assert [r["SequenceNumber"] for r in first["Records"]] == seqs
    assert first["ContinuationSequenceNumber"] == seqs[-1]
    assert first["MillisBehindLatest"] == 0  # ministack: always 0, even when behind
    time.sleep(5.1)  # one subscription per 5 s per shard and consumer
    again = _events(
        mini,
        consumer,
        {"Type": "AFTER_SEQUENCE_NUMBER", "SequenceNumber": seqs[0]},
        1,
    )[0]
    assert [r["SequenceNumber"] for r in again["Records"]] == seqs[1:]


def test_resubscribe_within_5s_is_resource_in_use_while_the_first_is_open(mini, unique_name):
    ensure_stream(mini, unique_name, 1)
    consumer = _consumer(mini, unique_name)
    first = mini.subscribe_to_shard(
        ConsumerARN=consumer, ShardId=SHARD0, StartingPosition={"Type": "LATEST"}
    )["EventStream"]
    try:
        next(iter(first))
        with pytest.raises(ClientError) as caught:
            mini.subscribe_to_shard(
                ConsumerARN=consumer, ShardId=SHARD0, StartingPosition={"Type": "LATEST"}
            )
        assert caught.value.response["Error"]["Code"] == "ResourceInUseException"
    finally:
        first.close()
    # Kinesis refuses any call within 5 s of a successful one; ministack frees the slot
    # when the first subscription's connection closes.
    deadline = time.monotonic() + 4.0
    while True:
        try:
            _events(mini, consumer, {"Type": "LATEST"}, 1)
            break
        except ClientError:
            assert time.monotonic() < deadline
            time.sleep(0.1)


def test_consumer_is_active_at_once_and_gone_after_deregister(mini, unique_name):
    ensure_stream(mini, unique_name, 1)
    arn = _arn(mini, unique_name)
    consumer = mini.register_stream_consumer(StreamARN=arn, ConsumerName="c")["Consumer"]
    # Kinesis answers CREATING and takes seconds; ministack is ACTIVE at once.
    assert consumer["ConsumerStatus"] == "ACTIVE"
    with pytest.raises(ClientError) as dup:
        mini.register_stream_consumer(StreamARN=arn, ConsumerName="c")
    assert dup.value.response["Error"]["Code"] == "ResourceInUseException"
    mini.deregister_stream_consumer(ConsumerARN=consumer["ConsumerARN"])
    # Kinesis shows DELETING for a while; ministack forgets the consumer at once.
    with pytest.raises(ClientError) as gone:
        mini.describe_stream_consumer(ConsumerARN=consumer["ConsumerARN"])
    assert gone.value.response["Error"]["Code"] == "ResourceNotFoundException"


def test_split_ends_a_live_subscription_with_child_shards(mini, unique_name):
    ensure_stream(mini, unique_name, 1)
    consumer = _consumer(mini, unique_name)
    response = mini.subscribe_to_shard(
        ConsumerARN=consumer, ShardId=SHARD0, StartingPosition={"Type": "TRIM_HORIZON"}
    )
    events = response["EventStream"]
    try:
        iterator = iter(events)
        next(iterator)  # subscribed
        mini.split_shard(
            StreamName=unique_name, ShardToSplit=SHARD0, NewStartingHashKey=str(2**127)
        )
        last = None
        for event in iterator:
            last = event["SubscribeToShardEvent"]
            if last.get("ChildShards"):
                break
    finally:
        events.close()
    assert last is not None
    assert sorted(c["ShardId"] for c in last["ChildShards"]) == [
        "shardId-000000000001",
        "shardId-000000000002",
    ]
    assert all(c["ParentShards"] == [SHARD0] for c in last["ChildShards"])
    # Kinesis omits ContinuationSequenceNumber on a shard's last event; ministack sends it.
    assert last.get("ContinuationSequenceNumber") is not None
    # Kinesis keeps a closed parent (readable, listed) for the retention period;
    # ministack deletes it with its records.
    listed = [s["ShardId"] for s in mini.list_shards(StreamName=unique_name)["Shards"]]
    assert SHARD0 not in listed


def test_sequence_numbers_have_no_leading_zeros_so_positions_round_trip(mini, unique_name):
    # Patched in the fixture (see ministack_server._BOOT): ministack pads them with zeros.
    ensure_stream(mini, unique_name, 1)
    seqs = [
        mini.put_record(StreamName=unique_name, Data=b"%d" % i, PartitionKey="k")["SequenceNumber"]
        for i in range(3)
    ]
    assert all(s == str(int(s)) for s in seqs)
    iterator = mini.get_shard_iterator(
        StreamName=unique_name,
        ShardId=SHARD0,
        ShardIteratorType="AT_SEQUENCE_NUMBER",
        StartingSequenceNumber=str(int(seqs[1])),
    )["ShardIterator"]
    assert [r["Data"] for r in mini.get_records(ShardIterator=iterator)["Records"]] == [b"1", b"2"]
