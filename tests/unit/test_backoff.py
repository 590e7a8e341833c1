"""Pure-logic tests of the retry policy and loop, with an injected clock and sleeper."""

import boto3
import pytest
from botocore.exceptions import (
    ClientError,
    CredentialRetrievalError,
    EndpointConnectionError,
    NoCredentialsError,
    ParamValidationError,
    PartialCredentialsError,
)

from kinesis_dstream.backoff import Backoff, call_with_retry
from kinesis_dstream.errors import (
    CredentialsError,
    DependencyError,
    KinesisServiceError,
    StreamNotFoundError,
    ThrottledError,
)

from ..support.clocks import FakeTime


def client_error(code, status=400):
    return ClientError(
        {"Error": {"Code": code, "Message": "m"}, "ResponseMetadata": {"HTTPStatusCode": status}},
        "GetRecords",
    )


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


def real_client(endpoint="http://127.0.0.1:9", region="eu-west-1"):
    """A real boto3 client: only its endpoint and region are read, nothing is sent."""
    return boto3.client(
        "kinesis",
        endpoint_url=endpoint,
        region_name=region,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )


def test_the_client_puts_endpoint_and_region_into_every_error():
    t = FakeTime()
    unreachable = EndpointConnectionError(endpoint_url="http://127.0.0.1:9")
    with pytest.raises(DependencyError) as info:
        call_with_retry(
            failing([unreachable] * 3),
            Backoff(max_attempts=3),
            operation="ListShards",
            stream_name="orders",
            client=real_client(),
            sleep=t.sleep,
            clock=t.clock,
        )
    assert info.value.endpoint == "http://127.0.0.1:9" and info.value.region == "eu-west-1"
    assert str(info.value).endswith(
        "(operation=ListShards, stream=orders, endpoint=http://127.0.0.1:9, region=eu-west-1)"
    )


def test_without_a_client_errors_still_name_operation_stream_and_shard():
    t = FakeTime()
    with pytest.raises(KinesisServiceError) as info:
        call_with_retry(
            failing([client_error("AccessDeniedException")]),
            Backoff(),
            operation="GetRecords",
            stream_name="orders",
            shard_id="shardId-000000000001",
            sleep=t.sleep,
            clock=t.clock,
        )
    assert info.value.endpoint is None and "endpoint=" not in str(info.value)


@pytest.mark.parametrize(
    "error, says",
    [
        (NoCredentialsError(), "Unable to locate credentials"),
        (
            PartialCredentialsError(provider="env", cred_var="AWS_SECRET_ACCESS_KEY"),
            "missing: AWS_SECRET_ACCESS_KEY",
        ),
        (client_error("UnrecognizedClientException"), "rejected the AWS credentials"),
        (client_error("ExpiredTokenException"), "rejected the AWS credentials"),
    ],
)
def test_missing_or_rejected_credentials_fail_at_once_with_how_to_configure(error, says):
    t = FakeTime()
    with pytest.raises(CredentialsError) as info:
        call_with_retry(
            failing([error]),
            Backoff(max_attempts=10),
            operation="DescribeStreamSummary",
            stream_name="orders",
            client=real_client(),
            sleep=t.sleep,
            clock=t.clock,
        )
    assert t.sleeps == []
    message = str(info.value)
    assert says in message and "AWS_ACCESS_KEY_ID" in message and "instance role" in message
    assert "operation=DescribeStreamSummary" in message and "endpoint=http://127.0.0.1:9" in message
    assert isinstance(info.value, KinesisServiceError) and info.value.__cause__ is error


def test_a_credential_process_failure_names_the_provider_not_its_output():
    error = CredentialRetrievalError(provider="custom-process", error_msg="token=hunter2")
    with pytest.raises(CredentialsError, match="from custom-process failed") as info:
        call_with_retry(failing([error]), Backoff(), operation="ListShards")
    assert "hunter2" not in str(info.value)


def test_other_botocore_errors_become_service_errors_naming_the_operation():
    error = ParamValidationError(report="Invalid length for parameter StreamName")
    with pytest.raises(KinesisServiceError, match="ParamValidationError") as info:
        call_with_retry(failing([error]), Backoff(), operation="ListShards", stream_name="")
    assert "operation=ListShards" in str(info.value)


def test_errors_of_our_tree_pass_through_a_nested_retry_unchanged():
    t = FakeTime()
    inner = DependencyError("gave up", operation="ListShards", stream_name="orders")
    with pytest.raises(DependencyError) as info:
        call_with_retry(
            failing([inner]), Backoff(max_attempts=5), operation="X", sleep=t.sleep, clock=t.clock
        )
    assert info.value is inner and t.sleeps == []


def test_non_aws_exceptions_are_not_wrapped():
    with pytest.raises(KeyError):
        call_with_retry(failing([KeyError("Shards")]), Backoff(), operation="ListShards")
