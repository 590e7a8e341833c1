"""Glue's payload parsing: ``classification`` json / csv / avro into columns.

Pure and Spark-free (pyspark's type classes only). The source reads a shard range into a
``RecordBatch`` in :data:`~kinesis_dstream.sql.schema.ARROW_SCHEMA`; :class:`PayloadParser`
turns it into the output columns:

    payload columns..., _corrupt_record, <metadata columns kept>..., [__src_timestamp]

* Payloads are auto-decompressed first (:mod:`.decompress`), as Glue does.
* A payload that does not decompress or parse, or a value that does not fit its column's
  type, is never dropped: Glue documents no behaviour, so this follows Spark's PERMISSIVE
  mode: the fields that could not be read are null, the record's raw bytes (as received,
  before decompression) are in ``_corrupt_record`` (binary, since a payload need not be
  UTF-8), and the record is counted.
* CSV: every payload is one data row (Glue's CSV ``withHeader`` defaults to false);
  inferred columns are named ``_c0``, ``_c1``... as Spark names them; an empty field is
  null; a short row's missing fields are null, extra fields are dropped (Spark's rules).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

import msgspec
import pyarrow as pa  # type: ignore[import-untyped]
from pyspark.sql.types import BinaryType, StructField, StructType, TimestampType

from . import payload_avro, payload_types
from .decompress import PayloadDecompressError, decompress

#: The one JSON decoder (msgspec, a declared dependency; several times faster than the
#: stdlib's): a payload decodes to the same values on every machine, whatever else is
#: installed. Integers of any size stay ints, as with the stdlib; NaN and Infinity,
#: which JSON does not have, make a payload corrupt.
decode_json = msgspec.json.decode

CORRUPT_RECORD_COLUMN = "_corrupt_record"
SOURCE_TIMESTAMP_COLUMN = "__src_timestamp"
ARRIVAL_COLUMN = "approximateArrivalTimestamp"
CLASSIFICATIONS = ("json", "csv", "avro")
DEFAULT_DELIMITER = ","
# OSError: datetime.fromtimestamp of an epoch beyond the platform's range.
_BAD_VALUE = (ValueError, TypeError, OverflowError, ArithmeticError, OSError)


@dataclass(frozen=True)
class PayloadFormat:
    """How payloads are read: built from Glue's options by :meth:`parse`."""

    classification: str
    delimiter: str = DEFAULT_DELIMITER
    schema_text: Optional[str] = None  # DDL for json/csv, Avro JSON for avro
    infer_schema: bool = False

    @classmethod
    def parse(
        cls,
        classification: Optional[str],
        schema_text: Optional[str] = None,
        delimiter: Optional[str] = None,
        infer_schema: Any = False,
        avro_schema: Optional[str] = None,
    ) -> PayloadFormat:
        """Glue's ``classification``, ``schema``, ``delimiter``, ``inferSchema`` and
        (deprecated) ``avroSchema``; ValueError naming the option and its value."""
        kind = (classification or "").strip().lower()
        if kind not in CLASSIFICATIONS:
            raise ValueError(
                f"option classification={classification!r} is not supported; "
                f"supported: {', '.join(CLASSIFICATIONS)}"
            )
        infer = _parse_bool("inferSchema", infer_schema)
        if kind == "avro" and not schema_text:
            schema_text = avro_schema
        elif avro_schema and kind != "avro":
            raise ValueError(f"option avroSchema is for classification avro, not {kind!r}")
        if schema_text is not None and not schema_text.strip():
            raise ValueError(f"option schema={schema_text!r} is empty")
        if kind == "avro":
            if infer:
                raise ValueError(
                    "option inferSchema=true is not supported for classification avro: "
                    "give the writer's Avro schema in option schema"
                )
            if not schema_text:
                raise ValueError("classification avro needs option schema (an Avro schema)")
            try:
                payload_avro.parse_avro_schema(schema_text)
            except ValueError as e:
                raise ValueError(f"option schema: {e}") from e
        elif not infer and not schema_text:
            raise ValueError(
                f"classification {kind} needs option schema (DDL, e.g. "
                '"`column1` INT, `column2` STRING") or inferSchema=true'
            )
        sep = DEFAULT_DELIMITER if delimiter is None else delimiter
        if kind == "csv" and (len(sep) != 1 or sep in '"\r\n'):
            raise ValueError(
                f"option delimiter={delimiter!r} must be one character (not a quote or a "
                "line break)"
            )
        return cls(kind, sep, None if infer else schema_text, infer)

    def payload_ddl(self) -> Optional[str]:
        """The payload columns' DDL when known without data (None with inferSchema)."""
        if self.classification == "avro":
            return payload_types.struct_ddl(self.avro_struct())
        return self.schema_text

    def avro_struct(self) -> StructType:
        """The payload columns of classification avro (from the Avro schema)."""
        assert self.schema_text is not None, "classification avro has a schema"
        schema = payload_avro.parse_avro_schema(self.schema_text)
        return payload_avro.payload_struct(schema)


