"""kinesis_dstream: Kinesis DStreams for PySpark in pure Python.

A drop-in replacement for ``pyspark.streaming.kinesis`` that needs no JVM jar.
"""

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
from .errors import (
    DependencyError,
    KinesisDStreamError,
    KinesisServiceError,
    LeaseLostError,
    MessageHandlerError,
    ProducerError,
    StreamNotFoundError,
    ThrottledError,
)
from .producer import KinesisProducer
from .record import KinesisRecord

__version__ = "0.1.0"

__all__ = [
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
    "MessageHandlerError",
    "MetricsLevel",
    "ProducerError",
    "SparkAWSCredentials",
    "StreamNotFoundError",
    "ThrottledError",
    "progress",
    "utf8_decoder",
]
