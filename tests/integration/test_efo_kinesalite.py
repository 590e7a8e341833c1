"""The enhanced fan-out front over kinesalite (``tests/npm/efo/``, the ``efo_kinesalite``
fixture): what it answers is read with botocore's own parsers (boto3's
``subscribe_to_shard``) and checked against the shapes the Kinesis API reference documents;
then the library's FanOutShardReader reads across a split on it."""

from __future__ import annotations

import json
import time
import urllib.request

import pytest
from botocore.eventstream import EventStreamBuffer
from botocore.exceptions import ClientError, EventStreamError

from kinesis_dstream.retrieval.fanout import FanOutConfig, FanOutShardReader
from kinesis_dstream.retrieval.reader import StartPosition
from kinesis_dstream.retrieval.streams import ensure_stream

from ..support.npm_servers import EfoKinesalite
from ..support.waiting import wait_until

pytestmark = pytest.mark.kinesalite

SHARD0 = "shardId-000000000000"
HASH_SPACE = 2**128


@pytest.fixture
def efo(efo_kinesalite):
    """A client with botocore's own parsers throughout (no fast GetRecords decoder)."""
    return efo_kinesalite.client("kinesis", fast_get_records=False, read_timeout_s=20)


@pytest.fixture(scope="module")
def brisk():
    """A server of its own with short timings: 3 s subscriptions, a 1 s rule, 0.5 s
    heartbeats."""
    with EfoKinesalite(subscription_s=3.0, resubscribe_interval_s=1.0, heartbeat_s=0.5) as server:
        yield server


def _stream(client, name, shards=1):
    ensure_stream(client, name, shards)
    return client.describe_stream_summary(StreamName=name)["StreamDescriptionSummary"]["StreamARN"]


def _status(client, consumer):
    return client.describe_stream_consumer(ConsumerARN=consumer)["ConsumerDescription"][
        "ConsumerStatus"
    ]


def _consumer(client, stream_arn, name="c"):
    arn = client.register_stream_consumer(StreamARN=stream_arn, ConsumerName=name)["Consumer"][
        "ConsumerARN"
    ]
    wait_until(lambda: _status(client, arn) == "ACTIVE", 10, f"consumer {name} ACTIVE")
    return arn


def _put(client, stream, payloads, key="k"):
    entries = [{"Data": data, "PartitionKey": f"{key}{i}"} for i, data in enumerate(payloads)]
    for start in range(0, len(entries), 100):
        answer = client.put_records(StreamName=stream, Records=entries[start : start + 100])
        assert answer["FailedRecordCount"] == 0


def _events(client, consumer, shard, start, stop):
    """SubscribeToShardEvents until ``stop(events)`` or the stream's end; closed after."""
    stream = client.subscribe_to_shard(ConsumerARN=consumer, ShardId=shard, StartingPosition=start)[
        "EventStream"
    ]
    events = []
    try:
        for item in stream:
            events.append(item["SubscribeToShardEvent"])
            if stop(events):
                break
    finally:
        stream.close()
    return events


def _records(events):
    return [record for event in events for record in event["Records"]]


def _ended(events):
    return "ContinuationSequenceNumber" not in events[-1]


def _caught_up_with(count):
    """Stop once ``count`` records came and an event said it was caught up."""
    return lambda events: len(_records(events)) >= count and events[-1]["MillisBehindLatest"] == 0


# -- the event stream --------------------------------------------------------------


def test_the_first_frame_is_the_initial_response_then_shard_events(
    efo_kinesalite, efo, unique_name
):
    consumer = _consumer(efo, _stream(efo, unique_name))
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
    stream_arn = _stream(efo, unique_name)
    first, second, third = (_consumer(efo, stream_arn, name) for name in ("c1", "c2", "c3"))
    # An idle shard's continuation: AFTER it, exactly the records put later.
    (idle,) = _events(efo, first, SHARD0, {"Type": "LATEST"}, lambda events: True)
    assert idle["Records"] == [] and idle["MillisBehindLatest"] == 0
    _put(efo, unique_name, [b"a%02d" % i for i in range(20)])
    iterator = efo.get_shard_iterator(
        StreamName=unique_name, ShardId=SHARD0, ShardIteratorType="TRIM_HORIZON"
    )["ShardIterator"]
    polled = efo.get_records(ShardIterator=iterator)["Records"]
    events = _events(
        efo,
        second,
        SHARD0,
        {"Type": "AFTER_SEQUENCE_NUMBER", "SequenceNumber": idle["ContinuationSequenceNumber"]},
        _caught_up_with(20),
    )
    got = _records(events)
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
    _put(efo, unique_name, [b"b%02d" % i for i in range(10)])
    later = _events(
        efo,
        third,
        SHARD0,
        {
            "Type": "AFTER_SEQUENCE_NUMBER",
            "SequenceNumber": events[-1]["ContinuationSequenceNumber"],
        },
        _caught_up_with(10),
    )
    assert [r["Data"] for r in _records(later)] == [b"b%02d" % i for i in range(10)]


