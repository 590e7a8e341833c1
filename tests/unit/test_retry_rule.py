"""One rule classifies a failed read, whether it polls or subscribes (fan-out), and the
retries it causes are counted and logged at a bounded rate. Pure: no server, an injected
clock."""

from __future__ import annotations

import logging

import pytest
from botocore.eventstream import ParserError
from botocore.exceptions import (
    ClientError,
    EndpointConnectionError,
    EventStreamError,
    HTTPClientError,
    SSLError,
)
from urllib3.exceptions import ProtocolError

from kinesis_dstream.backoff import Backoff, RetryLog, call_with_retry, is_retriable
from kinesis_dstream.errors import DependencyError, KinesisServiceError
from kinesis_dstream.retrieval.fanout import is_resubscribable


def client_error(status, code=None, message="", operation="SubscribeToShard"):
    """What botocore raises; a bare 500 page parses as code '500' (HTTP status as code)."""
    response: dict = {"Error": {"Code": code, "Message": message}}
    if status is not None:
        response["ResponseMetadata"] = {"HTTPStatusCode": status}
    return ClientError(response, operation)


RETRIED_BY_BOTH = [
    client_error(500, "500", "Internal Server Error"),  # a proxy's page: no AWS error code
    client_error(502, "502", "Bad Gateway"),
    client_error(503, ""),  # no code at all
    client_error(500, "InternalFailure"),
    client_error(None, "ServiceUnavailable"),  # a code without a status
    client_error(400, "LimitExceededException"),
    client_error(400, "ProvisionedThroughputExceededException"),
    EventStreamError({"Error": {"Code": "InternalFailure", "Message": ""}}, "SubscribeToShard"),
    # what botocore raises for the event stream's InternalFailureException frame:
    EventStreamError(
        {
            "Error": {"Code": "InternalFailureException", "Message": "internal failure"},
            "ResponseMetadata": {"HTTPStatusCode": 400},
        },
        "SubscribeToShard",
    ),
    EndpointConnectionError(endpoint_url="http://127.0.0.1:1"),
    ProtocolError("Connection broken"),
    ParserError("bad frame"),
    ConnectionResetError(),
    # What botocore's standard retry mode retries, which the library turns off:
    SSLError(endpoint_url="https://kinesis.eu-west-1.amazonaws.com", error="EOF in handshake"),
    HTTPClientError(error="connection pool is full"),
    client_error(400, "RequestTimeout"),
    client_error(408, "RequestTimeoutException"),
    client_error(400, "PriorRequestNotComplete"),
]
RETRIED_BY_NEITHER = [
    client_error(400, "AccessDeniedException"),
    client_error(400, "ResourceNotFoundException"),
    client_error(400, "ValidationException"),
    client_error(None, None),  # no status, no code
    ValueError("a bug"),
]


@pytest.mark.parametrize("exc", RETRIED_BY_BOTH, ids=repr)
def test_polling_and_fan_out_retry_the_same_failures(exc):
    assert is_retriable(exc) and is_resubscribable(exc)


@pytest.mark.parametrize("exc", RETRIED_BY_NEITHER, ids=repr)
def test_polling_and_fan_out_give_up_on_the_same_failures(exc):
    assert not is_retriable(exc) and not is_resubscribable(exc)


def test_another_subscription_within_5_s_is_retried_by_fan_out_only():
    in_use = client_error(400, "ResourceInUseException")
    assert is_resubscribable(in_use) and not is_retriable(in_use)
    assert is_retriable(in_use, frozenset({"ResourceInUseException"}))


def test_a_bare_500_is_retried_then_given_up_as_a_retriable_dependency_error():
    calls = []
    sleeps: list = []

    def subscribe():
        calls.append(1)
        raise client_error(500, "500", "Internal Server Error")

    with pytest.raises(DependencyError) as raised:
        call_with_retry(
            subscribe,
            Backoff(max_attempts=4),
            operation="SubscribeToShard",
            stream_name="s",
            shard_id="shardId-000000000001",
            retriable=is_resubscribable,
            sleep=sleeps.append,
            clock=lambda: 0.0,
        )
    assert len(calls) == 4 and len(sleeps) == 3
    assert raised.value.retriable and "shardId-000000000001" in str(raised.value)
    with pytest.raises(KinesisServiceError) as final:  # not retriable: at once
        call_with_retry(
            lambda: (_ for _ in ()).throw(client_error(400, "AccessDeniedException")),
            Backoff(max_attempts=4),
            operation="SubscribeToShard",
            retriable=is_resubscribable,
            sleep=sleeps.append,
        )
    assert not final.value.retriable and len(sleeps) == 3


def test_retries_are_counted_and_logged_at_a_bounded_rate(caplog):
    now = [0.0]
    logger = logging.getLogger("test.retry")
    retries = RetryLog(logger, "SubscribeToShard s/shard-1", 30.0, lambda: now[0])
    failure = client_error(500, "500", "Internal Server Error")
    with caplog.at_level(logging.INFO, logger="test.retry"):
        logged = [retries.failed(failure, 1.0)]
        for _ in range(99):  # a hundred failures within 30 s: one line
            now[0] += 0.25
            logged.append(retries.failed(failure))
        now[0] += 6.0  # 30.75 s after the first line
        logged.append(retries.failed(failure))
        retries.succeeded()
        retries.failed(failure)  # a new streak is reported at once
    assert logged.count(True) == 2 and retries.total == 102 and retries.in_a_row == 1
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 4, lines
    assert "(1 since the last report, 1 in a row), retrying in 1.0s" in lines[0]
    assert "500 (HTTP 500)" in lines[0] and "SubscribeToShard s/shard-1" in lines[0]
    assert "(100 since the last report, 101 in a row)" in lines[1]
    assert "works again after 101 failure(s) in a row" in lines[2]
