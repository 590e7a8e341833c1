"""One output file of each format Glue writes to S3, written from Arrow batches.

JSON and CSV arrive as text lines (Spark's ``to_json`` / ``to_csv`` made them on the
JVM, so they read back exactly as Spark's own writers' would); Parquet is written by
pyarrow, Avro by fastavro (a container file, Spark's conventions: a record named
``topLevelRecord``, a nullable field as the union ``[type, "null"]``). Every writer
streams: batches go out as they come, a file is never held whole in memory. Each writes
to an :class:`~.file_stores.OutputFile`: ``close()`` finishes the format and commits
the file, ``abort()`` discards it unfinished.
"""

from __future__ import annotations

import contextlib
import re
from typing import Any, Optional

import pyarrow as pa  # type: ignore[import-untyped]

from ..errors import GlueError

LINE_COLUMN = "__line"
#: Compression of JSON and CSV files: pyarrow's codec and the file name's suffix.
LINE_COMPRESSION = {"none": None, "gzip": ("gzip", ".gz"), "bzip2": ("bz2", ".bz2")}
PARQUET_COMPRESSION = ("none", "snappy", "gzip", "zstd", "lz4", "brotli")
#: Avro container block codecs by the names Glue and Spark give them (fastavro's names).
AVRO_CODECS = {
    "uncompressed": "null",
    "null": "null",
    "deflate": "deflate",
    "snappy": "snappy",
    "xz": "xz",
    "bzip2": "bzip2",
}
EXTENSIONS = {"json": ".json", "csv": ".csv", "parquet": ".parquet", "avro": ".avro"}
_AVRO_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class LinesFile:
    """JSON lines or CSV rows, each batch's ``__line`` column; an optional header."""

    def __init__(self, stream: Any, header: Optional[str], compression: str) -> None:
        codec = LINE_COMPRESSION[compression]
        self._stream = stream
        self._out = pa.CompressedOutputStream(stream, codec[0]) if codec else stream
        if header:
            self._out.write(header.encode("utf-8") + b"\n")

    def write(self, batch: Any) -> None:
        lines = batch.column(batch.schema.get_field_index(LINE_COLUMN)).to_pylist()
        self._out.write(("\n".join(lines) + "\n").encode("utf-8"))

    def close(self) -> None:
        self._out.close()
        if self._out is not self._stream:
            self._stream.close()

    def abort(self) -> None:
        _abort(self._stream, self._out.close)


class ParquetFile:
    def __init__(self, stream: Any, schema: Any, compression: str) -> None:
        import pyarrow.parquet as pq  # type: ignore[import-untyped]

        self._stream = stream
        self._writer = pq.ParquetWriter(stream, schema, compression=compression)

    def write(self, batch: Any) -> None:
        self._writer.write_batch(batch)

    def close(self) -> None:
        self._writer.close()
        self._stream.close()

    def abort(self) -> None:
        _abort(self._stream, self._writer.close)


class AvroFile:
    """An Avro container file with block ``codec``; ``compression`` (``gzip``,
    ``bzip2``) compresses the whole file, as Glue's Avro "archives"."""

    def __init__(
        self, stream: Any, schema: Any, codec: str = "null", compression: str = "none"
    ) -> None:
        from fastavro import parse_schema
        from fastavro.write import Writer

        whole = LINE_COMPRESSION[compression]
        self._stream = stream
        self._out = pa.CompressedOutputStream(stream, whole[0]) if whole else stream
        self._convert = [_converter(f.type) for f in schema]
        self._names = schema.names
        self._writer = Writer(self._out, parse_schema(avro_schema(schema)), codec=codec)

    def write(self, batch: Any) -> None:
        columns = [
            [convert(v) for v in batch.column(i).to_pylist()]
            if convert
            else batch.column(i).to_pylist()
            for i, convert in enumerate(self._convert)
        ]
        for values in zip(*columns):
            self._writer.write(dict(zip(self._names, values)))

    def close(self) -> None:
        self._writer.flush()
        self._out.close()
        if self._out is not self._stream:
            self._stream.close()

    def abort(self) -> None:
        self._stream.abort()