def test_millis_behind_latest_is_how_far_the_event_is_behind_the_newest_record(efo, unique_name):
    consumer = _consumer(efo, _stream(efo, unique_name))
    for batch in range(3):  # 18 records of 100 KiB: two events of at most 1 MiB of data
        _put(efo, unique_name, [b"%d%d" % (batch, i) + b"x" * 102_398 for i in range(6)])
    events = _events(efo, consumer, SHARD0, {"Type": "TRIM_HORIZON"}, _caught_up_with(18))
    records = _records(events)
    assert len(records) == 18 and len(events) >= 2
    newest = records[-1]["ApproximateArrivalTimestamp"]
    for event in events[:-1]:
        behind_ms = (newest - event["Records"][-1]["ApproximateArrivalTimestamp"]).total_seconds()
        assert abs(event["MillisBehindLatest"] - max(1, round(behind_ms * 1000))) <= 1
    assert events[-1]["MillisBehindLatest"] == 0


def test_every_starting_position(efo, unique_name):
    stream_arn = _stream(efo, unique_name)
    _put(efo, unique_name, [b"r%d" % i for i in range(5)])
    wait_until(lambda: time.time() > _newest_arrival(efo, unique_name) + 0.01, 5, "a later clock")
    _put(efo, unique_name, [b"r%d" % i for i in range(5, 10)])
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
        consumer = _consumer(efo, stream_arn, name)
        got = _events(efo, consumer, SHARD0, start, _caught_up_with(len(expected)))
        assert [r["Data"] for r in _records(got)] == expected, name
    latest = _consumer(efo, stream_arn, "LATEST")
    stream = efo.subscribe_to_shard(
        ConsumerARN=latest, ShardId=SHARD0, StartingPosition={"Type": "LATEST"}
    )["EventStream"]
    try:
        events = iter(stream)
        assert next(events)["SubscribeToShardEvent"]["Records"] == []  # at once, at the tip
        _put(efo, unique_name, [b"new"])
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
    consumer = _consumer(efo, _stream(efo, unique_name))
    _put(efo, unique_name, [b"before-%d" % i for i in range(10)])
    stream = efo.subscribe_to_shard(
        ConsumerARN=consumer, ShardId=SHARD0, StartingPosition={"Type": "TRIM_HORIZON"}
    )["EventStream"]
    try:
        events = [next(iter(stream))["SubscribeToShardEvent"]]  # live before the split
        efo.split_shard(StreamName=unique_name, ShardToSplit=SHARD0, NewStartingHashKey=str(2**127))
        wait_until(lambda: len(_open_shards(efo, unique_name)) == 2, 10, "the split done")
        _put(efo, unique_name, [b"after-%d" % i for i in range(10)])  # to the children
        events += [item["SubscribeToShardEvent"] for item in stream]  # to the stream's end
    finally:
        stream.close()
    assert [r["Data"] for r in _records(events)] == [b"before-%d" % i for i in range(10)]
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
    wait_until(lambda: len(_open_shards(efo, unique_name)) == 1, 10, "the merge done")
    merged = {"ShardId": "shardId-000000000003", "ParentShards": children}
    got = []
    for parent in children:
        ends = _events(efo, consumer, parent, {"Type": "TRIM_HORIZON"}, lambda _: False)
        got += [r["Data"] for r in _records(ends)]
        assert _ended(ends)
        ((child,),) = [ends[-1]["ChildShards"]]
        assert {key: child[key] for key in merged} == merged
        assert child["HashKeyRange"] == {"StartingHashKey": "0", "EndingHashKey": str(2**128 - 1)}
    assert sorted(got) == sorted(b"after-%d" % i for i in range(10))


def _open_shards(client, stream):
    return [
        s
        for s in client.list_shards(StreamName=stream)["Shards"]
        if "EndingSequenceNumber" not in s["SequenceNumberRange"]
    ]


# -- the rules of a subscription -------------------------------------------------------


def test_a_subscription_within_the_interval_is_refused_then_one_takes_over(brisk, unique_name):
    client = brisk.client("kinesis", read_timeout_s=20)
    consumer = _consumer(client, _stream(client, unique_name))

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
    consumer = _consumer(client, _stream(client, unique_name))
    started = time.monotonic()
    events = _events(client, consumer, SHARD0, {"Type": "TRIM_HORIZON"}, lambda _: False)
    lasted = time.monotonic() - started
    assert lasted >= brisk.subscription_s  # ended by the server, without an exception frame
    assert len(events) >= 3 and all(e["Records"] == [] for e in events)  # 0.5 s heartbeats
    assert all("ContinuationSequenceNumber" in e for e in events)


