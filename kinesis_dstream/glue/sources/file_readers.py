"""Reading a batch read's files, in a Spark task: each file's records as Arrow batches
of the frame's schema, a block at a time (a task never holds a whole file but for JSON's
``multiLine``, a document read whole, as Spark reads it).

Two passes, as Glue's own (a DynamicFrame's schema is computed from its records, then the
records are read again): :func:`infer_files` judges the columns of the text formats (CSV,
JSON) and returns a small summary the driver merges; :func:`read_files` reads with the
merged schema. Parquet, ORC and Avro carry their schema: :func:`file_schema` reads it from
a file's footer or header, on the driver.

A file whose content cannot be read (a corrupt block, a line that is not JSON, invalid
UTF-8) is never the end of the job: its records read so far stay, the rest are left out,
counted and logged naming the file, unless ``isFailFast`` is set (then the task fails,
naming it). A value that does not fit its column is null, counted. An object that cannot
be opened (a missing file, access refused) fails the task: no restart of the read heals
what the listing promised.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Iterator
from typing import Any

import msgspec
import pyarrow as pa  # type: ignore[import-untyped]
from pyspark.sql.types import StructField, StructType

from ...sql.parsing import payload_types
from ...sql.parsing.payload import arrow_schema
from . import avro_files, csv_files
from .object_store import open_random, open_stream
from .record_batches import records_batch
from .s3_options import S3Read

log = logging.getLogger(__name__)

#: Hive's folder name for a null partition value.
DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"
#: Records in a batch built from Python values (JSON, Avro).
BATCH_ROWS = 10_000
#: Parquet rows a batch.
PARQUET_BATCH_ROWS = 65_536
#: What a corrupt file raises while it is parsed (an unopenable one raises OSError).
CONTENT_ERRORS = (pa.ArrowInvalid, ValueError, EOFError, UnicodeDecodeError, msgspec.DecodeError)


class FileUnreadable(Exception):
    """A file's content stopped parsing (``isFailFast``: the task fails with it)."""


def file_schema(read: S3Read, path: str) -> StructType:
    """The columns of a Parquet, ORC or Avro file, from its footer or header."""
    if read.fmt == "parquet":
        import pyarrow.parquet as pq  # type: ignore[import-untyped]

        with open_random(path) as handle:
            return spark_struct(pq.read_schema(handle))
    if read.fmt == "orc":
        from pyarrow import orc

        with open_random(path) as handle:
            return spark_struct(orc.ORCFile(handle).schema)
    import fastavro

    with open_stream(path, read.compression) as handle:
        return avro_files.columns(fastavro.reader(handle).writer_schema, read.avro_version)


def spark_struct(schema: Any) -> StructType:
    """An Arrow schema as Spark's columns (types Spark has no Arrow mapping for widened)."""
    from pyspark.sql.pandas.types import from_arrow_type

    return StructType(
        [StructField(f.name, from_arrow_type(_readable(f.type)), True) for f in schema]
    )


def _readable(t: Any) -> Any:
    """``t`` as a type Spark reads: unsigned integers a wider signed one (uint64 a
    decimal(20,0)), dictionaries their values, half floats floats, nulls strings."""
    types = pa.types
    if types.is_dictionary(t):
        return _readable(t.value_type)
    if types.is_unsigned_integer(t):
        return {8: pa.int16(), 16: pa.int32(), 32: pa.int64()}.get(t.bit_width, pa.decimal128(20))
    if types.is_float16(t):
        return pa.float32()
    if types.is_null(t):
        return pa.string()
    if types.is_list(t) or types.is_large_list(t):
        return pa.list_(_readable(t.value_type))
    if types.is_struct(t):
        return pa.struct([pa.field(f.name, _readable(f.type)) for f in t])
    if types.is_map(t):
        return pa.map_(_readable(t.key_type), _readable(t.item_type))
    return t


def infer_files(read: S3Read, paths: list) -> dict:
    """One task's summary of the columns of ``paths`` (CSV: ``columns`` [[name, kind]];
    JSON: ``struct``, Spark's schema JSON) and its ``counts`` of what was left out."""
    counts: Counter = Counter()
    if read.fmt == "csv":
        kinds: dict = {}
        for path in paths:
            for batch in _guarded(_csv_text(read, path, counts), read, path, counts):
                for name, values in zip(batch.schema.names, batch.columns):
                    kinds[name] = csv_files.merge_kinds(
                        kinds.get(name, "null"), csv_files.column_kind(values)
                    )
        return {"columns": list(kinds.items()), "counts": dict(counts)}
    merged = StructType([])
    for path in paths:
        for records in _guarded(_json_records(read, path, counts), read, path, counts):
            for record in records:
                merged = payload_types.merge_structs(
                    merged,
                    payload_types.infer_json_type(record),  # type: ignore[arg-type]
                )
    return {"struct": merged.json(), "counts": dict(counts)}


