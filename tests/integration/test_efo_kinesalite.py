"""The enhanced fan-out front over kinesalite (``tests/npm/efo/``, the ``efo_kinesalite``
fixture): what it answers is read with botocore's own parsers (boto3's
``subscribe_to_shard``) and checked against the shapes the Kinesis API reference documents.
UpdateShardCount and the library's reader: ``test_efo_kinesalite_reshard.py``."""

from __future__ import annotations

import json
import time
import urllib.request

import pytest
from botocore.eventstream import EventStreamBuffer
from botocore.exceptions import ClientError, EventStreamError

from ..support.efo import (
    SHARD0,
    active_consumer,
    caught_up_with,
    consumer_status,
    ended,
    new_stream,
    open_shards,
    records_in,
    shard_events,
)
from ..support.npm_servers import EfoKinesalite
from ..support.records import put_records
from ..support.waiting import wait_until

pytestmark = pytest.mark.kinesalite


@pytest.fixture(scope="module")
def brisk():
    """A server of its own with short timings: 3 s subscriptions, a 1 s rule, 0.5 s
    heartbeats."""
    with EfoKinesalite(subscription_s=3.0, resubscribe_interval_s=1.0, heartbeat_s=0.5) as server:
        yield server


# -- the event stream --------------------------------------------------------------


def test_the_first_frame_is_the_initial_response_then_shard_events(
    efo_kinesalite, efo, unique_name
):
    consumer = active_consumer(efo, new_stream(efo, unique_name))
    request = urllib.request.Request(
        efo_kinesalite.endpoint_url,
        data=json.dumps(
            {"ConsumerARN": consumer, "ShardId": SHARD0, "StartingPosition": {"Type": "LATEST"}}
        ).encode(),
        headers={
            "Content-Type": "application/x-amz-json-1.1",
            "X-Amz-Target": "Kinesis_20131202.SubscribeToShard",
        },
    )
    frames = EventStreamBuffer()  # botocore's decoder: prelude, headers, CRCs checked
    messages: list = []
    with urllib.request.urlopen(request, timeout=20) as answer:
        assert answer.headers["Content-Type"] == "application/vnd.amazon.eventstream"
        while len(messages) < 2:
            frames.add_data(answer.read1(65536))
            messages += list(frames)
    first, second = (m.headers for m in messages[:2])
    assert first[":message-type"] == "event" and first[":event-type"] == "initial-response"
    assert second[":event-type"] == "SubscribeToShardEvent"
    assert second[":content-type"] == "application/json"


def test_records_arrive_with_their_fields_and_continuations_resume_exactly(efo, unique_name):
    stream_arn = new_stream(efo, unique_name)
    first, second, third = (active_consumer(efo, stream_arn, name) for name in ("c1", "c2", "c3"))
    # An idle shard's continuation: AFTER it, exactly the records put later.
    (idle,) = shard_events(efo, first, SHARD0, {"Type": "LATEST"}, lambda events: True)
    assert idle["Records"] == [] and idle["MillisBehindLatest"] == 0
    put_records(efo, unique_name, 20, data="a{i:02d}")
    iterator = efo.get_shard_iterator(
        StreamName=unique_name, ShardId=SHARD0, ShardIteratorType="TRIM_HORIZON"
    )["ShardIterator"]
    polled = efo.get_records(ShardIterator=iterator)["Records"]
    events = shard_events(
        efo,
        second,
        SHARD0,
        {"Type": "AFTER_SEQUENCE_NUMBER", "SequenceNumber": idle["ContinuationSequenceNumber"]},
        caught_up_with(20),
    )
    got = records_in(events)
    assert [
        (r["SequenceNumber"], r["Data"], r["PartitionKey"], r["ApproximateArrivalTimestamp"])
        for r in got
    ] == [
        (r["SequenceNumber"], r["Data"], r["PartitionKey"], r["ApproximateArrivalTimestamp"])
        for r in polled
    ]
    assert got[0]["ApproximateArrivalTimestamp"].tzinfo is not None
    assert events[-1]["ContinuationSequenceNumber"] == got[-1]["SequenceNumber"]
    # A continuation after records: AFTER it, exactly the records put since.
    put_records(efo, unique_name, 10, data="b{i:02d}")
    later = shard_events(
        efo,
        third,
        SHARD0,
        {
            "Type": "AFTER_SEQUENCE_NUMBER",
            "SequenceNumber": events[-1]["ContinuationSequenceNumber"],
        },
        caught_up_with(10),
    )
    assert [r["Data"] for r in records_in(later)] == [b"b%02d" % i for i in range(10)]