def test_an_unknown_consumer_or_shard_is_refused_before_the_stream(efo, unique_name):
    consumer = _consumer(efo, _stream(efo, unique_name))
    start = {"Type": "LATEST"}
    for arn, shard in ((consumer + "x", SHARD0), (consumer, "shardId-000000000042")):
        with pytest.raises(ClientError) as caught:
            efo.subscribe_to_shard(ConsumerARN=arn, ShardId=shard, StartingPosition=start)
        assert caught.value.response["Error"]["Code"] == "ResourceNotFoundException"
        assert caught.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400


def test_consumer_lifecycle(efo, unique_name):
    stream_arn = _stream(efo, unique_name)
    created = efo.register_stream_consumer(StreamARN=stream_arn, ConsumerName="one")["Consumer"]
    arn = created["ConsumerARN"]
    assert created["ConsumerStatus"] == "CREATING"
    assert arn.startswith(f"{stream_arn}/consumer/one:")
    assert arn.rsplit(":", 1)[1] == str(int(created["ConsumerCreationTimestamp"].timestamp()))
    with pytest.raises(ClientError, match="ResourceInUseException"):  # not ACTIVE yet
        efo.subscribe_to_shard(ConsumerARN=arn, ShardId=SHARD0, StartingPosition={"Type": "LATEST"})
    with pytest.raises(ClientError, match="ResourceInUseException"):  # the name is taken
        efo.register_stream_consumer(StreamARN=stream_arn, ConsumerName="one")
    wait_until(lambda: _status(efo, arn) == "ACTIVE", 10, "consumer one ACTIVE")
    by_name = efo.describe_stream_consumer(StreamARN=stream_arn, ConsumerName="one")
    assert by_name["ConsumerDescription"]["ConsumerARN"] == arn
    assert by_name["ConsumerDescription"]["StreamARN"] == stream_arn
    two = _consumer(efo, stream_arn, "two")
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
    assert _status(efo, arn) == "DELETING"

    def gone():
        try:
            _status(efo, arn)
        except ClientError as exc:
            return exc.response["Error"]["Code"] == "ResourceNotFoundException"
        return False

    wait_until(gone, 10, "consumer one gone")
    efo.deregister_stream_consumer(StreamARN=stream_arn, ConsumerName="two")
    listed = efo.list_stream_consumers(StreamARN=stream_arn)["Consumers"]
    assert [(c["ConsumerName"], c["ConsumerStatus"]) for c in listed] == [("two", "DELETING")]


# -- UpdateShardCount as splits and merges ---------------------------------------------


def _summary(client, stream):
    return client.describe_stream_summary(StreamName=stream)["StreamDescriptionSummary"]


def _scale(client, stream, target, put_during):
    """UpdateShardCount to ``target``; ``put_during()`` while the stream is UPDATING; the
    answer's CurrentShardCount."""
    answer = client.update_shard_count(
        StreamName=stream, TargetShardCount=target, ScalingType="UNIFORM_SCALING"
    )
    assert answer["TargetShardCount"] == target and answer["StreamName"] == stream
    assert answer["StreamARN"] == _summary(client, stream)["StreamARN"]
    assert client.describe_stream(StreamName=stream)["StreamDescription"]["StreamStatus"] == (
        "UPDATING"
    )
    with pytest.raises(ClientError, match="ResourceInUseException"):  # one change at a time
        client.split_shard(StreamName=stream, ShardToSplit=SHARD0, NewStartingHashKey="42")
    during = 0
    while _summary(client, stream)["StreamStatus"] == "UPDATING":
        put_during(during)
        during += 1
        assert during < 1000, f"{stream} still UPDATING"
    assert during >= 1
    assert _summary(client, stream)["OpenShardCount"] == target
    return answer["CurrentShardCount"]


def _read_by_lineage(client, consumer, stream):
    """Every shard read once from TRIM_HORIZON, a child only after its parents ended and
    named it in ChildShards; the records' data in reading order."""
    shards = {s["ShardId"]: s for s in client.list_shards(StreamName=stream)["Shards"]}
    ready = [sid for sid, shard in shards.items() if "ParentShardId" not in shard]
    done: set = set()
    got = []
    while ready:
        shard_id = ready.pop(0)
        closed = "EndingSequenceNumber" in shards[shard_id]["SequenceNumberRange"]
        events = _events(
            client,
            consumer,
            shard_id,
            {"Type": "TRIM_HORIZON"},
            lambda events, closed=closed: not closed and events[-1]["MillisBehindLatest"] == 0,
        )
        assert _ended(events) == closed, shard_id
        got += [r["Data"] for r in _records(events)]
        done.add(shard_id)
        for child in events[-1].get("ChildShards", []) if closed else []:
            waiting = child["ShardId"] in ready or child["ShardId"] in done
            if not waiting and all(parent in done for parent in child["ParentShards"]):
                ready.append(child["ShardId"])
    assert done == set(shards)
    return got


