"""kinesis_dstream: Kinesis DStreams for PySpark in pure Python.

A drop-in replacement for ``pyspark.streaming.kinesis`` that needs no JVM jar.

The DStream API and the producer load on first use: Spark starts a new Python process
for every Structured Streaming query's source runner, and what ``import kinesis_dstream``
loads there (the whole DStream machinery, ~60 ms of CPU) delayed each query's start.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import TYPE_CHECKING, Any

from .errors import (
    CheckpointError,
    CredentialsError,
    DependencyError,
    KinesisDStreamError,
    KinesisServiceError,
    LeaseLostError,
    LeaseTableError,
    MessageHandlerError,
    ProducerError,
    RecordsLostError,
    StreamNotFoundError,
    ThrottledError,
)
from .record import KinesisRecord

if TYPE_CHECKING:  # for type checkers and the API reference; at run time: __getattr__
    from .dstream import (
        InitialPositionInStream,
        KinesisInitialPositions,
        KinesisInputDStream,
        KinesisUtils,
        MetricsLevel,
        SparkAWSCredentials,
        progress,
        utf8_decoder,
    )
    from .producer import KinesisProducer

__version__ = "0.1.0"

#: Public names loaded on first use, and the module each comes from.
_LAZY = {
    "InitialPositionInStream": ".dstream",
    "KinesisInitialPositions": ".dstream",
    "KinesisInputDStream": ".dstream",
    "KinesisUtils": ".dstream",
    "MetricsLevel": ".dstream",
    "SparkAWSCredentials": ".dstream",
    "progress": ".dstream",
    "utf8_decoder": ".dstream",
    "KinesisProducer": ".producer",
}

__all__ = [
    "CheckpointError",
    "CredentialsError",
    "DependencyError",
    "InitialPositionInStream",
    "KinesisDStreamError",
    "KinesisInitialPositions",
    "KinesisInputDStream",
    "KinesisProducer",
    "KinesisRecord",
    "KinesisServiceError",
    "KinesisUtils",
    "LeaseLostError",
    "LeaseTableError",
    "MessageHandlerError",
    "MetricsLevel",
    "ProducerError",
    "RecordsLostError",
    "SparkAWSCredentials",
    "StreamNotFoundError",
    "ThrottledError",
    "progress",
    "utf8_decoder",
]


if not TYPE_CHECKING:  # a type checker sees the imports above, and no catch-all

    def __getattr__(name: str) -> Any:
        """A lazy public name (loaded once, then a plain attribute), or a submodule of
        that name, as after ``import kinesis_dstream.<name>`` (the eager imports of the
        DStream API bound ``dstream``, ``producer`` and their own imports here)."""
        module = _LAZY.get(name)
        if module is not None:
            value = getattr(importlib.import_module(module, __name__), name)
            globals()[name] = value
            return value
        if not name.startswith("__") and importlib.util.find_spec(f"{__name__}.{name}"):
            return importlib.import_module(f"{__name__}.{name}")
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list:
    return sorted(set(globals()) | set(__all__))
