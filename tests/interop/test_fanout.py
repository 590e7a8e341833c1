"""The enhanced fan-out reader: pure event handling, then against ministack."""

from __future__ import annotations

import hashlib
import pickle
import time
from datetime import datetime, timezone

import pytest
from botocore.exceptions import ClientError, EventStreamError
from urllib3.exceptions import ProtocolError

from kinesis_dstream.aws import ClientSpec
from kinesis_dstream.errors import DependencyError, KinesisServiceError, StreamNotFoundError
from kinesis_dstream.kpl import RecordAggregator, ShardMap
from kinesis_dstream.retrieval.events import (
    SubscriptionPacer,
    parse_event,
)
from kinesis_dstream.retrieval.fanout import FanOutConfig, FanOutShardReader
from kinesis_dstream.retrieval.reader import ReaderConfig, StartPosition
from kinesis_dstream.retrieval.start import WHOLE_RECORD, consumed_through
from kinesis_dstream.retrieval.streams import ensure_stream

from ..support.ministack_server import MinistackServer

SHARD0 = "shardId-000000000000"
FAST = FanOutConfig(resubscribe_interval_s=0.0, retry_initial_delay_s=0.2)


# -- pure -------------------------------------------------------------------------


def _event(**fields):
    return {"SubscribeToShardEvent": {"Records": [], "MillisBehindLatest": 0, **fields}}


def test_an_event_with_a_continuation_does_not_end_the_shard():
    event = parse_event(_event(ContinuationSequenceNumber="42", MillisBehindLatest=7))
    assert (event.continuation, event.millis_behind_latest, event.shard_ended) == ("42", 7, False)


def test_the_last_event_has_no_continuation_and_names_the_children():
    children = [{"ShardId": "shardId-000000000001"}, {"ShardId": "shardId-000000000002"}]
    event = parse_event(_event(ChildShards=children))
    assert event.shard_ended
    assert event.children == ("shardId-000000000001", "shardId-000000000002")


def test_child_shards_with_a_continuation_end_the_shard_too():  # ministack's variant
    event = parse_event(_event(ContinuationSequenceNumber="9", ChildShards=[{"ShardId": "c"}]))
    assert event.shard_ended and event.children == ("c",)


def test_an_item_that_is_not_a_shard_event_is_rejected():
    with pytest.raises(ValueError, match="not a SubscribeToShardEvent"):
        parse_event({"Other": {}})


def test_starting_positions_follow_the_start():
    when = datetime(2026, 1, 1, tzinfo=timezone.utc)
    assert StartPosition.trim_horizon().starting_position() == {"Type": "TRIM_HORIZON"}
    assert StartPosition.latest().starting_position() == {"Type": "LATEST"}
    assert StartPosition.at_timestamp(when).starting_position() == {
        "Type": "AT_TIMESTAMP",
        "Timestamp": when,
    }
    assert StartPosition.after_sequence_number("5").starting_position() == {
        "Type": "AFTER_SEQUENCE_NUMBER",
        "SequenceNumber": "5",
    }
    # A checkpoint inside an aggregate restarts AT its record (sub-records dropped later).
    assert StartPosition.after_checkpoint("5", 3).starting_position() == {
        "Type": "AT_SEQUENCE_NUMBER",
        "SequenceNumber": "5",
    }
    # a subscription that ended resumes after its continuation number, by the same rule
    assert StartPosition.after_sequence_number("77").starting_position() == {
        "Type": "AFTER_SEQUENCE_NUMBER",
        "SequenceNumber": "77",
    }


def test_the_pacer_waits_out_five_seconds_after_a_successful_subscription():
    pacer = SubscriptionPacer()
    key = ("consumer-arn", SHARD0)
    assert pacer.wait_s(key, 5.0, now=100.0) == 0.0  # never subscribed
    pacer.subscribed(key, now=100.0)
    assert pacer.wait_s(key, 5.0, now=101.5) == pytest.approx(3.5)
    assert pacer.wait_s(("consumer-arn", "shardId-000000000001"), 5.0, now=101.5) == 0.0
    assert pacer.wait_s(key, 5.0, now=105.0) == 0.0


