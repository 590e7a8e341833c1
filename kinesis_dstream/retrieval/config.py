"""Reading knobs, declared once: :class:`ReaderConfig` and the Spark settings it honours."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ..backoff import Backoff
from ..spark_conf import conf_get, parse_positive_int, parse_time_ms

MAX_RECORDS_PER_CALL = 10_000
SPARK_RETRY_WAIT_TIME = "spark.streaming.kinesis.retry.waitTime"
SPARK_RETRY_MAX_ATTEMPTS = "spark.streaming.kinesis.retry.maxAttempts"
#: The first retry's wait doubles on each further retry, as in kinesis-asl; this caps it.
MAX_READ_RETRY_DELAY_S = 10.0
#: spark.streaming.kinesis.retry.waitTime (100ms) and .maxAttempts (3) defaults.
DEFAULT_READ_BACKOFF = Backoff(
    initial_delay_s=0.1, max_delay_s=MAX_READ_RETRY_DELAY_S, max_attempts=3
)


@dataclass(frozen=True)
class ReaderConfig:
    """Reading knobs, defaults declared once. Units are in the names."""

    min_call_interval_s: float = 0.2  # <= 5 GetRecords a second per shard
    max_records_per_call: int = MAX_RECORDS_PER_CALL
    backoff: Backoff = DEFAULT_READ_BACKOFF
    #: The KCL's rule for KPL aggregates holding a user record outside the shard's hash
    #: range: drop the aggregate (counted). Off: such records are delivered and counted.
    drop_outside_shard: bool = False

    def __post_init__(self) -> None:
        if not 1 <= self.max_records_per_call <= MAX_RECORDS_PER_CALL:
            raise ValueError(
                f"max_records_per_call must be in [1, {MAX_RECORDS_PER_CALL}], "
                f"got {self.max_records_per_call}"
            )
        if self.min_call_interval_s < 0:
            raise ValueError(f"min_call_interval_s must be >= 0, got {self.min_call_interval_s}")

    @classmethod
    def from_spark_conf(cls, conf: Any, **overrides: Any) -> ReaderConfig:
        """Honour ``spark.streaming.kinesis.retry.waitTime`` and ``.maxAttempts``.

        ``conf`` is a SparkConf, a dict or None (defaults 100ms and 3, as in kinesis-asl);
        ``overrides`` set any other field.
        """
        backoff = DEFAULT_READ_BACKOFF
        wait = conf_get(conf, SPARK_RETRY_WAIT_TIME)
        if wait is not None:
            wait_s = parse_time_ms(wait, SPARK_RETRY_WAIT_TIME) / 1000.0
            backoff = replace(
                backoff, initial_delay_s=wait_s, max_delay_s=max(wait_s, MAX_READ_RETRY_DELAY_S)
            )
        attempts = conf_get(conf, SPARK_RETRY_MAX_ATTEMPTS)
        if attempts is not None:
            backoff = replace(
                backoff, max_attempts=parse_positive_int(attempts, SPARK_RETRY_MAX_ATTEMPTS)
            )
        return cls(**{"backoff": backoff, **overrides})


#: The defaults, for signatures.
DEFAULT_READER_CONFIG = ReaderConfig()
