"""Writing a batch's files from the executors, where Spark cannot write S3 itself.

A Python data source (``format("kinesis-dstream-glue-files")``, registered by the
GlueContext) whose tasks each write their rows into one file per partition directory,
Hive-style as Glue writes them (``ingest_year=2026/ingest_month=04/``; a null or empty
value is ``__HIVE_DEFAULT_PARTITION__``; special characters %-escaped as Spark does).
S3 through ``pyarrow.fs.S3FileSystem`` (credentials, region and ``AWS_ENDPOINT_URL``
resolved by boto3 on each executor, never shipped), a local directory through pyarrow's
local filesystem. Nothing is collected on the driver but the list of files written.

File names: ``run-<write start ms>-<write token>-part-r-<task partition:05d><ext>``.
They are the same for every attempt of a task, so a retried task overwrites its own
file. A write that fails deletes the files its finished tasks wrote (Spark's abort);
files a batch wrote before a later step of the batch failed stay, and the retried batch
writes them again under a new token: at least once, as Glue.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

import pyarrow as pa  # type: ignore[import-untyped]
from pyspark.sql.datasource import DataSource, DataSourceArrowWriter, WriterCommitMessage

from .file_formats import EXTENSIONS, LINE_COMPRESSION, open_file

log = logging.getLogger(__name__)

SINK_NAME = "kinesis-dstream-glue-files"
KEY_PREFIX = "__key_"
DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"
#: The characters Spark escapes in partition directory names (ExternalCatalogUtils).
_ESCAPED = set("\"#%'*/:=?\\\x7f{[]^") | {chr(c) for c in range(1, 32)}


def escape_path_name(value: str) -> str:
    return "".join(f"%{ord(c):02X}" if c in _ESCAPED else c for c in value)


def partition_dir(keys: list, values: tuple) -> str:
    parts = []
    for key, value in zip(keys, values):
        text = DEFAULT_PARTITION if value is None or value == "" else escape_path_name(value)
        parts.append(f"{escape_path_name(key)}={text}")
    return "/".join(parts)


def open_filesystem(path: str) -> tuple:
    """(pyarrow filesystem, base path in it, whether directories must be made) for an
    ``s3://``, ``s3a://`` or local path (S3 has no directories to make)."""
    from pyarrow import fs as pafs

    parsed = urlparse(path)
    if parsed.scheme in ("s3", "s3a"):
        base = f"{parsed.netloc}/{parsed.path.strip('/')}".rstrip("/")
        return pafs.S3FileSystem(**s3_settings()), base, False
    if parsed.scheme in ("", "file"):
        local = os.path.abspath(parsed.path if parsed.scheme else path)
        return pafs.LocalFileSystem(), local, True
    raise ValueError(f"path {path!r}: this writer writes s3://, s3a:// or local paths")


def s3_settings() -> dict:
    """S3FileSystem's settings as boto3 resolves them in this process (its credential
    chain and region; ``AWS_ENDPOINT_URL_S3`` or ``AWS_ENDPOINT_URL`` as the endpoint)."""
    import boto3

    session = boto3.session.Session()
    settings: dict = {"region": session.region_name or "us-east-1"}
    credentials = session.get_credentials()
    if credentials is not None:
        frozen = credentials.get_frozen_credentials()
        settings.update(access_key=frozen.access_key, secret_key=frozen.secret_key)
        if frozen.token:
            settings["session_token"] = frozen.token
    endpoint = os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
    if endpoint:
        parsed = urlparse(endpoint)
        settings.update(endpoint_override=parsed.netloc, scheme=parsed.scheme or "https")
    return settings


@dataclass
class FilesWritten(WriterCommitMessage):
    """What one task wrote: ``[(path, records), ...]``."""

    files: list


class FileSetWriter(DataSourceArrowWriter):
    """Each task: its rows into one file per partition directory (see the module)."""

    def __init__(self, options: Any) -> None:
        # Spark hands a data source its options case-insensitively: lower-case names
        self.path = options["path"]
        self.fmt = options["format"]
        self.keys = json.loads(options["partition_keys"])
        self.prefix = f"run-{options['start_millis']}-{options['token']}-part-r-"
        self.file_options = json.loads(options["file_options"])

    def _file_name(self, partition_id: int) -> str:
        suffix = EXTENSIONS[self.fmt]
        codec = LINE_COMPRESSION.get(self.file_options.get("compression", "none"))
        if self.fmt in ("json", "csv") and codec:
            suffix += codec[1]
        return f"{self.prefix}{partition_id:05d}{suffix}"

    def write(self, iterator: Iterator[Any]) -> FilesWritten:
        from pyspark import TaskContext

        context = TaskContext.get()
        name = self._file_name(context.partitionId() if context is not None else 0)
        filesystem, base, make_dirs = open_filesystem(self.path)
        files: dict = {}
        counts: dict = {}
        try:
            for batch in iterator:
                for values, rows in split_by_keys(batch, len(self.keys)):
                    if values not in files:
                        directory = "/".join(filter(None, (base, partition_dir(self.keys, values))))
                        if make_dirs:
                            filesystem.create_dir(directory, recursive=True)
                        path = f"{directory}/{name}"
                        stream = filesystem.open_output_stream(path, compression=None)
                        files[values] = (
                            path,
                            open_file(self.fmt, stream, rows.schema, self.file_options),
                        )
                        counts[values] = 0
                    files[values][1].write(rows)
                    counts[values] += rows.num_rows
        except BaseException:
            _discard(filesystem, files.values())  # a failed task leaves no file behind
            raise
        for _, writer in files.values():
            writer.close()
        return FilesWritten([(path, counts[values]) for values, (path, _) in files.items()])

    def commit(self, messages: list) -> None:
        written = [f for m in messages if m is not None for f in m.files]
        log.info(
            "wrote %d records in %d files under %s",
            sum(n for _, n in written),
            len(written),
            self.path,
        )

    def abort(self, messages: list) -> None:
        written = [path for m in messages if m is not None for path, _ in m.files]
        filesystem = open_filesystem(self.path)[0]
        left = []
        for path in written:
            try:
                filesystem.delete_file(path)
            except OSError:
                left.append(path)
        log.warning(
            "the write to %s failed: deleted the %d files its finished tasks wrote%s",
            self.path,
            len(written) - len(left),
            f"; could not delete {left}" if left else "",
        )


def _discard(filesystem: Any, opened: Any) -> None:
    for path, writer in opened:
        try:
            writer.close()
            filesystem.delete_file(path)
        except Exception as exc:  # the task's own error is the one to report
            log.warning("could not remove %s after the task failed: %s", path, exc)


def split_by_keys(batch: Any, key_count: int) -> Iterator[tuple]:
    """(partition values, the batch's data columns for those rows) per distinct values."""
    data = pa.RecordBatch.from_arrays(
        [batch.column(i) for i in range(key_count, batch.num_columns)],
        schema=pa.schema([batch.schema.field(i) for i in range(key_count, batch.num_columns)]),
    )
    if key_count == 0:
        yield (), data
        return
    keys = [batch.column(i).to_pylist() for i in range(key_count)]
    rows: dict = {}
    for index, values in enumerate(zip(*keys)):
        rows.setdefault(values, []).append(index)
    for values, indices in rows.items():
        yield values, data.take(pa.array(indices, pa.int64()))


class GlueFileSink(DataSource):
    """The data source behind the executor-side writer (options: see :class:`FileSetWriter`)."""

    @classmethod
    def name(cls) -> str:
        return SINK_NAME

    def writer(self, schema: Any, overwrite: bool) -> FileSetWriter:
        return FileSetWriter(self.options)