def _parse_bool(option: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text not in ("true", "false"):
        raise ValueError(f"option {option}={value!r} must be true or false")
    return text == "true"


def _tail(metadata_columns: Sequence[str], add_record_timestamp: bool) -> StructType:
    from ..schema import SCHEMA

    metadata = {f.name: f for f in SCHEMA.fields}
    tail = StructType([StructField(CORRUPT_RECORD_COLUMN, BinaryType(), True)])
    for name in metadata_columns:
        if name not in metadata:
            raise ValueError(f"metadata column {name!r} is not one of {sorted(metadata)}")
        tail.add(metadata[name])
    if add_record_timestamp:
        tail.add(StructField(SOURCE_TIMESTAMP_COLUMN, TimestampType(), True))
    return tail


def output_ddl(
    payload_ddl: str, metadata_columns: Sequence[str] = (), add_record_timestamp: bool = False
) -> str:
    """The source's schema DDL: payload columns, ``_corrupt_record``, the metadata
    columns kept (names from ``ARROW_SCHEMA``), then ``__src_timestamp`` if asked."""
    tail = payload_types.struct_ddl(_tail(metadata_columns, add_record_timestamp))
    return ", ".join(p for p in (payload_ddl.strip(), tail) if p)


def output_schema(
    payload: StructType, metadata_columns: Sequence[str] = (), add_record_timestamp: bool = False
) -> StructType:
    """:func:`output_ddl` as a StructType, for payload columns known as one."""
    tail = _tail(metadata_columns, add_record_timestamp)
    return StructType(list(payload.fields) + list(tail.fields))


def arrow_schema(schema: StructType) -> Any:
    """The ``pyarrow.Schema`` that ``read()`` yields for Spark's parsed ``schema``
    (timestamps are ``timestamp("us", tz="UTC")``)."""
    from pyspark.sql.pandas.types import to_arrow_schema

    try:
        return to_arrow_schema(schema, timezone="UTC")
    except TypeError:  # pyspark 3.5 has no timezone argument and always uses UTC
        return to_arrow_schema(schema)


def infer_schema(payloads: Sequence[bytes], fmt: PayloadFormat) -> str:
    """:func:`infer_struct` as DDL text."""
    return payload_types.struct_ddl(infer_struct(payloads, fmt))


def infer_struct(payloads: Sequence[bytes], fmt: PayloadFormat) -> StructType:
    """The payload columns inferred from a sample of raw payloads (decompressed
    here). json: the union of top-level keys in first-seen order, Spark's types
    (bigint, double, boolean, string, struct, array), conflicts widened to string.
    csv: ``_c0``... typed int/bigint/double/boolean/timestamp/string. Payloads that do
    not decompress or parse are skipped. An empty sample gives no columns."""
    if fmt.classification == "avro":
        raise ValueError("inferSchema is not supported for classification avro")
    if fmt.classification == "json":
        merged = StructType([])
        for raw in payloads:
            try:
                obj = decode_json(decompress(raw)[0])
            except (PayloadDecompressError, *_BAD_VALUE):
                continue
            if isinstance(obj, dict):
                t = payload_types.infer_json_type(obj)
                assert isinstance(t, StructType)
                merged = payload_types.merge_structs(merged, t)
        return merged
    columns: list = []
    for raw in payloads:
        try:
            row = _csv_row(decompress(raw)[0], fmt.delimiter)
        except (PayloadDecompressError, *_BAD_VALUE, csv.Error):
            continue
        for i, text in enumerate(row):
            if i == len(columns):
                columns.append(None)
            columns[i] = payload_types.merge_text_types(
                columns[i], payload_types.infer_text_type(text)
            )
    return StructType(
        [
            StructField(f"_c{i}", t or payload_types.StringType(), True)
            for i, t in enumerate(columns)
        ]
    )


def _csv_row(data: bytes, delimiter: str) -> list:
    rows = list(csv.reader(io.StringIO(data.decode("utf-8")), delimiter=delimiter))
    if len(rows) > 1:
        raise ValueError(f"{len(rows)} CSV rows in one record")
    return rows[0] if rows else []


@dataclass(frozen=True)
class PayloadParser:
    """Parses record batches into the output ``schema`` (Spark's parsed StructType of
    :func:`output_ddl`'s text). Picklable; converters are built on first use."""

    fmt: PayloadFormat
    schema: StructType
    metadata_columns: tuple = ()
    add_record_timestamp: bool = False
    _cache: dict = field(default_factory=dict, compare=False, repr=False)

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_cache"] = {}
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)

    def _tail_names(self) -> list:
        names = [CORRUPT_RECORD_COLUMN, *self.metadata_columns]
        return names + ([SOURCE_TIMESTAMP_COLUMN] if self.add_record_timestamp else [])

    def _prepared(self) -> dict:
        if not self._cache:
            tail = self._tail_names()
            fields = self.schema.fields
            if [f.name for f in fields[len(fields) - len(tail) :]] != tail:
                raise ValueError(
                    f"schema {self.schema.simpleString()} does not end with the columns "
                    f"{tail}; build it with output_ddl()"
                )
            payload = fields[: len(fields) - len(tail)]
            from_text = self.fmt.classification == "csv"
            self._cache["convert"] = [
                (f.name, payload_types.converter(f.dataType, from_text)) for f in payload
            ]
            self._cache["arrow"] = arrow_schema(self.schema)
            if self.fmt.classification == "avro":
                assert self.fmt.schema_text is not None
                self._cache["avro"] = payload_avro.parse_avro_schema(self.fmt.schema_text)
        return self._cache

    @property
    def arrow_schema(self) -> Any:
        """The ``pyarrow.Schema`` of :meth:`parse`'s batches."""
        return self._prepared()["arrow"]

    def parse(self, batch: Any) -> tuple[Any, int]:
        """``(parsed batch, corrupt count)``: one output row per input row, always."""
        prepared = self._prepared()
        kind = self.fmt.classification
        raws = batch.column("data").to_pylist()
        decoded = [self._read(kind, raw, prepared) for raw in raws]
        bad = [value is None for value in decoded]  # did not decompress or parse
        columns = []
        for i, (name, conv) in enumerate(prepared["convert"]):
            if kind == "csv":
                # An empty or missing field is null (Spark's nullValue "" and short rows).
                values = [
                    (row[i] or None) if row is not None and i < len(row) else None
                    for row in decoded
                ]
            else:
                values = [None if obj is None else obj.get(name) for obj in decoded]
            field_type = prepared["arrow"].field(i).type
            columns.append(_to_arrow(_convert_column(values, conv, bad), field_type, bad))
        corrupt = [raw if is_bad else None for raw, is_bad in zip(raws, bad)]
        return self._assemble(batch, columns, corrupt, prepared["arrow"]), sum(bad)

    def _read(self, kind: str, raw: Optional[bytes], prepared: dict) -> Any:
        """One payload's decoded values (dict, or list for csv), None if it is corrupt."""
        if raw is None:
            return None
        try:
            data = decompress(raw)[0]
            if kind == "json":
                obj = decode_json(data)
                return obj if isinstance(obj, dict) else None
            if kind == "csv":
                return _csv_row(data, self.fmt.delimiter)
            return payload_avro.decode_datum(prepared["avro"], data)
        except Exception:  # any decoder's error means this one record is corrupt
            return None

    def _assemble(self, batch: Any, columns: list, corrupt: list, schema: Any) -> Any:
        arrays = [*columns, pa.array(corrupt, type=pa.binary())]
        for name in self.metadata_columns:
            arrays.append(batch.column(name).cast(schema.field(name).type))
        if self.add_record_timestamp:
            arrays.append(batch.column(ARRIVAL_COLUMN).cast(schema.field(-1).type))
        return pa.RecordBatch.from_arrays(arrays, schema=schema)


