"""``KinesisUtils`` as the stand-in ``pyspark.streaming.kinesis`` serves it: this
library's, whose ``createStream`` first carries the stand-in to the executors' Python
workers on any cluster manager (:func:`carry_to_workers`)."""

from __future__ import annotations

import functools
from typing import Any, Optional

from ..dstream import api
from ..python_path import put_first
from .standin import SHIM_DIR


def carry_to_workers(spark_context: Optional[Any]) -> None:
    """Put :data:`SHIM_DIR` first on ``spark_context``'s environment, so the executors'
    Python workers install the stand-in too (those started for functions shipped from
    now on: an environment that changes starts new ones, so a second call changes
    nothing)."""
    if spark_context is not None:
        put_first(SHIM_DIR, spark_context=spark_context)


class KinesisUtils(api.KinesisUtils):
    """This library's ``KinesisUtils`` as ``pyspark.streaming.kinesis`` serves it."""

    @staticmethod
    @functools.wraps(api.KinesisUtils.createStream)
    def createStream(ssc: Any, *args: Any, **kwargs: Any) -> Any:
        carry_to_workers(getattr(ssc, "sparkContext", None))
        return api.KinesisUtils.createStream(ssc, *args, **kwargs)
