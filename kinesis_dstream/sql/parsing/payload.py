"""Glue's payload parsing: ``classification`` json / csv / avro / grok into columns.

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
* Each corrupt record's reason is counted (:meth:`PayloadParser.parse_counted`): the
  source logs the counts by reason, once per read task.
* CSV: every payload is one data row (Glue's CSV ``withHeader`` defaults to false);
  inferred columns are named ``_c0``, ``_c1``... as Spark names them; an empty field is
  null; a short row's missing fields are null, extra fields are dropped (Spark's rules).
"""

from __future__ import annotations

import csv
import io
import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

import msgspec
import pyarrow as pa  # type: ignore[import-untyped]
from pyspark.sql.types import BinaryType, StructField, StructType, TimestampType

from ...errors import KinesisServiceError
from ...schema_registry import RegistryPayloadError, shared_cache
from ...schema_registry import decode as registry_decode
from . import payload_avro, payload_types
from .decompress import PayloadDecompressError, decompress
from .grok import GrokTimeoutError
from .payload_format import CLASSIFICATIONS as CLASSIFICATIONS
from .payload_format import DEFAULT_DELIMITER as DEFAULT_DELIMITER
from .payload_format import PayloadFormat as PayloadFormat
from .payload_json import PayloadNestingError, decode_json_payload
from .payload_json import decode_json as decode_json

log = logging.getLogger(__name__)

