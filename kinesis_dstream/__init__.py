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
from .producer import KinesisProducer
from .record import KinesisRecord

__version__ = "0.1.0"

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
