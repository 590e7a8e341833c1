"""Helpers for the tests of the enhanced fan-out server over kinesalite
(:class:`~tests.support.npm_servers.EfoKinesalite`): streams, consumers, and
SubscribeToShardEvents read with boto3's ``subscribe_to_shard`` (botocore's parser)."""

from __future__ import annotations

import time
from typing import Callable

from kinesis_dstream.retrieval.streams import ensure_stream

from .waiting import wait_until

SHARD0 = "shardId-000000000000"


def new_stream(client, name: str, shards: int = 1) -> str:
    """Create ``name`` with ``shards`` shards (if new), wait until ACTIVE; its ARN."""
    ensure_stream(client, name, shards)
    return client.describe_stream_summary(StreamName=name)["StreamDescriptionSummary"]["StreamARN"]


def consumer_status(client, consumer: str) -> str:
    return client.describe_stream_consumer(ConsumerARN=consumer)["ConsumerDescription"][
        "ConsumerStatus"
    ]


def active_consumer(client, stream: str, name: str = "c") -> str:
    """Register ``name`` on the stream ARN ``stream``, wait until ACTIVE; its ARN."""
    arn = client.register_stream_consumer(StreamARN=stream, ConsumerName=name)["Consumer"][
        "ConsumerARN"
    ]
    wait_until(lambda: consumer_status(client, arn) == "ACTIVE", 10, f"consumer {name} ACTIVE")
    return arn


def shard_events(
    client, consumer: str, shard: str, start: dict, stop: Callable, *, timeout_s: float = 30.0
) -> list:
    """SubscribeToShardEvents until ``stop(events)`` or the stream's end; closed after.

    Fails past ``timeout_s`` (checked at each event; an idle shard gets one every ~5 s)
    naming what came, instead of waiting for the subscription's end.
    """
    deadline = time.monotonic() + timeout_s
    start_call = {"ConsumerARN": consumer, "ShardId": shard, "StartingPosition": start}
    stream = client.subscribe_to_shard(**start_call)["EventStream"]
    events: list = []
    try:
        for item in stream:
            events.append(item["SubscribeToShardEvent"])
            if stop(events):
                break
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"{shard}: no stop within {timeout_s:g} s; {len(events)} events, "
                    f"{len(records_in(events))} records, the last {events[-1]}"
                )
    finally:
        stream.close()
    return events


def records_in(events: list) -> list:
    return [record for event in events for record in event["Records"]]


def ended(events: list) -> bool:
    """The last event ends its shard: no ContinuationSequenceNumber."""
    return "ContinuationSequenceNumber" not in events[-1]


def caught_up_with(count: int) -> Callable:
    """A ``stop`` for :func:`shard_events`: ``count`` records came and the last event said
    it was caught up (MillisBehindLatest 0)."""
    return lambda events: len(records_in(events)) >= count and events[-1]["MillisBehindLatest"] == 0


def open_shards(client, stream: str) -> list:
    return [
        shard
        for shard in client.list_shards(StreamName=stream)["Shards"]
        if "EndingSequenceNumber" not in shard["SequenceNumberRange"]
    ]