def merge_summaries(read: S3Read, summaries: list) -> StructType:
    """The frame's columns from :func:`infer_files`' summaries, in file order."""
    if read.fmt == "csv":
        kinds: dict = {}
        for summary in summaries:
            for name, kind in summary["columns"]:
                kinds[name] = csv_files.merge_kinds(kinds.get(name, "null"), kind)
        return StructType(
            [
                StructField(name, _parsed(csv_files.spark_type_name(k)), True)
                for name, k in kinds.items()
            ]
        )
    merged = StructType([])
    for summary in summaries:
        part = StructType.fromJson(json.loads(summary["struct"]))
        merged = payload_types.merge_structs(merged, part)
    return merged


def _parsed(name: str) -> Any:
    return {"bigint": payload_types.LongType(), "double": payload_types.DoubleType()}.get(
        name, payload_types.StringType()
    )


def read_files(read: S3Read, schema: StructType, paths: list, modified: list) -> Iterator[Any]:
    """The records of ``paths`` (with their modification times, epoch ms) as batches of
    ``schema``'s Arrow form; what was left out logged once for the task."""
    target = arrow_schema(schema)
    counts: Counter = Counter()
    for path, modified_ms in zip(paths, modified):
        for batch in _guarded(_batches(read, schema, path, counts), read, path, counts):
            yield _finished(batch, target, read, path, modified_ms)
    if counts:
        log.warning("read of %d files (%s...): %s", len(paths), paths[0], dict(counts))


def _batches(read: S3Read, schema: StructType, path: str, counts: Counter) -> Iterator[Any]:
    if read.fmt == "csv":
        kinds = {f.name: _kind(f.dataType) for f in schema.fields}
        for batch in _csv_text(read, path, counts):
            arrays = []
            for name in batch.schema.names:
                array, misfits = csv_files.convert(batch.column(name), kinds.get(name, "string"))
                if misfits:
                    counts[f"values of {name} that did not fit its type"] += misfits
                arrays.append(array)
            yield pa.RecordBatch.from_arrays(arrays, names=batch.schema.names)
    elif read.fmt == "json":
        for records in _json_records(read, path, counts):
            yield _python_batch(records, schema, counts)
    elif read.fmt == "avro":
        yield from _avro_batches(read, schema, path, counts)
    elif read.fmt == "parquet":
        import pyarrow.parquet as pq

        with open_random(path) as handle:
            yield from pq.ParquetFile(handle).iter_batches(batch_size=PARQUET_BATCH_ROWS)
    else:
        from pyarrow import orc

        with open_random(path) as handle:
            stripes = orc.ORCFile(handle)
            for i in range(stripes.nstripes):
                yield stripes.read_stripe(i)


def _kind(data_type: Any) -> str:
    return {"bigint": "long", "double": "double"}.get(data_type.simpleString(), "string")


def is_content_error(exc: BaseException) -> bool:
    """Whether ``exc`` says the file's bytes do not parse (a corrupt block, a truncated
    gzip: pyarrow raises those as OSError too), not that the file cannot be reached (a
    missing file, access refused, S3 failing past its retries: "AWS Error ...")."""
    if isinstance(exc, CONTENT_ERRORS):
        return True
    if isinstance(exc, (FileNotFoundError, PermissionError, ConnectionError, TimeoutError)):
        return False
    return isinstance(exc, OSError) and "AWS Error" not in str(exc)


def _guarded(batches: Iterator[Any], read: S3Read, path: str, counts: Counter) -> Iterator[Any]:
    """``batches`` until the file's content stops parsing (see the module)."""
    try:
        yield from batches
    except (*CONTENT_ERRORS, OSError) as exc:
        if not is_content_error(exc):
            raise
        reason = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        if read.fail_fast:
            raise FileUnreadable(f"{path} cannot be read as {read.fmt}: {reason}") from exc
        counts["files whose rest could not be read"] += 1
        log.warning(
            "%s: the rest of the file cannot be read as %s (%s); left out", path, read.fmt, reason
        )


