"""The picklable settings of one input stream, defaults declared once.

A :class:`StreamSettings` is what Spark pickles into its checkpoint (inside the batch
function), so it holds no client, thread, lock or credential: explicit credentials stay
in the driver's memory (kept by :mod:`.dstream.context`), referenced by ``stream_id``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Callable, Optional

from ..arns import note_arn
from ..leases.timing import (
    DEFAULT_FAILOVER_TIME_S,
    DEFAULT_MAX_LEASES_TO_STEAL,
    DEFAULT_SHARD_SYNC_INTERVAL_S,
)
from ..retrieval.idle import DEFAULT_MAX_IDLE_WAIT_S

#: createStream's default fetch interval is the batch interval within these bounds
#: (:func:`default_fetch_interval_s`); 1 s is the KCL's idle time between reads.
DEFAULT_FETCH_INTERVAL_S = 1.0
#: A round makes one GetRecords per shard; Kinesis allows 5 a second per shard.
MIN_FETCH_INTERVAL_S = 0.2
DEFAULT_MAX_RECORDS_PER_FETCH = 10_000
DEFAULT_MAX_BUFFER_RECORDS = 200_000
DEFAULT_MAX_BUFFER_BYTES = 256 * 1024 * 1024
DEFAULT_RETAIN_S = 60.0
DEFAULT_METRICS_INTERVAL_S = 10.0
#: The default grouping's largest group: a round partition is one cached block of its
#: group's pages (up to 10 MiB a shard in a catch-up); 16 made 32 tasks (16 waves on 2
#: cores) of a 512-shard round.
MAX_AUTO_SHARDS_PER_TASK = 64
#: retrievalMode: how rounds read (the KCL's names).
POLLING, FANOUT = "POLLING", "FANOUT"


@dataclass(frozen=True)
class StreamSettings:
    """Everything a receiver needs to (re)build itself, and nothing secret."""

    stream_id: str
    app_name: str
    stream_name: str
    endpoint_url: Optional[str]
    region_name: str
    initial_position: str  # LATEST, TRIM_HORIZON or AT_TIMESTAMP
    checkpoint_interval_s: float
    storage_level: Any
    transform: Callable[[Any], Any]  # KinesisRecord -> what the DStream holds
    initial_timestamp: Optional[datetime] = None
    metrics_level: int = 0
    metrics_dimensions: frozenset = frozenset()
    dynamodb_endpoint_url: Optional[str] = None
    cloudwatch_endpoint_url: Optional[str] = None
    failover_time_s: float = DEFAULT_FAILOVER_TIME_S
    max_leases_for_worker: Optional[int] = None
    max_leases_to_steal: int = DEFAULT_MAX_LEASES_TO_STEAL
    shard_sync_interval_s: float = DEFAULT_SHARD_SYNC_INTERVAL_S
    fetch_interval_s: float = DEFAULT_FETCH_INTERVAL_S
    max_records_per_fetch: int = DEFAULT_MAX_RECORDS_PER_FETCH
    max_buffer_records: int = DEFAULT_MAX_BUFFER_RECORDS
    max_buffer_bytes: int = DEFAULT_MAX_BUFFER_BYTES
    #: Keep a round's cached data this long after its batch completes (windows reuse it;
    #: older data is re-read from Kinesis, exactly, if a window needs it).
    retain_s: float = DEFAULT_RETAIN_S
    worker_id: Optional[str] = None
    #: Publish accumulated metrics at most once per this many seconds (one call each).
    metrics_interval_s: float = DEFAULT_METRICS_INTERVAL_S
    #: Where metrics go when the level is not NONE: "cloudwatch" or "log".
    metrics_sink: str = "cloudwatch"
    #: Explicit credentials were given (they are not here): after a restart from a Spark
    #: checkpoint they are gone and the default credential chain is used.
    explicit_credentials: bool = False
    #: The KCL's drop of KPL aggregates holding a user record outside the shard's hash
    #: range (counted). Off by default: such records are delivered and counted.
    drop_aggregates_outside_shard: bool = False
    #: Shards one fetch-round task reads (concurrently); None: enough to make at most one
    #: task per core of the application (:func:`shards_per_task`).
    shards_per_task: Optional[int] = None
    #: The longest an idle shard waits between two rounds that read it; at or below
    #: ``fetch_interval_s``: every round reads every shard.
    max_idle_wait_s: float = DEFAULT_MAX_IDLE_WAIT_S
    #: The StreamingContext's batch interval: rounds are timed to end just before each
    #: batch time (dstream.pacing). None: rounds run free.
    batch_interval_s: Optional[float] = None
    #: The KCL's retrievalMode: POLLING (GetRecords) or FANOUT (SubscribeToShard through
    #: a registered consumer: ``consumer_arn``, else found or registered by
    #: ``consumer_name``, default the application name, as the KCL's FanOutConfig).
    retrieval_mode: str = POLLING
    consumer_name: Optional[str] = None
    consumer_arn: Optional[str] = None
    extra: dict = field(default_factory=dict)

    @property
    def fan_out(self) -> bool:
        return self.retrieval_mode == FANOUT

    def __post_init__(self) -> None:
        for name in (
            "checkpoint_interval_s",
            "failover_time_s",
            "fetch_interval_s",
            "shard_sync_interval_s",
            "metrics_interval_s",
        ):
            value = getattr(self, name)
            if not value > 0:
                raise ValueError(f"{name} must be > 0, got {value!r}")
        if self.shards_per_task is not None and not (
            isinstance(self.shards_per_task, int) and self.shards_per_task >= 1
        ):
            raise ValueError(
                f"shards_per_task must be an integer >= 1, got {self.shards_per_task!r}"
            )
        for name in ("max_records_per_fetch", "max_buffer_records", "max_buffer_bytes"):
            value = getattr(self, name)
            if not (isinstance(value, int) and value >= 1):
                raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
        if not 1 <= self.max_records_per_fetch <= 10_000:
            raise ValueError(
                f"max_records_per_fetch must be in [1, 10000] (GetRecords' limit), "
                f"got {self.max_records_per_fetch}"
            )
        if self.fetch_interval_s < MIN_FETCH_INTERVAL_S:
            raise ValueError(
                f"fetch_interval_s must be >= {MIN_FETCH_INTERVAL_S} (Kinesis allows 5 "
                f"GetRecords a second per shard), got {self.fetch_interval_s}"
            )
        if self.metrics_sink not in ("cloudwatch", "log"):
            raise ValueError(
                f"metrics sink must be 'cloudwatch' or 'log', got {self.metrics_sink!r}"
            )
        if not 0 <= self.max_idle_wait_s <= 60:  # shard iterators expire after 5 minutes
            raise ValueError(
                f"max_idle_wait_s (idleShardPollMs / 1000) must be in [0, 60], "
                f"got {self.max_idle_wait_s!r}"
            )
        if self.retain_s < 0:
            raise ValueError(f"retain_s must be >= 0, got {self.retain_s}")
        if self.retrieval_mode not in (POLLING, FANOUT):
            raise ValueError(
                f"retrievalMode must be {POLLING} or {FANOUT}, got {self.retrieval_mode!r}"
            )
        if not self.fan_out and (self.consumer_name or self.consumer_arn):
            given = "consumerArn" if self.consumer_arn else "consumerName"
            raise ValueError(f"{given} needs retrievalMode={FANOUT!r}")
        note_arn(self.consumer_arn, "consumerArn")


def default_fetch_interval_s(batch_interval_s: float) -> float:
    """One round per batch, timed to end just before the batch time (dstream.pacing):
    the batch interval, at most :data:`DEFAULT_FETCH_INTERVAL_S` (longer batches get
    several rounds, so a busy shard is read steadily) and at least
    :data:`MIN_FETCH_INTERVAL_S`. A second round per batch would add no latency, only a
    Spark job and a union of cached RDDs for the batch to read."""
    return min(DEFAULT_FETCH_INTERVAL_S, max(MIN_FETCH_INTERVAL_S, batch_interval_s))


def shards_per_task(settings: StreamSettings, shards: int, parallelism: int) -> int:
    """Shards per fetch-round task: the setting, else one task per core, at most
    :data:`MAX_AUTO_SHARDS_PER_TASK` (the task's Python worker holds at most its read
    threads' pages, but the round's cached block holds every page of the group)."""
    if settings.shards_per_task is not None:
        return settings.shards_per_task
    # One wave: a second task per core made a 4-shard round and its batch 2 waves of
    # tasks (round 0.17 -> 0.13 s and batch 0.22 -> 0.12 s with one, on local[2]); at
    # 512 shards, 16 a task made 32 tasks (16 waves on 2 cores) and rounds of 2-3 s.
    tasks = max(1, parallelism)
    return max(1, min(MAX_AUTO_SHARDS_PER_TASK, -(-shards // tasks)))
