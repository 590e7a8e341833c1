"""The DStream API (``KinesisUtils.createStream``) and the driver/executor machinery."""

from .api import (
    InitialPositionInStream,
    KinesisInitialPositions,
    KinesisUtils,
    MetricsLevel,
    SparkAWSCredentials,
    progress,
    utf8_decoder,
)
from .builder import KinesisInputDStream

__all__ = [
    "InitialPositionInStream",
    "KinesisInitialPositions",
    "KinesisInputDStream",
    "KinesisUtils",
    "MetricsLevel",
    "SparkAWSCredentials",
    "progress",
    "utf8_decoder",
]
