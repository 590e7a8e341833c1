"""Writing a batch's files from the executors, where Spark cannot write S3 itself.

A Python data source (``format("kinesis-dstream-glue-files")``, registered by the
GlueContext) whose tasks each write their rows into one file per partition directory,
Hive-style as Glue writes them (``ingest_year=2026/ingest_month=04/``; a null or empty
value is ``__HIVE_DEFAULT_PARTITION__``; special characters %-escaped as Spark does), to
a local directory or S3 (:mod:`.file_stores`). Nothing is collected on the driver but
the list of files written.

File names: ``run-<write start ms>-<write token>-part-r-<task:05d>-a<attempt id><ext>``,
the attempt id being Spark's ``taskAttemptId`` (unique in the application: a task's
``attemptNumber`` starts at 0 again in a retried stage, so two attempts could share it).
Each attempt of a task (a retry, a speculative copy) writes files of its own name, so an
attempt only ever touches its own files: one that fails aborts the files it was writing
and deletes those it finished, and never removes or overwrites another attempt's. A
write that fails deletes the files its committed tasks wrote (Spark's abort). What may
stay twice: the files of an attempt that succeeded but whose success Spark did not count
(a lost executor, the losing speculative copy), and the files of a batch that a later
step of the batch failed, which the retried batch writes again under a new token: at
least once, as Glue.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
from pyspark.sql.datasource import DataSource, DataSourceArrowWriter, WriterCommitMessage

from .file_formats import EXTENSIONS, LINE_COMPRESSION, open_file
from .file_stores import FileState, OutputFile, open_store

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

    def file_name(self, task: int, attempt: int) -> str:
        """The name of the files of task ``task``'s attempt ``attempt`` (Spark's
        ``taskAttemptId``: see the module)."""
        suffix = EXTENSIONS[self.fmt]
        codec = LINE_COMPRESSION.get(self.file_options.get("compression", "none"))
        if self.fmt != "parquet" and codec:  # the whole file compressed
            suffix += codec[1]
        return f"{self.prefix}{task:05d}-a{attempt}{suffix}"

    def write(self, iterator: Iterator[Any]) -> FilesWritten:
        from pyspark import TaskContext

        context = TaskContext.get()
        if context is None:  # not in a Spark task: one attempt of task 0
            return self.write_attempt(iterator, 0, 0)
        return self.write_attempt(iterator, context.partitionId(), context.taskAttemptId())

    def write_attempt(self, iterator: Iterator[Any], task: int, attempt: int) -> FilesWritten:
        """Attempt ``attempt`` of task ``task``: its rows into files only it names. A
        failure, while writing or committing, leaves none of them: the open ones are
        aborted, the committed ones deleted."""
        name = self.file_name(task, attempt)
        store = open_store(self.path)
        files: dict = {}
        try:
            for batch in iterator:
                for values, rows in split_by_keys(batch, len(self.keys)):
                    if values not in files:
                        relative = "/".join(filter(None, (partition_dir(self.keys, values), name)))
                        files[values] = _TaskFile.open(
                            store, relative, self.fmt, rows.schema, self.file_options
                        )
                    files[values].write(rows)
            for task_file in files.values():
                task_file.writer.close()
        except BaseException:
            _discard(store, files.values())  # a failed attempt leaves no file behind
            raise
        return FilesWritten([(f.output.path, f.records) for f in files.values()])

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
        store = open_store(self.path)
        left = []
        for path in written:
            try:
                store.delete(path)
            except Exception:  # the write's own error is the one to report
                left.append(path)
        log.warning(
            "the write to %s failed: deleted the %d files its finished tasks wrote%s",
            self.path,
            len(written) - len(left),
            f"; could not delete {left}" if left else "",
        )


@dataclass
class _TaskFile:
    """One file of a task attempt: where it goes, its format's writer, its records."""

    output: OutputFile
    writer: Any
    records: int = field(default=0)

    @classmethod
    def open(cls, store: Any, relative: str, fmt: str, schema: Any, options: dict) -> _TaskFile:
        output = store.open(relative)
        try:
            return cls(output, open_file(fmt, output, schema, options))
        except BaseException:
            output.abort()
            raise

    def write(self, rows: Any) -> None:
        self.writer.write(rows)
        self.records += rows.num_rows


def _discard(store: Any, task_files: Any) -> None:
    """Leave nothing of a failed attempt: abort its open files, delete its committed ones."""
    for task_file in task_files:
        path = task_file.output.path
        try:
            if task_file.output.state is FileState.COMMITTED:
                store.delete(path)
            else:
                task_file.writer.abort()
        except Exception as exc:  # the task's own error is the one to report
            log.warning("could not remove %s after the task attempt failed: %s", path, exc)


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