def _abort(stream: Any, finish: Any) -> None:
    """Discard ``stream``'s file, then let the format's writer finish into nothing (its
    native objects are released now, not at garbage collection, where they would write)."""
    stream.abort()
    with contextlib.suppress(Exception):
        finish()


def avro_schema(schema: Any) -> dict:
    """An Arrow schema as Spark's Avro writer names it: ``topLevelRecord``, nullable
    fields as ``[type, "null"]``, nested records named after their path."""
    return _record(list(schema), "topLevelRecord")


def _record(fields: list, name: str) -> dict:
    out = []
    for field in fields:
        if not _AVRO_NAME.match(field.name):
            raise GlueError(
                f"column {field.name!r} is not an Avro name (letters, digits and _, not "
                "starting with a digit): rename it before writing format avro"
            )
        avro = _avro_type(field.type, f"{name}_{field.name}")
        out.append({"name": field.name, "type": [avro, "null"] if field.nullable else avro})
    return {"type": "record", "name": name, "fields": out}


def _avro_type(arrow: Any, name: str) -> Any:
    t = pa.types
    if t.is_boolean(arrow):
        return "boolean"
    if t.is_int8(arrow) or t.is_int16(arrow) or t.is_int32(arrow):
        return "int"
    if t.is_int64(arrow):
        return "long"
    if t.is_float32(arrow):
        return "float"
    if t.is_float64(arrow):
        return "double"
    if t.is_string(arrow) or t.is_large_string(arrow):
        return "string"
    if t.is_binary(arrow) or t.is_large_binary(arrow):
        return "bytes"
    if t.is_date32(arrow):
        return {"type": "int", "logicalType": "date"}
    if t.is_timestamp(arrow):
        return {"type": "long", "logicalType": "timestamp-micros"}
    if t.is_decimal(arrow):
        return {
            "type": "bytes",
            "logicalType": "decimal",
            "precision": arrow.precision,
            "scale": arrow.scale,
        }
    if t.is_struct(arrow):
        return _record([arrow.field(i) for i in range(arrow.num_fields)], name)
    if t.is_list(arrow) or t.is_large_list(arrow):
        item = arrow.value_field
        avro = _avro_type(item.type, f"{name}_item")
        return {"type": "array", "items": [avro, "null"] if item.nullable else avro}
    if t.is_map(arrow):
        if not t.is_string(arrow.key_type):
            raise GlueError(f"field {name!r}: Avro maps have string keys, not {arrow.key_type}")
        item = arrow.item_field
        avro = _avro_type(item.type, f"{name}_value")
        return {"type": "map", "values": [avro, "null"] if item.nullable else avro}
    raise GlueError(f"field {name!r}: Arrow type {arrow} has no Avro type here")


def _converter(arrow: Any) -> Any:
    """What turns Arrow's Python value into fastavro's where they differ: maps come as
    lists of (key, value) pairs, Avro wants dicts. None where nothing needs turning."""
    t = pa.types
    if t.is_map(arrow):
        inner = _converter(arrow.item_type)
        return lambda v: None if v is None else {k: inner(x) if inner else x for k, x in v}
    if t.is_struct(arrow):
        subs = [
            (arrow.field(i).name, _converter(arrow.field(i).type)) for i in range(arrow.num_fields)
        ]
        if not any(c for _, c in subs):
            return None
        return lambda v: None if v is None else {n: c(v[n]) if c else v[n] for n, c in subs}
    if t.is_list(arrow) or t.is_large_list(arrow):
        inner = _converter(arrow.value_type)
        if inner is None:
            return None
        return lambda v: None if v is None else [inner(x) for x in v]
    return None


def open_file(fmt: str, stream: Any, schema: Any, options: dict) -> Any:
    """A writer of ``fmt`` on ``stream`` for batches of ``schema`` (the data columns)."""
    if fmt in ("json", "csv"):
        return LinesFile(stream, options.get("header"), options.get("compression", "none"))
    if fmt == "parquet":
        return ParquetFile(stream, schema, options.get("compression", "snappy"))
    return AvroFile(
        stream, schema, options.get("avro_codec", "null"), options.get("compression", "none")
    )
