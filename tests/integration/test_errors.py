"""Errors a person can act on: stream administration against real local endpoints.

Each failure must be an error of our tree naming the operation, the stream and the
endpoint, and must come within a bounded time. Faults are real (a port nothing listens
on, an environment without credentials) or injected through botocore's event hooks.
"""

import time

import pytest

from kinesis_dstream.aws import ClientSpec, create_client
from kinesis_dstream.backoff import Backoff
from kinesis_dstream.errors import (
    CredentialsError,
    DependencyError,
    KinesisDStreamError,
    StreamNotActiveError,
    StreamNotFoundError,
    ThrottledError,
)
from kinesis_dstream.retrieval.streams import (
    child_shard_ids,
    ensure_stream,
    list_shards,
    require_stream,
    stream_exists,
    wait_active,
)

from ..support.faults import CallErrors

SECRET = "not-a-real-secret-4f1c9e"

ADMIN_CALLS = {
    "stream_exists": (lambda c, s: stream_exists(c, s), "DescribeStreamSummary"),
    "require_stream": (lambda c, s: require_stream(c, s), "DescribeStreamSummary"),
    "ensure_stream": (lambda c, s: ensure_stream(c, s, 1), "DescribeStreamSummary"),
    "wait_active": (lambda c, s: wait_active(c, s), "DescribeStreamSummary"),
    "list_shards": (lambda c, s: list_shards(c, s), "ListShards"),
    "child_shard_ids": (lambda c, s: child_shard_ids(c, s, "shardId-0"), "ListShards"),
}


@pytest.mark.parametrize("call", sorted(ADMIN_CALLS))
def test_an_unreachable_endpoint_is_a_dependency_error_naming_operation_stream_endpoint(
    call, dead_endpoint
):
    client = create_client(
        "kinesis",
        region_name="eu-west-1",
        endpoint_url=dead_endpoint,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    fn, operation = ADMIN_CALLS[call]
    started = time.monotonic()
    with pytest.raises(DependencyError) as info:
        fn(client, "orders")
    assert time.monotonic() - started < 5.0  # the default admin backoff: about a second
    message = str(info.value)
    assert f"operation={operation}" in message
    assert "stream=orders" in message
    assert f"endpoint={dead_endpoint}" in message and "region=eu-west-1" in message
    assert info.value.endpoint == dead_endpoint and info.value.retriable


def test_require_stream_on_a_missing_stream_names_stream_and_endpoint(local_aws, kinesis):
    with pytest.raises(StreamNotFoundError) as info:
        require_stream(kinesis, "no-such-stream")
    message = str(info.value)
    assert "'no-such-stream' does not exist" in message
    assert f"endpoint={local_aws.endpoint_url}" in message
    assert f"region={local_aws.region_name}" in message
    assert "operation=DescribeStreamSummary" in message
    assert not stream_exists(kinesis, "no-such-stream")


def test_list_shards_of_a_missing_stream_is_stream_not_found(local_aws, kinesis):
    with pytest.raises(StreamNotFoundError, match="operation=ListShards"):
        list_shards(kinesis, "no-such-stream")


def test_throttled_admin_calls_are_retried(kinesis, stream):
    throttle = CallErrors(
        kinesis, "kinesis", "ListShards", lambda n: "LimitExceededException" if n < 2 else None
    )
    try:
        assert [s["ShardId"] for s in list_shards(kinesis, stream)] == ["shardId-000000000000"]
    finally:
        throttle.remove()
    assert throttle.injected == 2


def test_throttling_past_the_budget_is_a_throttled_error(local_aws, kinesis, stream):
    throttle = CallErrors(
        kinesis, "kinesis", "DescribeStreamSummary", lambda n: "LimitExceededException"
    )
    try:
        with pytest.raises(ThrottledError) as info:
            require_stream(kinesis, stream, backoff=Backoff(initial_delay_s=0.01, max_attempts=3))
    finally:
        throttle.remove()
    assert throttle.calls == 3
    assert f"stream={stream}" in str(info.value)
    assert f"endpoint={local_aws.endpoint_url}" in str(info.value)


def test_a_stream_that_stays_inactive_is_a_timeout_naming_it(local_aws, kinesis, stream):
    def creating(parsed, **_):
        parsed["StreamDescriptionSummary"]["StreamStatus"] = "CREATING"

    event = "after-call.kinesis.DescribeStreamSummary"
    kinesis.meta.events.register(event, creating)
    try:
        with pytest.raises(StreamNotActiveError) as info:
            wait_active(kinesis, stream, timeout_s=0.2)
    finally:
        kinesis.meta.events.unregister(event, creating)
    assert isinstance(info.value, TimeoutError)  # what wait_active raised before
    assert "still CREATING" in str(info.value)
    assert f"endpoint={local_aws.endpoint_url}" in str(info.value)


def test_missing_credentials_say_how_to_configure_them(no_credentials, local_aws):
    client = create_client("kinesis", region_name="us-east-1", endpoint_url=local_aws.endpoint_url)
    started = time.monotonic()
    with pytest.raises(CredentialsError) as info:
        require_stream(client, "orders")
    assert time.monotonic() - started < 5.0  # not retried
    message = str(info.value)
    assert "no AWS credentials" in message and "AWS_ACCESS_KEY_ID" in message
    assert "AWS_PROFILE" in message and "instance role" in message
    assert "operation=DescribeStreamSummary" in message and "stream=orders" in message
    assert f"endpoint={local_aws.endpoint_url}" in message
    assert isinstance(info.value, KinesisDStreamError) and not info.value.retriable


def test_a_credentials_error_never_shows_the_secret(no_credentials, monkeypatch, local_aws):
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)  # without a key id the chain skips it
    client = create_client("kinesis", region_name="us-east-1", endpoint_url=local_aws.endpoint_url)
    with pytest.raises(CredentialsError) as info:
        list_shards(client, "orders")
    assert SECRET not in str(info.value) and SECRET not in repr(info.value)


def test_credentials_the_service_rejects_are_a_credentials_error(local_aws, kinesis):
    rejected = CallErrors(
        kinesis, "kinesis", "DescribeStreamSummary", lambda n: "UnrecognizedClientException"
    )
    try:
        with pytest.raises(CredentialsError) as info:
            stream_exists(kinesis, "orders")
    finally:
        rejected.remove()
    assert rejected.calls == 1  # not retried
    assert info.value.code == "UnrecognizedClientException"
    assert "rejected the AWS credentials" in str(info.value)


def test_partial_credentials_name_what_is_missing(no_credentials, monkeypatch, local_aws):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    with pytest.raises(CredentialsError, match="missing: AWS_SECRET_ACCESS_KEY") as info:
        create_client("kinesis", region_name="us-east-1", endpoint_url=local_aws.endpoint_url)
    assert f"endpoint={local_aws.endpoint_url}" in str(info.value)


def test_a_client_built_before_credentials_exist_is_not_kept(
    no_credentials, local_aws, monkeypatch
):
    """The full suite found it: a client made while the chain found nothing was cached for
    the process and failed every later call, even once the environment had credentials."""
    spec = ClientSpec("kinesis", local_aws.region_name, local_aws.endpoint_url)
    unsigned = spec.client()
    assert spec.client() is not unsigned  # not kept: a later call builds again
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", local_aws.access_key_id)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", local_aws.secret_access_key)
    signing = spec.client()
    assert "StreamNames" in signing.list_streams()
    assert spec.client() is signing  # one that can sign is reused