def test_a_new_reader_waits_for_the_previous_readers_five_seconds():
    slept: list = []
    now = [0.0]

    class Client:  # only what a subscribe call needs; the stream ends at once
        def subscribe_to_shard(self, **_):
            return {"EventStream": _Ended()}

    pacer = SubscriptionPacer()
    pacer.subscribed(("arn", SHARD0), now=0.0)  # the previous range's reader
    now[0] = 1.25
    reader = FanOutShardReader(
        Client(),
        "s",
        SHARD0,
        StartPosition.latest(),
        consumer_arn="arn",
        fanout=FanOutConfig(subscribe_max_retries=0),
        clock=lambda: now[0],
        sleep=slept.append,
        pacer=pacer,
    )
    with pytest.raises(DependencyError, match="ended without an event"):
        reader.read(max_records=1)
    assert slept == [pytest.approx(3.75)]


class _Ended:
    def __iter__(self):
        return iter(())

    def close(self):
        pass


def test_an_event_is_consumed_through_its_last_raw_record():
    assert consumed_through(10, (10, 4)) == (10, 4)
    assert consumed_through(10, (9, 0)) == (10, WHOLE_RECORD)
    assert consumed_through(10, None) == (10, WHOLE_RECORD)


def test_fanout_config_maps_awslabs_meanings_onto_the_backoff():
    config = FanOutConfig(subscribe_timeout_s=10, subscribe_max_retries=3)
    assert config.backoff.max_attempts == 4 and config.backoff.max_elapsed_s == 10
    with pytest.raises(ValueError, match="subscribe_timeout_s"):
        FanOutConfig(subscribe_timeout_s=0)
    with pytest.raises(ValueError, match="subscribe_max_retries"):
        FanOutConfig(subscribe_max_retries=-1)


# -- against ministack ------------------------------------------------------------


def _consumer(client, stream, name="efo"):
    arn = client.describe_stream_summary(StreamName=stream)["StreamDescriptionSummary"]["StreamARN"]
    return client.register_stream_consumer(StreamARN=arn, ConsumerName=name)["Consumer"][
        "ConsumerARN"
    ]