def test_millis_behind_latest_is_how_far_the_event_is_behind_the_newest_record(efo, unique_name):
    consumer = active_consumer(efo, new_stream(efo, unique_name))
    for batch in range(3):  # 18 records of 100 KiB: two events of at most 1 MiB of data
        put_records(efo, unique_name, 6, data=f"{batch}{{i}}" + "x" * 102_398)
    events = shard_events(efo, consumer, SHARD0, {"Type": "TRIM_HORIZON"}, caught_up_with(18))
    records = records_in(events)
    assert len(records) == 18 and len(events) >= 2
    newest = records[-1]["ApproximateArrivalTimestamp"]
    for event in events[:-1]:
        behind_ms = (newest - event["Records"][-1]["ApproximateArrivalTimestamp"]).total_seconds()
        assert abs(event["MillisBehindLatest"] - max(1, round(behind_ms * 1000))) <= 1
    assert events[-1]["MillisBehindLatest"] == 0


def test_every_starting_position(efo, unique_name):
    stream_arn = new_stream(efo, unique_name)
    put_records(efo, unique_name, 5)
    wait_until(lambda: time.time() > _newest_arrival(efo, unique_name) + 0.01, 5, "a later clock")
    put_records(efo, unique_name, 5, start=5)
    iterator = efo.get_shard_iterator(
        StreamName=unique_name, ShardId=SHARD0, ShardIteratorType="TRIM_HORIZON"
    )["ShardIterator"]
    polled = efo.get_records(ShardIterator=iterator)["Records"]
    seq3, at5 = polled[3]["SequenceNumber"], polled[5]["ApproximateArrivalTimestamp"]
    everything = [b"r%d" % i for i in range(10)]
    cases = {
        "TRIM_HORIZON": ({"Type": "TRIM_HORIZON"}, everything),
        "AT_SEQUENCE_NUMBER": (
            {"Type": "AT_SEQUENCE_NUMBER", "SequenceNumber": seq3},
            everything[3:],
        ),
        "AFTER_SEQUENCE_NUMBER": (
            {"Type": "AFTER_SEQUENCE_NUMBER", "SequenceNumber": seq3},
            everything[4:],
        ),
        "AT_TIMESTAMP": ({"Type": "AT_TIMESTAMP", "Timestamp": at5}, everything[5:]),
    }
    for name, (start, expected) in cases.items():
        consumer = active_consumer(efo, stream_arn, name)
        got = shard_events(efo, consumer, SHARD0, start, caught_up_with(len(expected)))
        assert [r["Data"] for r in records_in(got)] == expected, name
    latest = active_consumer(efo, stream_arn, "LATEST")
    stream = efo.subscribe_to_shard(
        ConsumerARN=latest, ShardId=SHARD0, StartingPosition={"Type": "LATEST"}
    )["EventStream"]
    try:
        events = iter(stream)
        assert next(events)["SubscribeToShardEvent"]["Records"] == []  # at once, at the tip
        put_records(efo, unique_name, 1, data="new")
        got = []
        while not got:
            got = next(events)["SubscribeToShardEvent"]["Records"]
        assert [r["Data"] for r in got] == [b"new"]
    finally:
        stream.close()


def _newest_arrival(client, stream):
    iterator = client.get_shard_iterator(
        StreamName=stream, ShardId=SHARD0, ShardIteratorType="TRIM_HORIZON"
    )["ShardIterator"]
    return client.get_records(ShardIterator=iterator)["Records"][-1][
        "ApproximateArrivalTimestamp"
    ].timestamp()


