"""Glue's ``inferSchema``: a frame of each record's text, its schema inferred per batch.

On Glue, a Kinesis stream read with ``inferSchema: "true"`` is a DataFrame of one column,
``$json$data_infer_schema$_temporary$``, holding each record's JSON text, and
``DynamicFrame.fromDF`` of a batch infers that batch's schema ("detected at runtime from
the payload within foreachbatch"). Nothing is read to infer before the query starts, so
an empty stream starts and waits, and each batch has its own shape.

Here the source reads the raw records; :func:`record_text` (a UDF, on the executors)
turns each payload into its text, decompressed as the source's parsers do, and names in
the log each record that is not text of its classification (stream, shard, sequence
number, why). :func:`infer_batch` (``DynamicFrame.fromDF``) infers the
batch's schema with Spark's own inference (``spark.read.json`` of the texts) and parses
the texts into it with ``from_json``; the frame's other columns (``__src_timestamp``,
Glue's ingestion columns added before ``fromDF``) stay beside the data's columns. A text
that does not parse is counted and logged, and kept only in the column that option
``columnNameOfCorruptRecord`` names.

Classification csv: Glue documents no frame shape for it; the nearest is the same, a
``$csv$data_infer_schema$_temporary$`` column inferred per batch by ``spark.read.csv``
(one warning says so). grok takes its columns from the pattern, and avro needs the
writer's schema: for those the source's own rules apply.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Optional

from ...sql.parsing.decompress import PayloadDecompressError, decompress
from ...sql.parsing.payload import decode_json
from ...sql.parsing.payload_types import struct_ddl
from ...sql.schema import SRC_TIMESTAMP

log = logging.getLogger(__name__)

JSON_TEXT_COLUMN = "$json$data_infer_schema$_temporary$"
CSV_TEXT_COLUMN = "$csv$data_infer_schema$_temporary$"
TEXT_COLUMNS = {"json": JSON_TEXT_COLUMN, "csv": CSV_TEXT_COLUMN}
#: The text column's metadata key: how ``fromDF`` infers it.
METADATA_KEY = "kinesis_dstream.glue.inferSchema"
#: The payload options the raw records' source does not take (lower case).
PAYLOAD_KEYS = ("classification", "inferschema", "schema", "delimiter")
#: The parse failures' column while a batch is counted.
UNPARSED_COLUMN = "__kinesis_dstream_unparsed"
_PARSED = "__kinesis_dstream_parsed"
_TEXT = "__kinesis_dstream_text"
_WARNED: set = set()


def text_kind(options: Mapping[str, Any]) -> Optional[str]:
    """``json`` or ``csv`` when ``options`` ask Glue's per-batch inference, else None."""
    lowered = {k.lower(): str(v).strip().lower() for k, v in options.items()}
    if lowered.get("inferschema") != "true":
        return None
    kind = lowered.get("classification")
    return kind if kind in TEXT_COLUMNS else None


def raw_options(options: Mapping[str, Any]) -> dict:
    """``options`` without the payload's: the source gives the raw records."""
    return {k: v for k, v in options.items() if k.lower() not in PAYLOAD_KEYS}


