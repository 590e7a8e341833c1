"""The producer knobs behind the sink's connector options, on moto's server.

recordMaxBufferedTime (a record never waits longer in the buffer), producerRateLimit
(per-shard pacing; pure token buckets with an injected clock), recordTtl (a record not
written in time fails naming stream and count: never dropped).
"""

from __future__ import annotations

import json
import time

import pytest

from kinesis_dstream.errors import ProducerError
from kinesis_dstream.producer import DEFAULT_PUT_BACKOFF, KinesisProducer
from kinesis_dstream.retrieval.streams import ensure_stream
from kinesis_dstream.shard_rate import ShardRateLimiter

from ..support.faults import _CannedResponse


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_rate_limiter_lets_a_burst_through_then_paces_each_shard():
    clock = Clock()
    limiter = ShardRateLimiter(50, clock)  # 500 records/s and 0.5 MiB/s per shard
    assert limiter.delay_s([("a", 500, 1000)]) == 0  # one second's worth at once
    assert limiter.delay_s([("a", 250, 1000)]) == pytest.approx(0.5)
    assert limiter.delay_s([("b", 100, 1000)]) == 0  # another shard has its own buckets
    clock.now = 10.0  # idle: the buckets refill to one second, not more
    assert limiter.delay_s([("a", 500, 0)]) == 0
    # bytes: a full 0.5 MiB bucket, 1 MiB asked: the missing 0.5 MiB take a second
    assert limiter.delay_s([("a", 0, 1024 * 1024)]) == pytest.approx(1.0)


def test_rate_limit_paces_puts_to_one_shard(kinesis, unique_name):
    ensure_stream(kinesis, unique_name, 1)
    producer = KinesisProducer(
        unique_name, client=kinesis, max_records_per_put=50, rate_limit_percent=10
    )  # 100 records/s
    began = time.monotonic()
    with producer:
        for i in range(250):
            producer.put(f"r{i}", f"k{i}")
    assert producer.records_written == 250
    # a one-second burst of 100, then the other 150 at 100/s: at least 1.5 s
    assert time.monotonic() - began >= 1.45


def test_a_record_waits_at_most_the_buffered_time(kinesis, unique_name):
    ensure_stream(kinesis, unique_name, 1)
    with KinesisProducer(unique_name, client=kinesis, max_buffered_time_s=0.2) as producer:
        producer.put("first", "k")
        assert producer.records_written == 0  # buffered
        time.sleep(0.25)
        producer.put("second", "k")  # the oldest waited 0.25 s: both go now
        assert producer.records_written == 2


def _failing_puts(client, failures):
    """Answer PutRecords with every record failed (throttled), ``failures`` times."""
    calls = {"n": 0}

    def handler(params=None, **_):
        if calls["n"] >= failures:
            return None
        calls["n"] += 1
        count = len(json.loads(params["body"])["Records"])
        return _CannedResponse(200), {
            "FailedRecordCount": count,
            "Records": [
                {"ErrorCode": "ProvisionedThroughputExceededException", "ErrorMessage": "slow"}
            ]
            * count,
            "ResponseMetadata": {"HTTPStatusCode": 200},
        }

    client.meta.events.register("before-call.kinesis.PutRecords", handler)
    return lambda: client.meta.events.unregister("before-call.kinesis.PutRecords", handler)


def test_a_record_not_written_within_its_ttl_fails_naming_stream_and_count(local_aws, unique_name):
    client = local_aws.client("kinesis")
    ensure_stream(client, unique_name, 1)
    remove = _failing_puts(client, failures=10_000)
    try:
        from dataclasses import replace

        backoff = replace(
            DEFAULT_PUT_BACKOFF,
            max_attempts=1_000_000,
            max_elapsed_s=0.5,
            initial_delay_s=0.01,
            max_delay_s=0.05,
        )
        producer = KinesisProducer(unique_name, client=client, put_backoff=backoff)
        for i in range(7):
            producer.put(f"r{i}", f"k{i}")
        with pytest.raises(ProducerError) as info:
            producer.flush()
    finally:
        remove()
    message = str(info.value)
    assert unique_name in message and "7 of 7 records not written" in message
