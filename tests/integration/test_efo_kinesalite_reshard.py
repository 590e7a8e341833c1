"""UpdateShardCount on the enhanced fan-out server over kinesalite (``tests/npm/efo/``):
carried out as splits and merges, so every new shard has parents and every record is
read once by following a parent's last event to its children; and the library's
FanOutShardReader reading a parent to its end."""

from __future__ import annotations

import time

import pytest
from botocore.exceptions import ClientError

from kinesis_dstream.retrieval.fanout import FanOutConfig, FanOutShardReader
from kinesis_dstream.retrieval.reader import StartPosition

from ..support.efo import (
    SHARD0,
    active_consumer,
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

HASH_SPACE = 2**128


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
        events = shard_events(
            client,
            consumer,
            shard_id,
            {"Type": "TRIM_HORIZON"},
            lambda events, closed=closed: not closed and events[-1]["MillisBehindLatest"] == 0,
        )
        assert ended(events) == closed, shard_id
        got += [r["Data"] for r in records_in(events)]
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
    stream_arn = new_stream(efo, unique_name, 2)
    consumer = active_consumer(efo, stream_arn)
    expected: list = []

    def put(tag, count=20):
        sent = put_records(efo, unique_name, count, data=tag + "-{i:02d}")
        expected.extend(data.encode() for data in sent)

    put("before")
    assert _scale(efo, unique_name, 4, lambda n: put(f"doubling{n}", 5)) == 2
    put("between")
    assert _scale(efo, unique_name, 2, lambda n: put(f"halving{n}", 5)) == 4
    put("after")
    shards = efo.list_shards(StreamName=unique_name)["Shards"]
    by_id = {s["ShardId"]: s for s in shards}
    born = [s for s in shards if s["ShardId"] not in (SHARD0, "shardId-000000000001")]
    assert born and all(s["ParentShardId"] in by_id for s in born)
    merged = [s for s in born if "AdjacentParentShardId" in s]
    assert len(merged) == 2 and all(s["AdjacentParentShardId"] in by_id for s in merged)
    assert _uniform(open_shards(efo, unique_name), 2)
    got = _read_by_lineage(efo, consumer, unique_name)
    assert len(got) == len(expected) and sorted(got) == sorted(expected)  # each exactly once


@pytest.fixture(scope="module")
def quick_reshards():
    """A server of its own whose splits and merges take 30 ms (the session's: 200 ms)."""
    with EfoKinesalite(reshard_step_s=0.03) as server:
        yield server


def test_update_shard_count_to_any_count_between_half_and_double(quick_reshards, unique_name):
    client = quick_reshards.client("kinesis")
    new_stream(client, unique_name, 4)
    for beyond in (9, 1):
        with pytest.raises(ClientError, match="LimitExceededException"):
            client.update_shard_count(
                StreamName=unique_name, TargetShardCount=beyond, ScalingType="UNIFORM_SCALING"
            )
    for target in (7, 4, 6, 3, 5):
        _scale(client, unique_name, target, lambda n: None)
        assert _uniform(open_shards(client, unique_name), target), target
    shards = client.list_shards(StreamName=unique_name)["Shards"]
    by_id = {s["ShardId"]: s for s in shards}
    assert all(s["ParentShardId"] in by_id for s in shards[4:])


# -- the library's reader ----------------------------------------------------------------


def test_the_fanout_reader_reads_a_parent_to_its_end_then_its_children(efo, unique_name):
    consumer = active_consumer(efo, new_stream(efo, unique_name))
    put_records(efo, unique_name, 30, data="p{i:02d}")
    fast = FanOutConfig(resubscribe_interval_s=0.0, retry_initial_delay_s=0.2)
    with FanOutShardReader(
        efo, unique_name, SHARD0, StartPosition.trim_horizon(), consumer_arn=consumer, fanout=fast
    ) as reader:
        got = [r.data for r in reader.read(max_records=10, max_calls=1).records]
        efo.split_shard(StreamName=unique_name, ShardToSplit=SHARD0, NewStartingHashKey=str(2**127))
        wait_until(lambda: len(open_shards(efo, unique_name)) == 2, 10, "the split done")
        put_records(efo, unique_name, 10, data="c{i:02d}")  # to the children
        deadline = time.monotonic() + 30
        while not reader.shard_ended:
            assert time.monotonic() < deadline, "the parent did not end"
            chunk = reader.read(max_records=10, max_calls=1)
            got += [r.data for r in chunk.records]
    assert got == [b"p%02d" % i for i in range(30)]  # all of the parent, in order, once
    assert chunk.shard_ended and not chunk.records
    assert sorted(chunk.child_shard_ids) == ["shardId-000000000001", "shardId-000000000002"]
    assert reader.fan_out.subscriptions == 1
    in_children = []
    for child in chunk.child_shard_ids:  # the children, each read until caught up
        with FanOutShardReader(
            efo,
            unique_name,
            child,
            StartPosition.trim_horizon(),
            consumer_arn=consumer,
            fanout=fast,
        ) as child_reader:
            in_children += [r.data for r in child_reader.read(max_records=100).records]
    assert sorted(in_children) == [b"c%02d" % i for i in range(10)]