def _convert_column(values: list, conv: Any, bad: list) -> list:
    """``values`` converted; a value that does not fit is null and marks its row bad."""
    try:
        return [None if v is None else conv(v) for v in values]
    except _BAD_VALUE:
        pass  # rare: convert again one by one to find the rows
    out = []
    for row, v in enumerate(values):
        try:
            out.append(None if v is None else conv(v))
        except _BAD_VALUE:
            out.append(None)
            bad[row] = True
    return out


def _to_arrow(values: list, arrow_type: Any, bad: list) -> Any:
    """The column as an arrow array; a value arrow refuses (converters should have caught
    it) is null and marks its row bad instead of failing the task."""
    try:
        return pa.array(values, type=arrow_type)
    except (pa.ArrowException, *_BAD_VALUE):
        pass
    kept = []
    for row, v in enumerate(values):
        try:
            pa.scalar(v, type=arrow_type)
            kept.append(v)
        except (pa.ArrowException, *_BAD_VALUE):
            kept.append(None)
            bad[row] = True
    return pa.array(kept, type=arrow_type)


def parse_batch(
    batch: Any,
    fmt: PayloadFormat,
    schema: StructType,
    metadata_columns: Sequence[str] = (),
    add_record_timestamp: bool = False,
) -> tuple[Any, int]:
    """One-shot :meth:`PayloadParser.parse` (build a :class:`PayloadParser` once per
    partition to reuse its converters)."""
    parser = PayloadParser(fmt, schema, tuple(metadata_columns), add_record_timestamp)
    return parser.parse(batch)