def text_frame(raw: Any, kind: str, delimiter: Optional[str], corrupt_column: Optional[str]) -> Any:
    """The streaming frame Glue gives for ``inferSchema``: the text column (and
    ``__src_timestamp`` when asked), from the source's raw-record frame ``raw``."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType

    if kind == "csv" and "csv" not in _WARNED:
        _WARNED.add("csv")
        log.warning(
            "inferSchema with classification csv: Glue documents no frame shape for it; "
            "the frame is one column %s of each record's text, its schema inferred per "
            "batch by DynamicFrame.fromDF (Spark's CSV inference)",
            CSV_TEXT_COLUMN,
        )
    column = TEXT_COLUMNS[kind]

    # A plain Python UDF: an Arrow map would need pandas, which the library does not.
    def to_text(data, stream, shard, number):  # no type hints: PySpark reads them
        return record_text(kind, data, stream, shard, number)

    text = F.udf(to_text, StringType(), useArrow=False)(
        raw["data"], raw["stream"], raw["shardId"], raw["sequenceNumber"]
    )
    how = {"classification": kind, "delimiter": delimiter or ",", "corrupt": corrupt_column}
    keep = [raw[name] for name in raw.columns if name == SRC_TIMESTAMP]
    return raw.select(text.alias(column, metadata={METADATA_KEY: how}), *keep)


def payload_text(kind: str, data: Optional[bytes]) -> tuple:
    """``(text, why it is not a record of kind)``; ``why`` is None for a good one. A
    payload that does not decompress, or is not UTF-8, keeps its text (undecodable bytes
    replaced) so the batch still shows it."""
    if data is None:
        return None, "no data"
    data = bytes(data)
    try:
        raw = decompress(data)[0]
    except PayloadDecompressError as exc:
        return data.decode("utf-8", "replace"), str(exc)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("utf-8", "replace"), "not UTF-8 text"
    if kind == "json":
        try:
            value = decode_json(raw)
        except Exception:  # msgspec's DecodeError, or a value it refuses
            return text, "not JSON"
        if not isinstance(value, dict):
            return text, "JSON is not an object"
    return text, None


def record_text(
    kind: str, data: Optional[bytes], stream: str, shard: str, number: str
) -> Optional[str]:
    """One record's text (the UDF); one that is not a record of ``kind`` is named in the
    log (stream/shard#sequence number, why) and keeps its text in the column."""
    text, why = payload_text(kind, data)
    if why is not None:
        log.warning(
            "record %s/%s#%s is not a %s record (%s): its text stays in the column, and "
            "DynamicFrame.fromDF counts it with its batch",
            stream,
            shard,
            number,
            kind,
            why,
        )
    return text


def infer_batch(df: Any) -> Any:
    """A batch of a text frame with its own schema (``DynamicFrame.fromDF``): the text
    column replaced, in place, by the columns Spark infers from the batch's texts. Any
    other frame (and a streaming one, whose schema is fixed) is returned as it is."""
    column = next((c for c in df.columns if c in TEXT_COLUMNS.values()), None)
    if column is None or df.isStreaming:
        return df
    from pyspark.sql import functions as F

    how = df.schema[column].metadata.get(METADATA_KEY) or {}
    kind = how.get("classification") or ("json" if column == JSON_TEXT_COLUMN else "csv")
    text = df[column].cast("string")
    parsed, fields = parse_texts(df, text, kind, how.get("delimiter") or ",")
    at = df.columns.index(column)
    before, after = [df[c] for c in df.columns[:at]], [df[c] for c in df.columns[at + 1 :]]
    staged = df.select(*before, parsed.alias(_PARSED), text.alias(_TEXT), *after)
    struct = F.col(_PARSED)
    # from_json gives no struct at all for some texts (an empty one): failed too
    failed = F.when(struct.isNull() | struct.getField(UNPARSED_COLUMN).isNotNull(), F.col(_TEXT))
    out = staged.select(
        *[staged[c] for c in df.columns[:at]],
        *[struct.getField(f.name).alias(f.name) for f in fields],
        *[staged[c] for c in df.columns[at + 1 :]],
        *([failed.alias(UNPARSED_COLUMN)] if kind == "json" else []),
    )
    return _counted_failures(out, kind, how.get("corrupt")) if kind == "json" else out


def parse_texts(df: Any, text: Any, kind: str, delimiter: str) -> tuple:
    """(the string column ``text`` of ``df`` parsed as ``kind``, json or csv, by the
    schema Spark infers from the batch's texts; the inferred fields)."""
    from pyspark.sql import functions as F

    texts = df.select(text.alias("value")).where(F.col("value").isNotNull())
    lines = texts.rdd.map(lambda row: row[0])
    if kind == "json":
        return parse_json(df.sparkSession, lines, text)
    return parse_csv(df.sparkSession, lines, text, delimiter)


def parse_json(spark: Any, lines: Any, text: Any) -> tuple:
    """(``text`` parsed by the schema Spark infers from ``lines``, an RDD of the texts,
    with :data:`UNPARSED_COLUMN` holding a text that did not parse; the inferred fields)."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType, StructField, StructType

    inferred = spark.read.option("columnNameOfCorruptRecord", UNPARSED_COLUMN).json(lines).schema
    fields = [f for f in inferred.fields if f.name != UNPARSED_COLUMN]
    schema = StructType([*fields, StructField(UNPARSED_COLUMN, StringType(), True)])
    options = {"mode": "PERMISSIVE", "columnNameOfCorruptRecord": UNPARSED_COLUMN}
    return F.from_json(text, schema, options), fields


def parse_csv(spark: Any, lines: Any, text: Any, delimiter: str) -> tuple:
    """(``text`` parsed as CSV by the schema inferred from ``lines``; the fields).

    Spark's inference takes the number of columns from the first line and ``from_csv``
    drops a longer line's extra fields: the batch's widest line sets it here, the columns
    past the inferred ones strings, so no field of a later, longer record is lost."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType, StructField, StructType

    reader = spark.read.options(sep=delimiter, inferSchema="true", header="false")
    inferred = reader.csv(lines).schema
    widest = lines.map(lambda line: _csv_width(line, delimiter)).fold(0, max)
    extra = [StructField(f"_c{i}", StringType()) for i in range(len(inferred.fields), widest)]
    fields = [*inferred.fields, *extra]
    ddl = struct_ddl(StructType(fields)) if fields else "`_c0` STRING"
    return F.from_csv(text, ddl, {"sep": delimiter}), fields


def _csv_width(line: str, delimiter: str) -> int:
    import csv

    return max((len(row) for row in csv.reader([line], delimiter=delimiter[:1] or ",")), default=0)


def _counted_failures(out: Any, kind: str, corrupt_column: Optional[str]) -> Any:
    """The batch's texts that did not parse as ``kind``: counted and logged (the first
    one shown), then their rows dropped (Glue keeps such records out of the frame, as
    error records), or kept with their text in ``corrupt_column``."""
    from pyspark.sql import functions as F

    failed = F.col(UNPARSED_COLUMN)
    count, first = (
        out.where(failed.isNotNull())
        .agg(F.count("*"), F.first(F.substring(failed, 1, 80), ignorenulls=True))
        .first()
    )
    if count:
        log.warning(
            "DynamicFrame.fromDF: %d records of the batch are not %s objects (first: %r) and "
            "%s; the source's log names them (stream/shard#sequence number)",
            count,
            kind,
            first,
            f"are kept in column {corrupt_column!r}"
            if corrupt_column
            else "are not in the frame (option columnNameOfCorruptRecord keeps them)",
        )
    if corrupt_column:
        return out.withColumnRenamed(UNPARSED_COLUMN, corrupt_column)
    return out.where(F.col(UNPARSED_COLUMN).isNull()).drop(UNPARSED_COLUMN)