# -- shard ends ----------------------------------------------------------------------


def test_a_split_parent_ends_without_a_continuation_naming_both_children_and_so_does_a_merge(
    efo, unique_name
):
    consumer = active_consumer(efo, new_stream(efo, unique_name))
    put_records(efo, unique_name, 10, data="before-{i}")
    stream = efo.subscribe_to_shard(
        ConsumerARN=consumer, ShardId=SHARD0, StartingPosition={"Type": "TRIM_HORIZON"}
    )["EventStream"]
    try:
        events = [next(iter(stream))["SubscribeToShardEvent"]]  # live before the split
        efo.split_shard(StreamName=unique_name, ShardToSplit=SHARD0, NewStartingHashKey=str(2**127))
        wait_until(lambda: len(open_shards(efo, unique_name)) == 2, 10, "the split done")
        put_records(efo, unique_name, 10, data="after-{i}")  # to the children
        events += [item["SubscribeToShardEvent"] for item in stream]  # to the stream's end
    finally:
        stream.close()
    assert [r["Data"] for r in records_in(events)] == [b"before-%d" % i for i in range(10)]
    last = events[-1]
    assert "ContinuationSequenceNumber" not in last and last["Records"] == []
    assert all("ContinuationSequenceNumber" in e and "ChildShards" not in e for e in events[:-1])
    shards = {s["ShardId"]: s for s in efo.list_shards(StreamName=unique_name)["Shards"]}
    children = ["shardId-000000000001", "shardId-000000000002"]
    assert last["ChildShards"] == [
        {
            "ShardId": child,
            "ParentShards": [SHARD0],
            "HashKeyRange": shards[child]["HashKeyRange"],
        }
        for child in children
    ]
    assert "EndingSequenceNumber" in shards[SHARD0]["SequenceNumberRange"]  # closed, listed
    efo.merge_shards(
        StreamName=unique_name, ShardToMerge=children[0], AdjacentShardToMerge=children[1]
    )
    wait_until(lambda: len(open_shards(efo, unique_name)) == 1, 10, "the merge done")
    merged = {"ShardId": "shardId-000000000003", "ParentShards": children}
    got = []
    for parent in children:
        ends = shard_events(efo, consumer, parent, {"Type": "TRIM_HORIZON"}, lambda _: False)
        got += [r["Data"] for r in records_in(ends)]
        assert ended(ends)
        ((child,),) = [ends[-1]["ChildShards"]]
        assert {key: child[key] for key in merged} == merged
        assert child["HashKeyRange"] == {"StartingHashKey": "0", "EndingHashKey": str(2**128 - 1)}
    assert sorted(got) == sorted(b"after-%d" % i for i in range(10))


# -- the rules of a subscription -------------------------------------------------------


def test_a_subscription_within_the_interval_is_refused_then_one_takes_over(brisk, unique_name):
    client = brisk.client("kinesis", read_timeout_s=20)
    consumer = active_consumer(client, new_stream(client, unique_name))

    def subscribe():
        return client.subscribe_to_shard(
            ConsumerARN=consumer, ShardId=SHARD0, StartingPosition={"Type": "LATEST"}
        )["EventStream"]

    def refused():
        with pytest.raises(ClientError) as caught:
            subscribe()
        assert caught.value.response["Error"]["Code"] == "ResourceInUseException"
        assert consumer in str(caught.value)

    def after_the_interval():
        try:
            return subscribe()
        except ClientError as exc:
            assert exc.response["Error"]["Code"] == "ResourceInUseException"
            return None

    subscribe().close()
    refused()  # closed, it still counts: the rule runs from the last successful call
    first = wait_until(after_the_interval, 10, "a subscription after the interval")
    refused()  # open
    second = wait_until(after_the_interval, 10, "a takeover after the interval")
    with pytest.raises(EventStreamError) as taken:
        for _ in first:
            pass
    assert taken.value.response["Error"]["Code"] == "ResourceInUseException"
    second.close()