CORRUPT_RECORD_COLUMN = "_corrupt_record"
SOURCE_TIMESTAMP_COLUMN = "__src_timestamp"
ARRIVAL_COLUMN = "approximateArrivalTimestamp"
# OSError: datetime.fromtimestamp of an epoch beyond the platform's range. DecodeError is a
# ValueError only from msgspec 0.21: named, so that on an older one a malformed
# JSON payload is a corrupt record rather than a failed batch.
_BAD_VALUE = (msgspec.DecodeError, ValueError, TypeError, OverflowError, ArithmeticError, OSError)


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
    not decompress or parse are left out, counted by reason in one log line, as
    :meth:`PayloadParser.parse_counted` counts them. An empty sample gives no columns."""
    kind = fmt.classification
    if kind == "avro":
        raise ValueError("inferSchema is not supported for classification avro")
    merged = StructType([])
    columns: list = []
    reasons: Counter = Counter()
    for raw in payloads:
        try:
            data = decompress(raw)[0]
            if kind == "json":
                obj = decode_json_payload(data)
                if not isinstance(obj, dict):
                    raise ValueError("JSON is not an object")
            else:
                row = _csv_row(data, fmt.delimiter)
        except Exception as exc:  # any decoder's error: this sampled record is left out
            reasons[_reason(kind, exc)] += 1
            continue
        if kind == "json":
            t = payload_types.infer_json_type(obj)
            assert isinstance(t, StructType)
            merged = payload_types.merge_structs(merged, t)
            continue
        for i, text in enumerate(row):
            if i == len(columns):
                columns.append(None)
            columns[i] = payload_types.merge_text_types(
                columns[i], payload_types.infer_text_type(text)
            )
    if reasons:
        log.warning(
            "inferSchema: %d of %d sampled records did not parse as %s and are left out of "
            "the inferred schema (%s)",
            sum(reasons.values()),
            len(payloads),
            kind,
            "; ".join(f"{n}: {reason}" for reason, n in reasons.most_common(5)),
        )
    if kind == "json":
        return merged
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
            cache: dict = {}  # kept only once whole: a schema refused stays refused
            if self.fmt.grok is not None:
                cache["grok"] = _grok_columns(self.fmt.grok, [f.name for f in payload])
            cache["convert"] = self._converters(payload, cache.get("grok"))
            cache["arrow"] = arrow_schema(self.schema)
            if self.fmt.classification == "avro":
                cache["avro"] = payload_avro.parse_avro_schema(self.fmt.avro_text())
            registry = self.fmt.registry
            if registry is not None:
                assert registry.reader is not None and registry.client_spec is not None
                cache["registry"] = shared_cache(registry.client_spec)
            self._cache.update(cache)
        return self._cache

    def _converters(self, payload: list, grok_columns: Optional[tuple]) -> list:
        """``(name, converter)`` of each payload column; a type the classification cannot
        read into is a ValueError naming option schema and the column."""
        kind = self.fmt.classification
        converters = []
        for n, f in enumerate(payload):
            try:
                if grok_columns is not None:
                    grok, columns = grok_columns
                    conv = grok.column_converter(columns[n], f.dataType)
                else:
                    conv = payload_types.converter(f.dataType, from_text=kind == "csv")
            except ValueError as exc:
                raise ValueError(
                    f"option schema: column {f.name!r} of classification {kind}: {exc}"
                ) from None
            converters.append((f.name, conv))
        return converters

    def check(self) -> None:
        """Raise ValueError now (on the driver) if the schema does not fit the format."""
        self._prepared()

    @property
    def arrow_schema(self) -> Any:
        """The ``pyarrow.Schema`` of :meth:`parse`'s batches."""
        return self._prepared()["arrow"]

    def parse(self, batch: Any) -> tuple[Any, int]:
        """``(parsed batch, corrupt count)``: one output row per input row, always."""
        parsed, reasons = self.parse_counted(batch)
        return parsed, sum(reasons.values())

    def parse_counted(self, batch: Any) -> tuple[Any, Counter]:
        """``(parsed batch, corrupt records counted by reason)``.

        A registry that stays unreachable through the retry rule raises (the task fails
        and its range is read again): those records are not corrupt.
        """
        prepared = self._prepared()
        kind = self.fmt.classification
        raws = batch.column("data").to_pylist()
        decoded: list = []
        reasons: Counter = Counter()
        for raw in raws:
            try:
                decoded.append(self._read(kind, raw, prepared))
            except KinesisServiceError:
                raise
            except Exception as exc:  # any decoder's error: this one record is corrupt
                decoded.append(None)
                reasons[_reason(kind, exc)] += 1
        bad = [value is None for value in decoded]  # did not decompress or parse
        columns = []
        for i, (name, conv) in enumerate(prepared["convert"]):
            if kind == "csv":
                # An empty or missing field is null (Spark's nullValue "" and short rows).
                values = [
                    (row[i] or None) if row is not None and i < len(row) else None
                    for row in decoded
                ]
            elif kind == "grok":
                values = [None if row is None else row[i] for row in decoded]
            else:
                values = [None if obj is None else obj.get(name) for obj in decoded]
            field_type = prepared["arrow"].field(i).type
            columns.append(_to_arrow(_convert_column(values, conv, bad), field_type, bad))
        misfits = sum(bad) - sum(reasons.values())
        if misfits:
            reasons["a value does not fit its column's type"] += misfits
        corrupt = [raw if is_bad else None for raw, is_bad in zip(raws, bad)]
        return self._assemble(batch, columns, corrupt, prepared["arrow"]), reasons

    def _read(self, kind: str, raw: Optional[bytes], prepared: dict) -> Any:
        """One payload's decoded values (dict, or a list for csv and grok); raises if it
        is corrupt."""
        if raw is None:
            raise ValueError("no data")
        data = decompress(raw)[0]
        if kind == "json":
            obj = decode_json_payload(data)
            if not isinstance(obj, dict):
                raise ValueError("JSON is not an object")
            return obj
        if kind == "csv":
            return _csv_row(data, self.fmt.delimiter)
        if kind == "grok":
            grok, columns = prepared["grok"]
            values = grok.match(data.decode("utf-8"))
            if values is None:
                raise ValueError("the line does not match the grok pattern")
            return [values[c] for c in columns]
        schema = prepared["avro"]
        if "registry" in prepared:
            reader = self.fmt.registry.reader.version_id  # type: ignore[union-attr]
            value = registry_decode(prepared["registry"], data, schema, reader)
            return payload_avro.shape(schema, value)
        return payload_avro.decode_datum(schema, data)

    def _assemble(self, batch: Any, columns: list, corrupt: list, schema: Any) -> Any:
        arrays = [*columns, pa.array(corrupt, type=pa.binary())]
        for name in self.metadata_columns:
            arrays.append(batch.column(name).cast(schema.field(name).type))
        if self.add_record_timestamp:
            arrays.append(batch.column(ARRIVAL_COLUMN).cast(schema.field(-1).type))
        return pa.RecordBatch.from_arrays(arrays, schema=schema)


def _reason(kind: str, exc: Exception) -> str:
    """A corrupt record's reason, from a small set (counted, then logged per task)."""
    named = (RegistryPayloadError, PayloadDecompressError, GrokTimeoutError, PayloadNestingError)
    if isinstance(exc, named):  # each one's message is its reason
        return str(exc)
    if isinstance(exc, ValueError) and str(exc) in (
        "no data",
        "JSON is not an object",
        "the line does not match the grok pattern",
    ):
        return str(exc)
    if isinstance(exc, UnicodeDecodeError):
        return "not UTF-8 text"
    return f"not {kind} ({type(exc).__name__})"


def _grok_columns(grok: Any, names: list) -> tuple:
    """``(grok, index of each payload column among the pattern's fields)``; a column
    the pattern does not capture is a ValueError naming it."""
    fields = [f.name for f in grok.struct.fields]
    folded = {n.lower(): i for i, n in reversed(list(enumerate(fields)))}
    columns = []
    for name in names:
        index = fields.index(name) if name in fields else folded.get(name.lower())
        if index is None:
            raise ValueError(
                f"column {name!r} of option schema is not a field of grokPattern "
                f"{grok.pattern!r} (its fields: {', '.join(fields) or 'none'})"
            )
        columns.append(index)
    return grok, columns


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