def _put(client, stream, payloads, aggregate_every=0):
    """Put ``payloads``; every ``aggregate_every``-th group of 10 goes as KPL aggregates."""
    shards = client.list_shards(StreamName=stream)["Shards"]
    entries = []
    for start in range(0, len(payloads), 10):
        group = payloads[start : start + 10]
        if aggregate_every and (start // 10) % aggregate_every == 0:
            aggregator = RecordAggregator(shard_map=ShardMap.from_list_shards(shards))
            for data in group:
                entries += aggregator.add(data, data.decode())
            entries += aggregator.flush()
        else:
            entries += [{"Data": data, "PartitionKey": data.decode()} for data in group]
    for start in range(0, len(entries), 500):
        answer = client.put_records(StreamName=stream, Records=entries[start : start + 500])
        assert answer["FailedRecordCount"] == 0


def _drain(reader, max_records):
    """Read as a range does: until a short read that is caught up, or shard end."""
    got = []
    while not reader.shard_ended:
        chunk = reader.read(max_records=max_records, max_calls=1)
        got += chunk.records
        if len(chunk.records) < max_records and not chunk.millis_behind_latest:
            break
    return got


def test_ten_thousand_records_over_four_shards_arrive_exactly_once(mini, unique_name):
    ensure_stream(mini, unique_name, 4)
    consumer = _consumer(mini, unique_name)
    payloads = [b"r%05d" % i for i in range(10_000)]
    _put(mini, unique_name, payloads, aggregate_every=2)  # half of them in aggregates
    got = []
    for shard in mini.list_shards(StreamName=unique_name)["Shards"]:
        hash_range = shard["HashKeyRange"]
        with FanOutShardReader(
            mini,
            unique_name,
            shard["ShardId"],
            StartPosition.trim_horizon(),
            consumer_arn=consumer,
            hash_key_range=(hash_range["StartingHashKey"], hash_range["EndingHashKey"]),
            fanout=FAST,
        ) as reader:
            records = _drain(reader, max_records=777)  # reads stop inside aggregates
        keys = [(int(r.sequence_number), r.sub_sequence_number) for r in records]
        assert keys == sorted(keys) and len(set(keys)) == len(keys)
        assert reader.fan_out.subscriptions == 1
        got += [r.data for r in records]
    assert len(got) == len(payloads)
    assert sorted(got) == payloads
    assert reader.stats.aggregates > 0


class _ShortSubscriptions:
    """End every subscription after ``events`` events, as the 5-minute end does."""

    def __init__(self, client, events):
        self.events = events
        self.cut = 0
        client.meta.events.register("after-call.kinesis.SubscribeToShard", self._shorten)

    def _shorten(self, parsed, **_):
        if "EventStream" in parsed:
            parsed["EventStream"] = _Short(parsed["EventStream"], self)


class _Short:
    def __init__(self, stream, owner):
        self._stream, self._owner = stream, owner

    def __iter__(self):
        for count, event in enumerate(self._stream, 1):
            yield event
            if count >= self._owner.events:
                self._owner.cut += 1
                self._stream.close()
                return

    def close(self):
        self._stream.close()


def test_a_subscription_that_ends_mid_range_resumes_from_its_continuation(mini, unique_name):
    ensure_stream(mini, unique_name, 1)
    consumer = _consumer(mini, unique_name)
    cuts = _ShortSubscriptions(mini, events=1)
    reader = FanOutShardReader(
        mini, unique_name, SHARD0, StartPosition.trim_horizon(), consumer_arn=consumer, fanout=FAST
    )
    expected, got = [], []
    with reader:
        for wave in range(6):  # each wave arrives in a new subscription's first event
            payloads = [b"w%d-%03d" % (wave, i) for i in range(40)]
            _put(mini, unique_name, payloads, aggregate_every=2)
            expected += payloads
            while len(got) < len(expected):
                chunk = reader.read(max_records=7, max_calls=1)  # stops mid-aggregate
                got += [r.data for r in chunk.records]
    assert got == expected  # nothing lost, nothing repeated, in order
    # Every wave after the first came through a new subscription from a continuation.
    assert cuts.cut >= 5 and reader.fan_out.subscription_ends >= 5
    assert reader.fan_out.subscriptions == reader.fan_out.subscription_ends + 1


def test_resource_in_use_on_resubscribe_is_retried_and_counted(mini, unique_name):
    ensure_stream(mini, unique_name, 1)
    consumer = _consumer(mini, unique_name)
    _put(mini, unique_name, [b"a", b"b", b"c"])
    # Another subscription holds the shard: Kinesis refuses a second one for 5 s.
    rival = mini.subscribe_to_shard(
        ConsumerARN=consumer, ShardId=SHARD0, StartingPosition={"Type": "LATEST"}
    )["EventStream"]
    try:
        next(iter(rival))
        with FanOutShardReader(
            mini,
            unique_name,
            SHARD0,
            StartPosition.trim_horizon(),
            consumer_arn=consumer,
            fanout=FanOutConfig(retry_initial_delay_s=0.5, retry_max_delay_s=2.0),
            # No jitter: waits of 0.5, 1, 2, 2... s outlast the 5 s refusal in 5 attempts of
            # 11 (with full jitter, 11 attempts could all fall inside it, about one run in
            # a hundred).
            jitter=lambda: 1.0,
        ) as reader:
            chunk = reader.read(max_records=10, max_calls=1)
    finally:
        rival.close()
    assert [r.data for r in chunk.records] == [b"a", b"b", b"c"]
    assert reader.fan_out.subscribe_retries >= 1


def test_resource_in_use_past_the_retry_bound_is_a_clear_error(mini, unique_name):
    ensure_stream(mini, unique_name, 1)
    consumer = _consumer(mini, unique_name)
    rival = mini.subscribe_to_shard(
        ConsumerARN=consumer, ShardId=SHARD0, StartingPosition={"Type": "LATEST"}
    )["EventStream"]
    try:
        next(iter(rival))
        reader = FanOutShardReader(
            mini,
            unique_name,
            SHARD0,
            StartPosition.trim_horizon(),
            consumer_arn=consumer,
            fanout=FanOutConfig(subscribe_max_retries=1, retry_initial_delay_s=0.1),
        )
        with pytest.raises(Exception) as caught:
            reader.read(max_records=10, max_calls=1)
    finally:
        rival.close()
    message = str(caught.value)
    assert "ResourceInUseException" in message
    assert unique_name in message and SHARD0 in message and consumer in message
    assert type(caught.value).__name__ in ("ThrottledError", "DependencyError")
    assert reader.fan_out.subscribe_retries == 1


def test_a_split_ends_the_shard_with_its_children(mini, unique_name):
    ensure_stream(mini, unique_name, 1)
    consumer = _consumer(mini, unique_name)
    _put(mini, unique_name, [b"before-%d" % i for i in range(5)])
    with FanOutShardReader(
        mini, unique_name, SHARD0, StartPosition.trim_horizon(), consumer_arn=consumer, fanout=FAST
    ) as reader:
        first = reader.read(max_records=100, max_calls=1)
        assert len(first.records) == 5 and not first.shard_ended
        mini.split_shard(
            StreamName=unique_name, ShardToSplit=SHARD0, NewStartingHashKey=str(2**127)
        )
        deadline = time.monotonic() + 30
        while not reader.shard_ended:
            assert time.monotonic() < deadline
            last = reader.read(max_records=100, max_calls=1)
    assert last.shard_ended and reader.shard_ended
    assert sorted(last.child_shard_ids) == ["shardId-000000000001", "shardId-000000000002"]


def test_a_consumer_deleted_under_a_reader_is_a_clear_error(mini, unique_name):
    ensure_stream(mini, unique_name, 1)
    consumer = _consumer(mini, unique_name)
    _put(mini, unique_name, [b"x"])
    reader = FanOutShardReader(
        mini, unique_name, SHARD0, StartPosition.trim_horizon(), consumer_arn=consumer, fanout=FAST
    )
    assert len(reader.read(max_records=10, max_calls=1).records) == 1
    mini.deregister_stream_consumer(ConsumerARN=consumer)
    with pytest.raises(StreamNotFoundError) as caught:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            reader.read(max_records=10, max_calls=1)
    assert consumer in str(caught.value) and SHARD0 in str(caught.value)
    reader.close()


def test_close_ends_the_subscription(mini, unique_name):
    ensure_stream(mini, unique_name, 1)
    consumer = _consumer(mini, unique_name)
    reader = FanOutShardReader(
        mini, unique_name, SHARD0, StartPosition.latest(), consumer_arn=consumer, fanout=FAST
    )
    reader.read(max_records=1, max_calls=1)
    reader.close()
    reader.close()  # twice is fine
    # The server has let the subscription go: a new one is accepted well within 5 s.
    started = time.monotonic()
    while True:
        try:
            stream = mini.subscribe_to_shard(
                ConsumerARN=consumer, ShardId=SHARD0, StartingPosition={"Type": "LATEST"}
            )["EventStream"]
        except ClientError:
            assert time.monotonic() - started < 4.0
            time.sleep(0.1)
            continue
        stream.close()
        break


def _aggregate_then_plain(client, stream):
    """One KPL aggregate of ten user records, then two plain records; the aggregate's seq."""
    aggregator = RecordAggregator()
    for i in range(10):
        aggregator.add(b"agg-%d" % i, "samekey")
    (entry,) = aggregator.flush()
    seq = client.put_record(StreamName=stream, **entry)["SequenceNumber"]
    for data in (b"plain-0", b"plain-1"):
        client.put_record(StreamName=stream, Data=data, PartitionKey="k")
    return seq


def _all(client, stream, consumer, start, **read):
    with FanOutShardReader(
        client, stream, SHARD0, start, consumer_arn=consumer, fanout=FAST
    ) as reader:
        return [r.data for r in reader.read(max_records=100, max_calls=1, **read).records]


def test_a_checkpoint_inside_an_aggregate_resumes_at_the_next_sub_record(mini, unique_name):
    ensure_stream(mini, unique_name, 1)
    consumer = _consumer(mini, unique_name)
    seq = _aggregate_then_plain(mini, unique_name)
    after = _all(mini, unique_name, consumer, StartPosition.after_checkpoint(seq, 3))
    assert after == [b"agg-%d" % i for i in range(4, 10)] + [b"plain-0", b"plain-1"]


def test_a_recorded_range_starts_at_its_sub_record_and_ends_at_its_last(mini, unique_name):
    ensure_stream(mini, unique_name, 1)
    consumer = _consumer(mini, unique_name)
    seq = _aggregate_then_plain(mini, unique_name)
    start = StartPosition.at_esn(seq, 5)
    got = _all(mini, unique_name, consumer, start, until=(int(seq), 7))
    assert got == [b"agg-5", b"agg-6", b"agg-7"]


def test_at_timestamp_starts_at_the_first_record_at_or_after_it(mini, unique_name):
    ensure_stream(mini, unique_name, 1)
    consumer = _consumer(mini, unique_name)
    mini.put_record(StreamName=unique_name, Data=b"old", PartitionKey="k")
    time.sleep(0.05)
    when = datetime.now(timezone.utc)
    time.sleep(0.05)
    mini.put_record(StreamName=unique_name, Data=b"new", PartitionKey="k")
    assert _all(mini, unique_name, consumer, StartPosition.at_timestamp(when)) == [b"new"]


class _BreakAfter:
    """Raise ``error()`` from every subscription's event stream after ``events`` events."""

    def __init__(self, client, events, error, times):
        self.events, self.error, self.left = events, error, times
        client.meta.events.register("after-call.kinesis.SubscribeToShard", self._wrap)

    def _wrap(self, parsed, **_):
        if "EventStream" in parsed and self.left > 0:
            self.left -= 1
            parsed["EventStream"] = _Breaking(parsed["EventStream"], self)


class _Breaking(_Short):
    def __iter__(self):
        for count, event in enumerate(self._stream, 1):
            yield event
            if count >= self._owner.events:
                self._stream.close()
                raise self._owner.error()


def test_a_network_error_mid_stream_resubscribes_and_loses_nothing(mini, unique_name):
    ensure_stream(mini, unique_name, 1)
    consumer = _consumer(mini, unique_name)
    _BreakAfter(mini, 1, lambda: ProtocolError("connection reset (injected)"), times=3)
    expected, got = [], []
    with FanOutShardReader(
        mini, unique_name, SHARD0, StartPosition.trim_horizon(), consumer_arn=consumer, fanout=FAST
    ) as reader:
        for wave in range(4):
            payloads = [b"n%d-%02d" % (wave, i) for i in range(25)]
            _put(mini, unique_name, payloads, aggregate_every=2)
            expected += payloads
            while len(got) < len(expected):
                got += [r.data for r in reader.read(max_records=10, max_calls=1).records]
    assert got == expected
    assert reader.fan_out.subscribe_retries == 3 and reader.fan_out.subscriptions == 4


def test_an_unknown_exception_frame_is_a_clear_error(mini, unique_name):
    ensure_stream(mini, unique_name, 1)
    consumer = _consumer(mini, unique_name)
    frame = {"Error": {"Code": "KMSAccessDeniedException", "Message": "no key (injected)"}}
    _BreakAfter(mini, 1, lambda: EventStreamError(frame, "SubscribeToShard"), times=1)
    reader = FanOutShardReader(
        mini, unique_name, SHARD0, StartPosition.latest(), consumer_arn=consumer, fanout=FAST
    )
    reader.read(max_records=10, max_calls=1)
    with pytest.raises(KinesisServiceError) as caught:
        reader.read(max_records=10, max_calls=1)
    message = str(caught.value)
    assert caught.value.code == "KMSAccessDeniedException"
    assert unique_name in message and SHARD0 in message and consumer in message


@pytest.fixture(scope="module")
def short_subscriptions():
    """A second ministack whose subscriptions end after 2 s, as Kinesis's do after 300 s."""
    with MinistackServer(subscription_seconds=2.0) as server:
        yield server


def test_the_server_ending_subscriptions_loses_and_repeats_nothing(
    short_subscriptions, unique_name
):
    client = short_subscriptions.client("kinesis")
    ensure_stream(client, unique_name, 1)
    consumer = _consumer(client, unique_name)
    expected, got = [], []
    deadline = time.monotonic() + 60
    with FanOutShardReader(
        client,
        unique_name,
        SHARD0,
        StartPosition.trim_horizon(),
        consumer_arn=consumer,
        fanout=FAST,
    ) as reader:
        wave = 0
        while reader.fan_out.subscription_ends < 3:  # ~2 s each
            assert time.monotonic() < deadline
            payloads = [b"s%02d-%02d" % (wave, i) for i in range(20)]
            _put(client, unique_name, payloads, aggregate_every=2)
            expected += payloads
            wave += 1
            while len(got) < len(expected):
                got += [r.data for r in reader.read(max_records=9, max_calls=1).records]
            time.sleep(0.3)
    assert got == expected
    assert reader.fan_out.subscriptions >= 4 and reader.fan_out.subscribe_retries == 0


def test_a_reader_built_on_a_client_spec_pickles_without_its_subscription(
    ministack, mini, unique_name, monkeypatch
):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ministack.access_key_id)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", ministack.secret_access_key)
    ensure_stream(mini, unique_name, 1)
    consumer = _consumer(mini, unique_name)
    _put(mini, unique_name, [b"p%d" % i for i in range(5)])
    spec = ClientSpec("kinesis", region_name="us-east-1", endpoint_url=mini.meta.endpoint_url)
    reader = FanOutShardReader(
        spec, unique_name, SHARD0, StartPosition.trim_horizon(), consumer_arn=consumer, fanout=FAST
    )
    assert [r.data for r in reader.read(max_records=2, max_calls=1).records] == [b"p0", b"p1"]
    copy = pickle.loads(pickle.dumps(reader))
    reader.close()
    # The copy keeps the records received but not returned (a new process, no connection).
    assert [r.data for r in copy.read(max_records=10).records] == [b"p2", b"p3", b"p4"]
    copy.close()
    with pytest.raises(TypeError, match="ClientSpec"):
        pickle.dumps(
            FanOutShardReader(
                mini, unique_name, SHARD0, StartPosition.latest(), consumer_arn=consumer
            )
        )


