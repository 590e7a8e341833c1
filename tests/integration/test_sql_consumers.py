"""The source's fan-out consumers on moto: a query that deregisters its consumer at a
graceful stop also deregisters, at its next start, those earlier runs left registered
when their drivers were killed before that stop."""

from __future__ import annotations

import logging

from kinesis_dstream.retrieval.consumers import ConsumerStatus, list_consumers
from kinesis_dstream.retrieval.streams import ensure_stream
from kinesis_dstream.sql.driver.fan_out import FanOutOptions, StreamConsumers

ACTIVE = ConsumerStatus.ACTIVE
QUERY = "0123456789abcdef"  # the query's id, as the checkpoint's offsets carry it


def test_a_restarted_query_deregisters_the_consumer_a_killed_run_left(kinesis, unique_name, caplog):
    ensure_stream(kinesis, unique_name, 1)
    options = FanOutOptions(require_deregistration=True)
    killed = StreamConsumers(kinesis, unique_name, 0, options)
    left = killed.arn(QUERY)  # that run's driver dies: no stop(), no deregistration
    other_query = StreamConsumers(kinesis, unique_name, 0, options)
    other = other_query.arn("fedcba9876543210")  # another query's: not touched
    restarted = StreamConsumers(kinesis, unique_name, 0, options)
    with caplog.at_level(logging.WARNING):
        mine = restarted.arn(QUERY)
    arns = {c.arn for c in list_consumers(kinesis, unique_name)}
    assert left not in arns and {mine, other} <= arns
    assert restarted.leftovers_deregistered == 1
    assert "left registered by an earlier run of this query" in caplog.text
    restarted.stop()
    other_query.stop()
    active = [c for c in list_consumers(kinesis, unique_name) if c.status is ACTIVE]
    assert active == []  # the graceful stops deregistered the rest
