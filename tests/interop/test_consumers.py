"""Consumer lifecycle against ministack; what it cannot show (CREATING, limits) is
added through botocore event hooks on the real client."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from kinesis_dstream.backoff import Backoff
from kinesis_dstream.errors import ConsumerError
from kinesis_dstream.retrieval.consumer_handle import ConsumerHandle
from kinesis_dstream.retrieval.consumers import (
    ConsumerConfig,
    ConsumerStatus,
    deregister_consumer,
    ensure_consumer,
    list_consumers,
    register_consumer,
)
from kinesis_dstream.retrieval.streams import ensure_stream

QUICK = ConsumerConfig(
    active_timeout_s=5.0,
    poll_interval_s=0.05,
    register_backoff=Backoff(initial_delay_s=0.01, max_delay_s=0.05, max_attempts=4),
)


@pytest.fixture
def stream(mini, unique_name):
    ensure_stream(mini, unique_name, 1)
    return unique_name


class _Canned:
    def __init__(self, status_code):
        self.status_code = status_code
        self.headers: dict = {}
        self.content = b""


class _Creating:
    """Kinesis answers CREATING for a while; ministack is ACTIVE at once: rewrite it."""

    def __init__(self, client, describes):
        self.left = describes
        self.describes = 0
        client.meta.events.register("after-call.kinesis.RegisterStreamConsumer", self._register)
        client.meta.events.register("after-call.kinesis.DescribeStreamConsumer", self._describe)

    def _register(self, parsed, **_):
        if "Consumer" in parsed:
            parsed["Consumer"]["ConsumerStatus"] = "CREATING"

    def _describe(self, parsed, **_):
        self.describes += 1
        if "ConsumerDescription" in parsed and self.left > 0:
            self.left -= 1
            parsed["ConsumerDescription"]["ConsumerStatus"] = "CREATING"


class _Refuse:
    """The next ``times`` calls of ``operation`` fail with ``code`` (never sent)."""

    def __init__(self, client, operation, code, times):
        self.code, self.left, self.refused = code, times, 0
        client.meta.events.register(f"before-call.kinesis.{operation}", self._refuse)

    def _refuse(self, **_):
        if self.left <= 0:
            return None
        self.left -= 1
        self.refused += 1
        error = {"Code": self.code, "Message": f"{self.code} (injected)"}
        return _Canned(400), {"Error": error, "ResponseMetadata": {"HTTPStatusCode": 400}}


def test_register_find_list_deregister(mini, stream):
    consumer = register_consumer(mini, stream, "app-a", config=QUICK)
    assert consumer.status is ConsumerStatus.ACTIVE and consumer.name == "app-a"
    again = register_consumer(mini, stream, "app-a", config=QUICK)
    assert again.arn == consumer.arn  # found, not registered twice
    assert [c.arn for c in list_consumers(mini, stream)] == [consumer.arn]
    assert deregister_consumer(mini, stream, consumer_name="app-a") is True
    assert list_consumers(mini, stream) == []
    assert deregister_consumer(mini, stream, consumer_name="app-a") is False


def test_a_creating_consumer_is_waited_for_until_active(mini, stream):
    creating = _Creating(mini, describes=3)
    consumer = register_consumer(mini, stream, "slow", config=QUICK)
    assert consumer.status is ConsumerStatus.ACTIVE
    assert creating.describes == 5  # not found, then CREATING three times, then ACTIVE


def test_a_consumer_that_stays_creating_is_a_clear_error(mini, stream):
    _Creating(mini, describes=10**6)
    config = ConsumerConfig(active_timeout_s=0.3, poll_interval_s=0.05)
    with pytest.raises(ConsumerError) as caught:
        register_consumer(mini, stream, "stuck", config=config)
    message = str(caught.value)
    assert "still CREATING" in message and stream in message and "stuck" in message


def test_limit_exceeded_on_register_is_retried(mini, stream):
    refuse = _Refuse(mini, "RegisterStreamConsumer", "LimitExceededException", times=2)
    consumer = register_consumer(mini, stream, "later", config=QUICK)
    assert refuse.refused == 2 and consumer.status is ConsumerStatus.ACTIVE


def test_limit_exceeded_past_the_bound_names_stream_consumer_and_limit(mini, stream):
    _Refuse(mini, "RegisterStreamConsumer", "LimitExceededException", times=100)
    with pytest.raises(ConsumerError) as caught:
        register_consumer(mini, stream, "never", config=QUICK)
    message = str(caught.value)
    assert stream in message and "never" in message
    assert "20 consumers per stream" in message and "LimitExceededException" in message
    assert caught.value.code == "LimitExceededException"


def test_a_consumer_given_by_arn_is_used_and_nothing_registered(mini, stream, unique_name):
    existing = register_consumer(mini, stream, "glue", config=QUICK)
    used = ensure_consumer(mini, stream, consumer_arn=existing.arn, config=QUICK)
    assert used.arn == existing.arn
    assert len(list_consumers(mini, stream)) == 1
    handle = ConsumerHandle(mini, stream, consumer_arn=existing.arn, config=QUICK)
    assert handle.deregister() is False  # never deregisters a consumer it did not register
    assert len(list_consumers(mini, stream)) == 1
    with pytest.raises(ConsumerError, match="fanoutConsumerARN"):
        ensure_consumer(mini, stream, consumer_arn=existing.arn + "x", config=QUICK)
    other = f"{unique_name}-other"
    ensure_stream(mini, other, 1)
    with pytest.raises(ConsumerError, match="belongs to stream"):
        ensure_consumer(mini, other, consumer_arn=existing.arn, config=QUICK)


def test_a_deleted_consumer_is_detected_and_fails_loudly(mini, stream):
    handle = ConsumerHandle(mini, stream, consumer_name="q", config=QUICK)
    assert handle.refresh(force=True).arn == handle.arn
    deregister_consumer(mini, stream, consumer_arn=handle.arn)
    with pytest.raises(ConsumerError) as caught:
        handle.refresh(force=True)
    assert "deleted under the running query" in str(caught.value)
    assert stream in str(caught.value)


def test_a_deleted_consumer_is_registered_again_when_asked(mini, stream):
    handle = ConsumerHandle(mini, stream, consumer_name="q", reregister=True, config=QUICK)
    first = handle.arn
    deregister_consumer(mini, stream, consumer_arn=first)
    consumer = handle.refresh(force=True)
    assert consumer.status is ConsumerStatus.ACTIVE and handle.reregistrations == 1
    assert [c.arn for c in list_consumers(mini, stream)] == [handle.arn]
    assert handle.deregister() is True
    assert list_consumers(mini, stream) == []


def test_refresh_checks_only_once_per_interval(mini, stream):
    now = [0.0]
    handle = ConsumerHandle(
        mini, stream, consumer_name="t", refresh_interval_s=10.0, config=QUICK, clock=lambda: now[0]
    )
    counting = _Creating(mini, describes=0)
    handle.refresh()
    now[0] = 9.9
    handle.refresh()
    assert counting.describes == 0
    now[0] = 10.0
    handle.refresh()
    assert counting.describes == 1


def _cli(ministack, *args):
    return subprocess.run(
        [sys.executable, "-m", "kinesis_dstream.cli", "consumers", *args],
        env={**os.environ, **ministack.env()},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_cli_lists_registers_and_deregisters(ministack, mini, stream):
    assert _cli(ministack, "list", "--stream", stream).stdout.splitlines() == [
        f"0 consumer(s) on stream {stream!r}"
    ]
    done = _cli(ministack, "register", "--stream", stream, "--consumer", "ops")
    assert done.returncode == 0, done.stderr
    name, status, arn = done.stdout.split()
    assert (name, status) == ("ops", "ACTIVE")
    assert [c.arn for c in list_consumers(mini, stream)] == [arn]
    listed = _cli(ministack, "list", "--stream", stream, "--endpoint-url", ministack.endpoint_url)
    assert listed.stdout.splitlines()[0].split()[::3] == ["ops", arn]
    assert listed.stdout.splitlines()[-1] == f"1 consumer(s) on stream {stream!r}"
    gone = _cli(ministack, "deregister", "--stream", stream, "--consumer", "ops")
    assert gone.returncode == 0, gone.stderr
    assert list_consumers(mini, stream) == []
    again = _cli(ministack, "deregister", "--stream", stream, "--consumer", "ops")
    assert again.returncode == 1 and "no consumer 'ops'" in again.stdout


def test_the_cli_needs_a_consumer_name_and_an_existing_stream(ministack):
    done = _cli(ministack, "register", "--stream", "nope")
    assert done.returncode == 1
    assert done.stderr.strip() == "kinesis-dstream: error: consumers register needs --consumer NAME"
    missing = _cli(ministack, "list", "--stream", "no-such-stream", "--region", "us-east-1")
    assert missing.returncode == 1
    (line,) = missing.stderr.splitlines()
    assert "no-such-stream" in line and "DescribeStreamSummary" in line
