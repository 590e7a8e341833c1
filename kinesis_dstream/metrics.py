"""Metrics at the KCL's levels, published in batches off the hot path.

One interface, :class:`Metrics` (``add`` a value; ``publish`` what has accumulated), and
three sinks: CloudWatch (PutMetricData), the log, and nothing. Values are kept as
statistic sets (count, sum, min, max) per metric and dimensions, so a publish is a single
PutMetricData call of at most 1,000 data points however many values were added.

Levels, as the KCL's: NONE publishes nothing; SUMMARY publishes per-receiver aggregates;
DETAILED adds a ShardId dimension to the per-shard metrics, when ``metricsEnabledDimensions``
allows it. The namespace is the application name and every data point carries the
``Operation`` dimension, as the KCL's do.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, Callable, Optional

log = logging.getLogger(__name__)

DETAILED, SUMMARY, NONE = 0, 1, 2
LEVEL_NAMES = {DETAILED: "DETAILED", SUMMARY: "SUMMARY", NONE: "NONE"}
OPERATION = "Operation"
SHARD_ID = "ShardId"
WORKER_ID = "WorkerIdentifier"
#: The KCL's default: Operation always, ShardId where the level allows it.
DEFAULT_DIMENSIONS = frozenset({OPERATION, SHARD_ID})
MAX_DATUMS_PER_CALL = 1000
_FAILURE_LOG_INTERVAL_S = 60.0


class Metrics:
    """Accumulates values and publishes them as statistic sets; thread-safe.

    ``add(name, value, unit, operation, shard_id=None)``: a shard's value is kept per shard
    only at DETAILED (and when ShardId is an enabled dimension); otherwise it joins the
    receiver's aggregate. Subclasses implement :meth:`_send`.
    """

    def __init__(
        self,
        level: int = DETAILED,
        dimensions: frozenset = DEFAULT_DIMENSIONS,
        worker_id: Optional[str] = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if level not in LEVEL_NAMES:
            raise ValueError(f"unknown metrics level {level!r}; accepted: {LEVEL_NAMES}")
        self.level = level
        self.per_shard = level == DETAILED and SHARD_ID in dimensions
        self.worker_id = worker_id if WORKER_ID in dimensions else None
        self._clock = clock
        self._lock = threading.Lock()
        self._stats: dict = {}  # (name, unit, dimensions) -> [count, sum, min, max]
        self.calls = 0
        self.failures = 0
        self.dropped_datums = 0
        self._last_failure_log: Optional[float] = None

    def add(
        self, name: str, value: float, unit: str, operation: str, shard_id: Optional[str] = None
    ) -> None:
        if self.level == NONE:
            return
        dims: tuple = ((OPERATION, operation),)
        if shard_id is not None and self.per_shard:
            dims += ((SHARD_ID, shard_id),)
        if self.worker_id is not None:
            dims += ((WORKER_ID, self.worker_id),)
        key = (name, unit, dims)
        with self._lock:
            stat = self._stats.get(key)
            if stat is None:
                self._stats[key] = [1, value, value, value]
            else:
                stat[0] += 1
                stat[1] += value
                stat[2] = min(stat[2], value)
                stat[3] = max(stat[3], value)

    def publish(self) -> int:
        """Send what accumulated since the last publish in one call; returns data points."""
        with self._lock:
            stats, self._stats = self._stats, {}
        if not stats:
            return 0
        datums = [
            {
                "MetricName": name,
                "Unit": unit,
                "Dimensions": [{"Name": k, "Value": v} for k, v in dims],
                "StatisticValues": {
                    "SampleCount": float(count),
                    "Sum": float(total),
                    "Minimum": float(low),
                    "Maximum": float(high),
                },
            }
            for (name, unit, dims), (count, total, low, high) in sorted(stats.items())
        ]
        if len(datums) > MAX_DATUMS_PER_CALL:
            self.dropped_datums += len(datums) - MAX_DATUMS_PER_CALL
            log.warning(
                "%d metric data points over PutMetricData's 1,000 were dropped",
                len(datums) - MAX_DATUMS_PER_CALL,
            )
            datums = datums[:MAX_DATUMS_PER_CALL]
        self.calls += 1
        try:
            self._send(datums)
        except Exception as exc:  # metrics never stop the stream
            self.failures += 1
            now = self._clock()
            if (
                self._last_failure_log is None
                or now - self._last_failure_log >= _FAILURE_LOG_INTERVAL_S
            ):
                self._last_failure_log = now
                log.warning(
                    "publishing %d metric data points failed (%d failures so far; logged "
                    "at most once a minute): %s",
                    len(datums),
                    self.failures,
                    exc,
                )
            return 0
        return len(datums)

    def _send(self, datums: list) -> None:
        raise NotImplementedError


class NullMetrics(Metrics):
    """Level NONE: nothing is kept or sent."""

    def __init__(self) -> None:
        super().__init__(NONE)

    def _send(self, datums: list) -> None:
        pass


class LogMetrics(Metrics):
    """Writes each publish to the log at INFO: metrics without CloudWatch."""

    def _send(self, datums: list) -> None:
        for datum in datums:
            dims = ",".join(f"{d['Name']}={d['Value']}" for d in datum["Dimensions"])
            values = datum["StatisticValues"]
            log.info(
                "metric %s[%s] n=%d sum=%g max=%g %s",
                datum["MetricName"],
                dims,
                values["SampleCount"],
                values["Sum"],
                values["Maximum"],
                datum["Unit"],
            )


class CloudWatchMetrics(Metrics):
    """PutMetricData into the namespace ``namespace`` (the application name)."""

    def __init__(self, client: Any, namespace: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.client = client
        self.namespace = namespace

    def _send(self, datums: list) -> None:
        self.client.put_metric_data(Namespace=self.namespace, MetricData=datums)


def put_gauge(
    client: Any, namespace: str, name: str, value: float, unit: str, dimensions: dict
) -> None:
    """One data point now (a gauge, such as Glue's consumer lag): one PutMetricData."""
    client.put_metric_data(
        Namespace=namespace,
        MetricData=[
            {
                "MetricName": name,
                "Dimensions": [{"Name": k, "Value": v} for k, v in dimensions.items()],
                "Value": float(value),
                "Unit": unit,
            }
        ],
    )