@pytest.mark.parametrize("drop", [False, True])
def test_an_aggregate_spanning_shards_is_delivered_and_counted_or_dropped_when_asked(
    mini, unique_name, drop
):
    ensure_stream(mini, unique_name, 2)
    consumer = _consumer(mini, unique_name)
    aggregator = RecordAggregator()  # not shard-aware: its keys hash over both shards
    keys = [f"key-{i}" for i in range(20)]
    for key in keys:
        aggregator.add(key.encode(), key)
    (entry,) = aggregator.flush()
    shard_id = mini.put_record(StreamName=unique_name, **entry)["ShardId"]
    (shard,) = [
        s for s in mini.list_shards(StreamName=unique_name)["Shards"] if s["ShardId"] == shard_id
    ]
    low, high = (
        int(shard["HashKeyRange"]["StartingHashKey"]),
        int(shard["HashKeyRange"]["EndingHashKey"]),
    )
    outside = [k for k in keys if not low <= int(hashlib.md5(k.encode()).hexdigest(), 16) <= high]
    assert 0 < len(outside) < len(keys)  # the aggregate spans both shards
    with FanOutShardReader(
        mini,
        unique_name,
        shard_id,
        StartPosition.trim_horizon(),
        consumer_arn=consumer,
        hash_key_range=(
            shard["HashKeyRange"]["StartingHashKey"],
            shard["HashKeyRange"]["EndingHashKey"],
        ),
        config=ReaderConfig(drop_outside_shard=drop),
        fanout=FAST,
    ) as reader:
        got = [r.data for r in _drain(reader, max_records=100)]
    assert got == ([] if drop else [k.encode() for k in keys])
    assert reader.stats.user_records_outside_shard == len(outside)
    assert reader.stats.aggregates_dropped == (1 if drop else 0)
    assert reader.stats.user_records_dropped == (len(keys) if drop else 0)
