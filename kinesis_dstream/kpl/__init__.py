"""KPL aggregated records: the format, de-aggregation (KCL-compatible), aggregation."""

from .aggregation import RecordAggregator, ShardMap
from .deaggregation import deaggregate, iter_deaggregate
from .format import (
    DEFAULT_MAX_AGGREGATE_BYTES,
    DIGEST_SIZE,
    MAGIC,
    MAX_AGGREGATE_BYTES,
    MAX_HASH_KEY,
    AggregatedRecord,
    DeaggregationStats,
    effective_hash_key,
    is_aggregated,
)
from .outside import OutsideShardTally

__all__ = [
    "DEFAULT_MAX_AGGREGATE_BYTES",
    "DIGEST_SIZE",
    "MAGIC",
    "MAX_AGGREGATE_BYTES",
    "MAX_HASH_KEY",
    "AggregatedRecord",
    "DeaggregationStats",
    "OutsideShardTally",
    "RecordAggregator",
    "ShardMap",
    "deaggregate",
    "effective_hash_key",
    "is_aggregated",
    "iter_deaggregate",
]
