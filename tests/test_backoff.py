"""Pure-logic tests of the retry policy and loop, with an injected clock and sleeper."""

import pytest
from botocore.exceptions import ClientError, EndpointConnectionError

from kinesis_dstream.backoff import Backoff, call_with_retry
from kinesis_dstream.errors import (
    DependencyError,
    KinesisServiceError,
    StreamNotFoundError,
    ThrottledError,
)


def client_error(code, status=400):
    return ClientError(
        {"Error": {"Code": code, "Message": "m"}, "ResponseMetadata": {"HTTPStatusCode": status}},
        "GetRecords",
    )


class FakeTime:
    def __init__(self):
        self.now = 0.0
        self.sleeps = []

    def clock(self):
        return self.now

    def sleep(self, seconds):
        self.sleeps.append(seconds)
        self.now += seconds


def failing(errors, result="ok"):
    errors = list(errors)

    def fn():
        if errors:
            raise errors.pop(0)
        return result

    return fn


def test_ceilings_grow_exponentially_up_to_the_max():
    backoff = Backoff(initial_delay_s=0.1, max_delay_s=1.0, multiplier=2.0)
    assert [backoff.ceiling_s(n) for n in range(6)] == pytest.approx([0.1, 0.2, 0.4, 0.8, 1.0, 1.0])


def test_full_jitter_spans_zero_to_the_ceiling():
    backoff = Backoff(initial_delay_s=1.0, max_delay_s=8.0)
    assert backoff.delay_s(2, rng=lambda: 0.0) == 0.0
    assert backoff.delay_s(2, rng=lambda: 0.5) == 2.0


@pytest.mark.parametrize(
    "kwargs",
    [
        {"initial_delay_s": -1},
        {"initial_delay_s": 2, "max_delay_s": 1},
        {"multiplier": 0.5},
        {"max_attempts": 0},
    ],
)
def test_invalid_policies_are_rejected_with_the_value(kwargs):
    with pytest.raises(ValueError, match="Backoff"):
        Backoff(**kwargs)


def test_throttling_is_retried_until_success_with_growing_sleeps():
    t = FakeTime()
    errors = [client_error("ProvisionedThroughputExceededException")] * 4
    result = call_with_retry(
        failing(errors),
        Backoff(initial_delay_s=0.1, max_delay_s=10, max_attempts=10),
        operation="GetRecords",
        sleep=t.sleep,
        clock=t.clock,
        rng=lambda: 1.0,
    )
    assert result == "ok"
    assert t.sleeps == pytest.approx([0.1, 0.2, 0.4, 0.8])


def test_throttling_past_the_attempt_budget_names_stream_shard_and_operation():
    t = FakeTime()
    errors = [client_error("LimitExceededException")] * 5
    with pytest.raises(ThrottledError) as info:
        call_with_retry(
            failing(errors),
            Backoff(max_attempts=3),
            operation="GetRecords",
            stream_name="orders",
            shard_id="shardId-000000000001",
            sleep=t.sleep,
            clock=t.clock,
        )
    assert len(t.sleeps) == 2
    message = str(info.value)
    assert "orders" in message and "shardId-000000000001" in message and "GetRecords" in message


def test_time_budget_bounds_retries_and_the_last_sleep():
    t = FakeTime()
    errors = [client_error("ServiceUnavailable", 503)] * 100
    with pytest.raises(DependencyError):
        call_with_retry(
            failing(errors),
            Backoff(initial_delay_s=1, max_delay_s=4, max_attempts=100, max_elapsed_s=10),
            operation="PutRecords",
            sleep=t.sleep,
            clock=t.clock,
            rng=lambda: 1.0,
        )
    assert t.now <= 10.0
    assert sum(t.sleeps) <= 10.0


def test_connection_errors_are_retried():
    t = FakeTime()
    errors = [EndpointConnectionError(endpoint_url="http://127.0.0.1:1")]
    assert (
        call_with_retry(failing(errors), Backoff(), operation="X", sleep=t.sleep, clock=t.clock)
        == "ok"
    )


def test_resource_not_found_fails_at_once():
    t = FakeTime()
    with pytest.raises(StreamNotFoundError, match="stream=gone"):
        call_with_retry(
            failing([client_error("ResourceNotFoundException")]),
            Backoff(max_attempts=10),
            operation="GetShardIterator",
            stream_name="gone",
            sleep=t.sleep,
            clock=t.clock,
        )
    assert t.sleeps == []


def test_other_client_errors_fail_at_once_with_their_code():
    t = FakeTime()
    with pytest.raises(KinesisServiceError, match="AccessDeniedException") as info:
        call_with_retry(
            failing([client_error("AccessDeniedException")]),
            Backoff(max_attempts=10),
            operation="GetRecords",
            sleep=t.sleep,
            clock=t.clock,
        )
    assert info.value.code == "AccessDeniedException"
    assert t.sleeps == []
