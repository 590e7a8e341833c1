"""How far behind a query's stream is: each shard's MillisBehindLatest (from the peeks and
the recorded range ends) and Glue's consumer-lag metric (``emitConsumerLagMetrics``)."""

from __future__ import annotations

import logging
from typing import Any, Optional

from ...metrics import put_gauge

log = logging.getLogger(__name__)

#: Glue's consumer-lag metric, published once per micro-batch.
CONSUMER_LAG_METRIC = "glue.driver.streaming.maxConsumerLagInMs"
CONSUMER_LAG_NAMESPACE = "Glue"


def behind_latest_summary(lags_ms: list, shards: dict) -> dict:
    """The Databricks Kinesis source's per-source metric names, for the progress:
    MillisBehindLatest over the shards that reported one, and the shards listed (closed
    ones: with an ending sequence number)."""
    return {
        "avgMsBehindLatest": sum(lags_ms) / len(lags_ms) if lags_ms else None,
        "maxMsBehindLatest": max(lags_ms) if lags_ms else None,
        "minMsBehindLatest": min(lags_ms) if lags_ms else None,
        "numTotalShards": len(shards),
        "numClosedShards": sum(1 for shard in shards.values() if shard.closed),
    }


class StreamLag:
    """One stream's lag as the source runner learns it; lives in the runner process."""

    def __init__(self, stream: str, connection: Any, publish: bool) -> None:
        self.stream = stream
        self._connection = connection
        self._publish = publish
        #: shard id -> MillisBehindLatest at its last peek or range end (None: unknown).
        self.by_shard: dict = {}
        self.metrics_published = 0
        self.metric_failures = 0

    def note(self, shard_id: str, millis_behind_latest: Optional[int]) -> None:
        self.by_shard[shard_id] = millis_behind_latest

    def shard_lags(self) -> dict:
        """(stream, shard) -> MillisBehindLatest (None: unknown)."""
        return {(self.stream, shard): lag for shard, lag in self.by_shard.items()}

    def consumer_lag(self, lag_ms: int) -> None:
        """A micro-batch's oldest record's age: Glue's metric when asked for; a failed
        publish is logged, never fatal."""
        if not self._publish:
            return
        try:
            put_gauge(
                self._connection.client_spec("cloudwatch").client(),
                CONSUMER_LAG_NAMESPACE,
                CONSUMER_LAG_METRIC,
                lag_ms,
                "Milliseconds",
                {"StreamName": self.stream},
            )
            self.metrics_published += 1
        except Exception as exc:
            self.metric_failures += 1
            log.warning("could not publish %s for %s: %s", CONSUMER_LAG_METRIC, self.stream, exc)
