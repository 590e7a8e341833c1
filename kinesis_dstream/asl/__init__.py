"""kinesis-asl scripts with no line changed (docs/migrate-dstream.md).

``kinesis-dstream submit [spark-submit options] SCRIPT [ARGS]`` is spark-submit with
``pyspark.streaming.kinesis`` served by this library in the driver and the executors'
Python workers (:mod:`.submit`); :func:`install` does the same in a program of your own
(a notebook), before its first ``import pyspark.streaming.kinesis``. Neither happens
unless asked: without them ``pyspark.streaming.kinesis`` is PySpark's own.
"""

from __future__ import annotations

from .standin import install

__all__ = ["install"]
