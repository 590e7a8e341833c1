"""The DStream API (``KinesisUtils.createStream``) and the driver/executor machinery."""

from .api import (
    InitialPositionInStream,
    KinesisInitialPositions,
    KinesisInputDStream,
    KinesisUtils,
    MetricsLevel,
    SparkAWSCredentials,
    progress,
    utf8_decoder,
)

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