def test_a_subscription_ends_cleanly_after_its_lifetime_with_heartbeats(brisk, unique_name):
    client = brisk.client("kinesis", read_timeout_s=20)
    consumer = active_consumer(client, new_stream(client, unique_name))
    started = time.monotonic()
    events = shard_events(client, consumer, SHARD0, {"Type": "TRIM_HORIZON"}, lambda _: False)
    lasted = time.monotonic() - started
    assert lasted >= brisk.subscription_s  # ended by the server, without an exception frame
    assert len(events) >= 3 and all(e["Records"] == [] for e in events)  # 0.5 s heartbeats
    assert all("ContinuationSequenceNumber" in e for e in events)


def test_an_unknown_consumer_or_shard_is_refused_before_the_stream(efo, unique_name):
    consumer = active_consumer(efo, new_stream(efo, unique_name))
    start = {"Type": "LATEST"}
    for arn, shard in ((consumer + "x", SHARD0), (consumer, "shardId-000000000042")):
        with pytest.raises(ClientError) as caught:
            efo.subscribe_to_shard(ConsumerARN=arn, ShardId=shard, StartingPosition=start)
        assert caught.value.response["Error"]["Code"] == "ResourceNotFoundException"
        assert caught.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400


def test_consumer_lifecycle(efo, unique_name):
    stream_arn = new_stream(efo, unique_name)
    created = efo.register_stream_consumer(StreamARN=stream_arn, ConsumerName="one")["Consumer"]
    arn = created["ConsumerARN"]
    assert created["ConsumerStatus"] == "CREATING"
    assert arn.startswith(f"{stream_arn}/consumer/one:")
    assert arn.rsplit(":", 1)[1] == str(int(created["ConsumerCreationTimestamp"].timestamp()))
    with pytest.raises(ClientError, match="ResourceInUseException"):  # not ACTIVE yet
        efo.subscribe_to_shard(ConsumerARN=arn, ShardId=SHARD0, StartingPosition={"Type": "LATEST"})
    with pytest.raises(ClientError, match="ResourceInUseException"):  # the name is taken
        efo.register_stream_consumer(StreamARN=stream_arn, ConsumerName="one")
    wait_until(lambda: consumer_status(efo, arn) == "ACTIVE", 10, "consumer one ACTIVE")
    by_name = efo.describe_stream_consumer(StreamARN=stream_arn, ConsumerName="one")
    assert by_name["ConsumerDescription"]["ConsumerARN"] == arn
    assert by_name["ConsumerDescription"]["StreamARN"] == stream_arn
    two = active_consumer(efo, stream_arn, "two")
    page = efo.list_stream_consumers(StreamARN=stream_arn, MaxResults=1)
    rest = efo.list_stream_consumers(StreamARN=stream_arn, NextToken=page["NextToken"])
    assert [c["ConsumerARN"] for c in page["Consumers"] + rest["Consumers"]] == [arn, two]
    assert "NextToken" not in rest
    summary = efo.describe_stream_summary(StreamName=unique_name)["StreamDescriptionSummary"]
    assert summary["ConsumerCount"] == 2
    with pytest.raises(ClientError, match="ResourceInUseException"):  # consumers registered
        efo.delete_stream(StreamName=unique_name)
    live = efo.subscribe_to_shard(
        ConsumerARN=arn, ShardId=SHARD0, StartingPosition={"Type": "LATEST"}
    )["EventStream"]
    efo.deregister_stream_consumer(ConsumerARN=arn)
    with pytest.raises(EventStreamError) as ended:
        for _ in live:
            pass
    assert ended.value.response["Error"]["Code"] == "ResourceNotFoundException"
    assert consumer_status(efo, arn) == "DELETING"

    def gone():
        try:
            consumer_status(efo, arn)
        except ClientError as exc:
            return exc.response["Error"]["Code"] == "ResourceNotFoundException"
        return False

    wait_until(gone, 10, "consumer one gone")
    efo.deregister_stream_consumer(StreamARN=stream_arn, ConsumerName="two")
    listed = efo.list_stream_consumers(StreamARN=stream_arn)["Consumers"]
    assert [(c["ConsumerName"], c["ConsumerStatus"]) for c in listed] == [("two", "DELETING")]