def _uniform(open_shards, count):
    width = HASH_SPACE // count
    ranges = sorted(
        (int(s["HashKeyRange"]["StartingHashKey"]), int(s["HashKeyRange"]["EndingHashKey"]))
        for s in open_shards
    )
    assert len(ranges) == count and ranges[0][0] == 0 and ranges[-1][1] == HASH_SPACE - 1
    for (_, end), (start, _) in zip(ranges, ranges[1:]):
        assert start == end + 1
    return all(abs((end - start + 1) - width) <= HASH_SPACE >> 39 for start, end in ranges)


def test_update_shard_count_doubles_then_halves_with_parents_linked_and_nothing_lost(
    efo, unique_name
):
    stream_arn = _stream(efo, unique_name, 2)
    consumer = _consumer(efo, stream_arn)
    expected: list = []

    def put(tag, count=20):
        payloads = [b"%s-%02d" % (tag, i) for i in range(count)]
        _put(efo, unique_name, payloads, key=tag.decode())
        expected.extend(payloads)

    put(b"before")
    assert _scale(efo, unique_name, 4, lambda n: put(b"doubling%d" % n, 5)) == 2
    put(b"between")
    assert _scale(efo, unique_name, 2, lambda n: put(b"halving%d" % n, 5)) == 4
    put(b"after")
    shards = efo.list_shards(StreamName=unique_name)["Shards"]
    by_id = {s["ShardId"]: s for s in shards}
    born = [s for s in shards if s["ShardId"] not in (SHARD0, "shardId-000000000001")]
    assert born and all(s["ParentShardId"] in by_id for s in born)
    merged = [s for s in born if "AdjacentParentShardId" in s]
    assert len(merged) == 2 and all(s["AdjacentParentShardId"] in by_id for s in merged)
    assert _uniform(_open_shards(efo, unique_name), 2)
    got = _read_by_lineage(efo, consumer, unique_name)
    assert len(got) == len(expected) and sorted(got) == sorted(expected)  # each exactly once


def test_update_shard_count_to_any_count_between_half_and_double(efo, unique_name):
    _stream(efo, unique_name, 3)
    with pytest.raises(ClientError, match="LimitExceededException"):
        efo.update_shard_count(
            StreamName=unique_name, TargetShardCount=7, ScalingType="UNIFORM_SCALING"
        )
    for target in (5, 3):
        _scale(efo, unique_name, target, lambda n: None)
        assert _uniform(_open_shards(efo, unique_name), target)
    shards = efo.list_shards(StreamName=unique_name)["Shards"]
    assert all("ParentShardId" in s for s in shards[3:])


# -- the library's reader ----------------------------------------------------------------


def test_the_fanout_reader_reads_a_parent_to_its_end_then_names_the_children(efo, unique_name):
    consumer = _consumer(efo, _stream(efo, unique_name))
    _put(efo, unique_name, [b"p%02d" % i for i in range(30)])
    fast = FanOutConfig(resubscribe_interval_s=0.0, retry_initial_delay_s=0.2)
    with FanOutShardReader(
        efo, unique_name, SHARD0, StartPosition.trim_horizon(), consumer_arn=consumer, fanout=fast
    ) as reader:
        got = [r.data for r in reader.read(max_records=10, max_calls=1).records]
        efo.split_shard(StreamName=unique_name, ShardToSplit=SHARD0, NewStartingHashKey=str(2**127))
        wait_until(lambda: len(_open_shards(efo, unique_name)) == 2, 10, "the split done")
        _put(efo, unique_name, [b"c%02d" % i for i in range(10)])  # to the children
        deadline = time.monotonic() + 30
        while not reader.shard_ended:
            assert time.monotonic() < deadline, "the parent did not end"
            chunk = reader.read(max_records=10, max_calls=1)
            got += [r.data for r in chunk.records]
    assert got == [b"p%02d" % i for i in range(30)]  # all of the parent, in order, once
    assert chunk.shard_ended and not chunk.records
    assert sorted(chunk.child_shard_ids) == ["shardId-000000000001", "shardId-000000000002"]
    assert reader.fan_out.subscriptions == 1
