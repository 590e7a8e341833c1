"""``pyspark.streaming.kinesis`` as this library serves it (:mod:`.standin`).

The stand-in's import hook runs this file as the module ``pyspark.streaming.kinesis``,
so a script written for the JVM kinesis-asl imports this library's ``KinesisUtils``
and constants under PySpark's names. It has every name PySpark's module has (its
``__all__``, and ``StorageLevel``, ``DStream``, ``StreamingContext``, which scripts also
import from it) and this library's own beside them. It defines nothing: each name is the
library's object (functions pickled to executors name their own modules).
"""

# Beside __all__, the names PySpark's module imports (scripts import them from it too)
# and this library's own: importable, not star-exported, as in PySpark's module.
from pyspark.storagelevel import StorageLevel  # noqa: F401
from pyspark.streaming import DStream  # noqa: F401
from pyspark.streaming.context import StreamingContext  # noqa: F401

from kinesis_dstream.asl.kinesis_utils import KinesisUtils
from kinesis_dstream.dstream.api import (  # noqa: F401
    InitialPositionInStream,
    KinesisInitialPositions,
    MetricsLevel,
    SparkAWSCredentials,
    progress,
    utf8_decoder,
)
from kinesis_dstream.dstream.builder import KinesisInputDStream  # noqa: F401

__all__ = ["InitialPositionInStream", "KinesisUtils", "MetricsLevel", "utf8_decoder"]

#: Tells this module from PySpark's (:data:`kinesis_dstream.asl.standin.MARKER`).
__kinesis_dstream_standin__ = True
