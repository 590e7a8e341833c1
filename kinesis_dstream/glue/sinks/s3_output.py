"""``write_dynamic_frame`` to S3 (``connection_type="s3"``): where and how files go.

The target (format, path, partitions, options) is :class:`~.file_target.FileTarget`.
Where Spark can write the path itself (a Hadoop FileSystem it can load for its scheme:
``s3://`` on EMR or Glue, ``s3a://`` with hadoop-aws, any local path) and can make the
files as asked, Spark's own writer writes it, appending; where it cannot (pip-installed
PySpark has no S3 filesystem it can load and no spark-avro jar; Spark's CSV writer cannot
turn quoting off) the executors write the files in Python (:mod:`.file_sink`). Either
way a retried batch may write its records again: at least once, as Glue.
"""

from __future__ import annotations

import csv
import io
import json
import logging
import time
import uuid
from typing import Any
from urllib.parse import urlparse

from ...aws import resolve_region
from ...spark_internals import hadoop_can_write, jvm_has_class
from ...sql.ends.s3 import is_s3_url, parse_s3_url
from ..errors import GlueError
from ..transforms.fields import top_column
from .avro_types import avro_17_columns
from .file_formats import LINE_COLUMN
from .file_sink import KEY_PREFIX, SINK_NAME
from .file_target import FileTarget

__all__ = ["FileTarget", "check_s3_output", "write_files"]

log = logging.getLogger(__name__)

#: The spark-avro jar's data source (Spark 4's own jars carry AvroFileFormat, yet
#: ``format("avro")`` fails with AVRO_DATA_SOURCE_NOT_ENABLED without this jar).
AVRO_DATA_SOURCE = "org.apache.spark.sql.v2.avro.AvroDataSourceV2"
PYTHON_SCHEMES = ("s3", "s3a", "", "file")


def write_files(spark: Any, df: Any, target: FileTarget) -> None:
    """Append ``df`` under ``target.path``; never collects its rows on the driver."""
    missing = [k for k in target.partition_keys if k not in df.columns]
    if missing:
        raise GlueError(
            f"partitionKeys {missing} are not columns of the frame; it has {df.columns}"
        )
    data = [c for c in df.columns if c not in target.partition_keys]
    if not data:
        raise GlueError(
            f"every column of the frame is a partition key ({df.columns}); nothing to write"
        )
    if target.fmt == "avro" and target.avro_version == "1.7":
        df = avro_17_columns(df)
    sc = spark.sparkContext
    spark_writes = hadoop_can_write(sc, target.path) and _spark_can_write(sc, target)
    if spark_writes:
        _spark_write(df, target)
    elif urlparse(target.path).scheme in PYTHON_SCHEMES:
        check_s3_output(target.path)
        _python_write(df, target, data)
    else:
        raise GlueError(
            f"path {target.path!r}: this Spark has no FileSystem for its scheme, and the "
            "executors write only s3://, s3a:// or local paths"
        )
    log.info(
        "wrote the frame to %s as %s%s (%s)",
        target.path,
        target.fmt,
        f", partitioned by {list(target.partition_keys)}" if target.partition_keys else "",
        "Spark's writer" if spark_writes else "from the executors",
    )


def check_s3_output(path: str) -> None:
    """An S3 path written from the executors must name a bucket and needs a region,
    resolved as for every AWS client of the library (never a silent us-east-1): either
    missing is one line here, on the driver, before any task runs."""
    if not is_s3_url(path):
        return
    try:
        parse_s3_url(path)
        resolve_region()
    except ValueError as exc:
        raise GlueError(f"write_dynamic_frame to {path}: {exc}") from None


def _spark_can_write(sc: Any, target: FileTarget) -> bool:
    """Whether Spark's own writer makes the files as the target says: Avro needs the
    spark-avro jar (pip-installed PySpark has none) and makes no Avro "archive"; Spark's
    CSV writer cannot turn quoting off."""
    if target.fmt == "avro":
        return target.compression == "none" and jvm_has_class(sc, AVRO_DATA_SOURCE)
    return not (target.fmt == "csv" and target.quote is None)


def _spark_write(df: Any, target: FileTarget) -> None:
    options: dict = {}
    if target.fmt in ("json", "csv", "parquet"):
        # always given: Spark's own default (snappy for Parquet) is not the target's
        options["compression"] = target.compression
    elif target.fmt == "avro":
        options["compression"] = (
            "uncompressed" if target.avro_codec == "null" else target.avro_codec
        )
    if target.fmt == "csv":
        options.update(csv_writer_options(target), header=str(target.header).lower())
    writer = df.write.mode("append").format(target.fmt).options(**options)
    if target.partition_keys:
        writer = writer.partitionBy(*target.partition_keys)
    writer.save(target.path)


def _python_write(df: Any, target: FileTarget, data: list) -> None:
    from pyspark.sql import functions as F

    keys = [
        top_column(k).cast("string").alias(f"{KEY_PREFIX}{i}")
        for i, k in enumerate(target.partition_keys)
    ]
    file_options: dict = {"compression": target.compression, "avro_codec": target.avro_codec}
    row = F.struct(*[top_column(c) for c in data])
    if target.fmt == "json":
        columns = [F.to_json(row).alias(LINE_COLUMN)]
    elif target.fmt == "csv":
        columns = [_csv_column(row, target).alias(LINE_COLUMN)]
        if target.header:
            file_options["header"] = _csv_line(data, target)
    else:
        columns = [top_column(c) for c in data]
    (
        df.select(*keys, *columns)
        .write.format(SINK_NAME)
        .mode("append")
        .option("path", target.path)
        .option("format", target.fmt)
        .option("partition_keys", json.dumps(list(target.partition_keys)))
        .option("start_millis", str(int(time.time() * 1000)))
        .option("token", uuid.uuid4().hex[:8])
        .option("file_options", json.dumps(file_options))
        .save()
    )


def csv_writer_options(target: FileTarget) -> dict:
    """Spark's CSV writing options for ``target`` (its writer's and ``to_csv``'s): a quote
    inside a quoted value doubled (the escape character is the quote, RFC 4180), and
    values kept whole (Spark's CSV writer trims leading and trailing spaces by default).
    Without quoting (``quoteChar`` -1) Spark quotes with NUL, its "no quote" character,
    where a value needs quoting: see :func:`_csv_column`."""
    quote = "\u0000" if target.quote is None else target.quote
    return {
        "sep": target.separator,
        "quote": quote,
        "escape": quote,
        "ignoreLeadingWhiteSpace": "false",
        "ignoreTrailingWhiteSpace": "false",
    }


def _csv_column(row: Any, target: FileTarget) -> Any:
    """Each row as one CSV line (Spark's ``to_csv``). Without quoting, the NULs Spark
    quotes with are taken out, so values are written as they are, as Glue writes them (a
    value holding the separator then reads back as two)."""
    from pyspark.sql import functions as F

    line = F.to_csv(row, csv_writer_options(target))
    return line if target.quote is not None else F.regexp_replace(line, "\u0000", "")


def _csv_line(values: list, target: FileTarget) -> str:
    if target.quote is None:
        return target.separator.join(values)
    out = io.StringIO()
    csv.writer(out, delimiter=target.separator, quotechar=target.quote, lineterminator="").writerow(
        values
    )
    return out.getvalue()