def _csv_text(read: S3Read, path: str, counts: Counter) -> Iterator[Any]:
    with open_stream(path, read.compression) as stream:
        reader = csv_files.CsvFile(stream, read.csv)
        yield from reader.batches()
        if reader.long_rows:
            counts["rows cut to the header's field count"] += reader.long_rows


def _json_records(read: S3Read, path: str, counts: Counter) -> Iterator[list]:
    """Lists of the file's records (objects), at most :data:`BATCH_ROWS` a list. A line
    that is not JSON is left out, counted (``isFailFast``: the task fails naming it)."""
    with open_stream(path, read.compression) as stream:
        if read.json.multi_line:
            documents: Iterator[Any] = iter([msgspec.json.decode(stream.read())])
        else:
            documents = _json_lines(read, path, stream, counts)
        batch: list = []
        for document in documents:
            for record in _selected(document, read.json.path):
                if isinstance(record, dict):
                    batch.append(record)
                else:
                    counts["JSON values that are not objects"] += 1
                if len(batch) >= BATCH_ROWS:
                    yield batch
                    batch = []
        if batch:
            yield batch


def _json_lines(read: S3Read, path: str, stream: Any, counts: Counter) -> Iterator[Any]:
    bad = 0
    for number, line in enumerate(_lines(stream), 1):
        if not line.strip():
            continue
        try:
            yield msgspec.json.decode(line)
        except msgspec.DecodeError as exc:
            if read.fail_fast:
                raise FileUnreadable(f"{path} line {number} is not JSON: {exc}") from None
            bad += 1
            if bad == 1:
                log.warning("%s line %d is not JSON (%s); left out", path, number, exc)
    if bad:
        counts["lines that are not JSON"] += bad


def _lines(stream: Any) -> Iterator[bytes]:
    rest = b""
    while True:
        chunk = stream.read(csv_files.BLOCK_BYTES)
        if not chunk:
            break
        parts = (rest + chunk).split(b"\n")
        rest = parts.pop()
        yield from parts
    if rest:
        yield rest


def _selected(document: Any, path: tuple) -> list:
    """The records ``jsonPath`` selects: the value at ``path``, or the members of the
    array there (``[*]``, or an array without it, as Spark reads a top-level array)."""
    value = document
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def _avro_batches(read: S3Read, schema: StructType, path: str, counts: Counter) -> Iterator[Any]:
    import fastavro

    with open_stream(path, read.compression) as stream:
        reader = fastavro.reader(stream)
        writer = reader.writer_schema
        batch: list = []
        for record in reader:
            batch.append(avro_files.record_values(writer, record, read.avro_version))
            if len(batch) >= BATCH_ROWS:
                yield _python_batch(batch, schema, counts)
                batch = []
        if batch:
            yield _python_batch(batch, schema, counts)


def _python_batch(records: list, schema: StructType, counts: Counter) -> Any:
    converters = [payload_types.converter(f.dataType) for f in schema.fields]
    return records_batch(records, schema, converters, arrow_schema(schema), counts)


def partition_values(path: str, keys: tuple) -> dict:
    """The Hive-style folder values (``region=eu/``) of ``keys`` in ``path``; Hive's
    default partition (and a missing key) is null."""
    from urllib.parse import unquote

    found: dict = {key: None for key in keys}
    for segment in path.split("/")[:-1]:
        key, equals, value = segment.partition("=")
        key = unquote(key)
        if equals and key in found:
            found[key] = None if value == DEFAULT_PARTITION else unquote(value)
    return found


def _finished(batch: Any, target: Any, read: S3Read, path: str, modified_ms: int) -> Any:
    """``batch`` as the target schema: columns by name (a column the file lacks is null),
    each cast to Spark's Arrow type; the file's name, time and partition values."""
    arrays = []
    names = set(batch.schema.names)
    constants: dict = partition_values(path, read.partition_keys)
    if read.filename_column:
        constants[read.filename_column] = path
    if read.timestamp_column:
        stamp = pa.scalar(modified_ms * 1000, pa.timestamp("us", tz="UTC"))
        constants[read.timestamp_column] = stamp.as_py()
    for f in target:
        if f.name in constants:
            arrays.append(pa.array([constants[f.name]] * batch.num_rows, f.type))
        elif f.name in names:
            column = batch.column(f.name)
            safe = not pa.types.is_timestamp(f.type)
            arrays.append(column if column.type == f.type else column.cast(f.type, safe=safe))
        else:
            arrays.append(pa.nulls(batch.num_rows, f.type))
    return pa.RecordBatch.from_arrays(arrays, schema=target)
