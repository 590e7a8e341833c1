"""A KCL 3.x handoff gives the child the KCL's time to answer ``shutdownRequested``:
``timeoutInSeconds`` if set, else the leader's handoff timeout, never the stop's
``shutdownGraceMillis`` (which made a slow answer halt the whole daemon)."""

from __future__ import annotations

import json
import logging
import re
import threading

import pytest

from kinesis_dstream.leases import (
    InMemoryLeaseRefresher,
    Lease,
    LeaseCoordinator,
    LeaseManagementConfig,
)
from kinesis_dstream.multilang import messages
from kinesis_dstream.multilang.properties import MultiLangConfig
from kinesis_dstream.multilang.protocol import ChildHung
from kinesis_dstream.multilang.shard_consumer import Outcome, ShardConsumer

from .test_multilang_protocol import SHARD, ScriptedChild, make, status

GRACE_S = 0.2


@pytest.fixture
def coordinator():
    table = InMemoryLeaseRefresher()
    table.create_lease(Lease(SHARD))
    coord = LeaseCoordinator(table, "worker-a", LeaseManagementConfig.from_failover(10.0))
    coord.start(background=False)
    yield coord
    coord.stop(release=True)


class SlowToShutDown(ScriptedChild):
    """Answers ``shutdownRequested`` only ``delay_s`` later (never if None); every other
    message at once."""

    def __init__(self, steps: list, delay_s) -> None:
        super().__init__(steps)
        self.delay_s = delay_s
        self.timers: list = []

    def send(self, message: dict) -> None:
        if message["action"] != "shutdownRequested":
            return super().send(message)
        self.sent.append(json.loads(messages.encode(message)))
        action, replies = self.steps.pop(0)
        assert action == "shutdownRequested"
        if self.delay_s is None:
            return
        parsed = [messages.parse(json.dumps(reply)) for reply in replies]
        timer = threading.Timer(self.delay_s, lambda: [self.replies.put(p) for p in parsed])
        self.timers.append(timer)
        timer.start()

    def join(self) -> None:
        for timer in self.timers:
            timer.cancel()
            timer.join(5.0)


def consumer_for(coordinator, **config) -> ShardConsumer:
    settings = MultiLangConfig(
        executable_name="app", stream_name="s", application_name="a", **config
    )
    lease = coordinator.held_leases()[SHARD]
    return ShardConsumer(lease, settings, coordinator, None, lambda _consumer: None)


def test_an_answer_slower_than_the_stop_grace_still_ends_the_handoff_gracefully(coordinator):
    child = SlowToShutDown(
        [
            ("shutdownRequested", [status("shutdownRequested")]),
            ("leaseLost", [status("leaseLost")]),
        ],
        delay_s=4 * GRACE_S,
    )
    consumer = consumer_for(coordinator, shutdown_grace_s=GRACE_S)
    consumer.request_handoff()
    try:
        outcome = consumer._stopping(make(child, coordinator))
    finally:
        child.join()
    assert outcome is Outcome.SHUTDOWN  # not HUNG: the daemon goes on
    assert [m["action"] for m in child.sent] == ["shutdownRequested", "leaseLost"]


def test_a_child_that_never_answers_is_stopped_at_the_handoff_timeout(coordinator, caplog):
    coordinator.membership.handoff_timeout_s = 2 * GRACE_S
    child = SlowToShutDown([("shutdownRequested", [])], delay_s=None)
    consumer = consumer_for(coordinator, shutdown_grace_s=GRACE_S)
    consumer.request_handoff()
    with caplog.at_level(logging.WARNING):
        outcome = consumer._stopping(make(child, coordinator))
    assert outcome is Outcome.LEASE_LOST  # the lease moves; the daemon goes on
    assert "the handoff's timeout" in caplog.text and SHARD in caplog.text


def test_with_timeout_in_seconds_a_silent_child_is_hung_as_in_the_java_daemon(coordinator):
    child = SlowToShutDown([("shutdownRequested", [])], delay_s=None)
    consumer = consumer_for(coordinator, shutdown_grace_s=GRACE_S, timeout_s=2 * GRACE_S)
    consumer.request_handoff()
    with pytest.raises(ChildHung, match=r"shutdownRequested within 0\.4s"):
        consumer._stopping(make(child, coordinator, timeout_s=2 * GRACE_S))


def test_a_stop_still_bounds_the_answer_by_the_grace(coordinator):
    child = SlowToShutDown([("shutdownRequested", [])], delay_s=None)
    consumer = consumer_for(coordinator, shutdown_grace_s=GRACE_S)
    consumer.request_shutdown()
    with pytest.raises(ChildHung, match=re.escape(f"within {GRACE_S:g}s")):
        consumer._stopping(make(child, coordinator))
