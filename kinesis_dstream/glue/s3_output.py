"""``write_dynamic_frame`` to S3 (``connection_type="s3"``): where and how files go.

Formats ``json``, ``csv``, ``parquet``, ``glueparquet`` (written as Parquet), ``avro``;
``connection_options`` ``path`` and ``partitionKeys`` (Hive-style directories, as Glue
writes them) and ``compression`` (JSON and CSV: ``gzip``, ``bzip2``; refused for the
others); ``format_options`` as Glue names them (CSV: ``separator``, ``quoteChar``,
``escaper``, ``writeHeader``; Parquet: ``compression``; Avro: ``version`` 1.8, as it is
written). Where Spark can write the path itself (a Hadoop FileSystem it can load for its
scheme: ``s3://`` on EMR or Glue, ``s3a://`` with hadoop-aws, any local path) Spark's own
writer writes it, appending; where it cannot (pip-installed PySpark has no S3 filesystem
it can load) the executors write the files in Python (:mod:`.file_sink`). Either way a
retried batch may write its records again: at least once, as Glue.
"""

from __future__ import annotations

import csv
import io
import json
import logging
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

from ..aws import resolve_region
from ..dstream.spark_internals import hadoop_can_write, jvm_has_class
from ..sql.ends.s3 import is_s3_url, parse_s3_url
from .errors import GlueError, not_provided
from .fields import top_column
from .file_formats import LINE_COLUMN, LINE_COMPRESSION, PARQUET_COMPRESSION
from .file_sink import KEY_PREFIX, SINK_NAME
from .options import option_text

log = logging.getLogger(__name__)

FORMATS = {
    "json": "json",
    "csv": "csv",
    "parquet": "parquet",
    "glueparquet": "parquet",
    "avro": "avro",
}
CONNECTION_KEYS = ("path", "partitionKeys", "compression")
FORMAT_OPTION_KEYS = {
    "json": (),
    "csv": ("separator", "quoteChar", "escaper", "writeHeader"),
    "parquet": ("compression",),
    "avro": ("version",),
}
AVRO_FILE_FORMAT = "org.apache.spark.sql.avro.AvroFileFormat"
#: Glue's Avro format_options version this layer writes (with logical types).
AVRO_VERSIONS = ("1.8",)
PYTHON_SCHEMES = ("s3", "s3a", "", "file")


@dataclass(frozen=True)
class FileTarget:
    """A checked S3 (or local) output: path, format and their options."""

    path: str
    fmt: str
    partition_keys: tuple = ()
    compression: str = "none"
    separator: str = ","
    quote: str = '"'
    escape: str = "\\"
    header: bool = True

    @classmethod
    def parse(
        cls, connection_options: Mapping[str, Any], fmt: Any, format_options: Mapping[str, Any]
    ) -> FileTarget:
        name = str(fmt or "").strip().lower()
        if name not in FORMATS:
            raise not_provided(
                f"write_dynamic_frame to s3 in format {fmt!r}", f"formats: {', '.join(FORMATS)}"
            )
        kind = FORMATS[name]
        extra = sorted(set(connection_options) - set(CONNECTION_KEYS))
        if extra:
            raise not_provided(
                f"s3 connection_options {extra}", f"known: {', '.join(CONNECTION_KEYS)}"
            )
        extra = sorted(set(format_options or {}) - set(FORMAT_OPTION_KEYS[kind]))
        if extra:
            raise not_provided(
                f"{name} format_options {extra}", f"known: {FORMAT_OPTION_KEYS[kind] or 'none'}"
            )
        path = option_text(connection_options.get("path") or "").strip()
        if not path:
            raise GlueError("write_dynamic_frame to s3: connection_options 'path' is required")
        keys = connection_options.get("partitionKeys") or []
        if isinstance(keys, str):
            keys = [keys]
        options = dict(format_options or {})
        given = connection_options.get("compression")
        if given is not None and kind not in ("json", "csv"):
            where = "format_options={'compression': ...}" if kind == "parquet" else "none here"
            raise GlueError(
                f"s3 connection_options compression={given!r} applies to json and csv; "
                f"{name} takes its compression from {where}"
            )
        if kind == "parquet":
            compression = option_text(options.get("compression", "snappy")).lower()
            compression = "none" if compression == "uncompressed" else compression
            if compression not in PARQUET_COMPRESSION:
                raise GlueError(
                    f"format_options compression={compression!r}: one of {PARQUET_COMPRESSION}"
                )
        elif kind in ("json", "csv"):
            compression = option_text(given or "none").lower()
            if compression not in LINE_COMPRESSION:
                known = tuple(LINE_COMPRESSION)
                raise GlueError(f"connection_options compression={compression!r}: one of {known}")
        else:
            compression = "none"
            version = options.get("version")
            if version is not None and option_text(version).strip() not in AVRO_VERSIONS:
                raise GlueError(
                    f"avro format_options version={version!r}: files are written as Glue's "
                    f"version {AVRO_VERSIONS[0]} writes them (logical types date, "
                    "timestamp-micros, decimal); give that version or none"
                )
        return cls(
            path=path,
            fmt=kind,
            partition_keys=tuple(str(k) for k in keys),
            compression=compression,
            separator=option_text(options.get("separator", ",")),
            quote=option_text(options.get("quoteChar", '"')),
            escape=option_text(options.get("escaper", "\\")),
            header=option_text(options.get("writeHeader", "true")).lower() != "false",
        )


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
    sc = spark.sparkContext
    spark_writes = hadoop_can_write(sc, target.path) and (
        target.fmt != "avro" or jvm_has_class(sc, AVRO_FILE_FORMAT)
    )
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


def _spark_write(df: Any, target: FileTarget) -> None:
    options: dict = {}
    if target.fmt in ("json", "csv", "parquet"):
        # always given: Spark's own default (snappy for Parquet) is not the target's
        options["compression"] = target.compression
    if target.fmt == "csv":
        options.update(
            sep=target.separator,
            quote=target.quote,
            escape=target.escape,
            header=str(target.header).lower(),
        )
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
    file_options: dict = {"compression": target.compression}
    row = F.struct(*[top_column(c) for c in data])
    if target.fmt == "json":
        columns = [F.to_json(row).alias(LINE_COLUMN)]
    elif target.fmt == "csv":
        csv_options = {"sep": target.separator, "quote": target.quote, "escape": target.escape}
        columns = [F.to_csv(row, csv_options).alias(LINE_COLUMN)]
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


def _csv_line(values: list, target: FileTarget) -> str:
    out = io.StringIO()
    csv.writer(out, delimiter=target.separator, quotechar=target.quote, lineterminator="").writerow(
        values
    )
    return out.getvalue()
