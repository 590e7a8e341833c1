"""Payload parsing (``sql/parsing/payload.py``): json, csv, avro and grok, and inferSchema.

Inputs: payloads written by each format's own writer (msgspec's JSON encoder, the csv
module, fastavro's ``schemaless_writer``, log lines from a template), some compressed;
then mutated: bits flipped, bytes cut or inserted, values nested deep, numbers huge, digits
of other scripts; and random bytes.

The rule (docs/reliability.md#stream-payloads): ``parse_counted`` never raises for a
payload; every input row gives one output row; a row is corrupt (its raw bytes, as
received, in ``_corrupt_record``) exactly when it is counted, and the reasons add up to the
count. inferSchema's inference never raises either, and its schema reads its own sample.
"""

from __future__ import annotations

import csv
import gzip
import io
import json

import fastavro
import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    IntegerType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from kinesis_dstream.sql.parsing.payload import (
    CORRUPT_RECORD_COLUMN,
    PayloadFormat,
    PayloadParser,
    infer_struct,
    output_schema,
)

from ..unit.test_payload import records
from .mutations import mutate

#: Values as JSON has them, and what breaks parsers: huge and negative numbers, digits of
#: other scripts, long strings, nesting.
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=10**30, max_value=10**60),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
    st.sampled_from(["\u0663\u0664", "\uff11\uff12", "1e400", "2026-11-28T08:00:00Z", "-0"]),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=12,
)
JSON_COLUMNS = [
    ("a", LongType()),
    ("b", StringType()),
    ("c", DoubleType()),
    ("d", BooleanType()),
    ("e", TimestampType()),
    ("f", DecimalType(10, 2)),
    ("g", ArrayType(LongType())),
    ("h", MapType(StringType(), StringType())),
    ("i", StructType([StructField("x", IntegerType())])),
    ("j", DateType()),
]
NAMES = [name for name, _ in JSON_COLUMNS]


def _digits(draw, buf: bytearray, at: int) -> None:
    """Huge numbers, digits of other scripts, a lone sign or exponent."""
    buf[at:at] = draw(st.sampled_from(["9" * 400, "\u0663", "-", "e99999"])).encode()


def _nest(draw, buf: bytearray, at: int) -> None:
    """An array nested around and far past the bound."""
    depth = draw(st.sampled_from([50, 101, 999, 5000]))
    buf[at:at] = b"[" * depth + b"1" + b"]" * depth


def edited(draw, data: bytes) -> bytes:
    """``data`` as written, or edited (:mod:`.mutations`, and the two edits above)."""
    return mutate(draw, data, (_digits, _nest)) if draw(st.booleans()) else data


@st.composite
def json_payloads(draw) -> bytes:
    if draw(st.integers(0, 9)) == 0:
        return draw(st.binary(max_size=40))
    row = draw(st.dictionaries(st.sampled_from(NAMES), VALUES, max_size=6))
    deep = None
    if draw(st.booleans()):  # a value nested around the bound, spliced in as text
        depth = draw(st.sampled_from([99, 100, 101, 2000]))
        deep = b"[" * depth + b"]" * depth
        row[draw(st.sampled_from(NAMES))] = "__deep__"
    data = msgspec.json.encode(row)
    if deep is not None:
        data = data.replace(b'"__deep__"', deep)
    data = edited(draw, data)
    return gzip.compress(data) if draw(st.integers(0, 4)) == 0 else data


@st.composite
def csv_payloads(draw) -> bytes:
    fields = draw(st.lists(st.one_of(st.text(max_size=10), SCALARS.map(str)), max_size=6))
    out = io.StringIO()
    csv.writer(out).writerow(fields)
    return edited(draw, out.getvalue().encode())


AVRO_SCHEMA = {
    "type": "record",
    "name": "Row",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "name", "type": ["null", "string"]},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "attrs", "type": {"type": "map", "values": "double"}},
        {"name": "kind", "type": {"type": "enum", "name": "K", "symbols": ["A", "B"]}},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "n", "type": ["int", "string", "null"]},
    ],
}
AVRO = fastavro.parse_schema(AVRO_SCHEMA)
AVRO_ROWS = st.fixed_dictionaries(
    {
        "id": st.integers(-(2**63), 2**63 - 1),
        "name": st.none() | st.text(max_size=8),
        "tags": st.lists(st.text(max_size=4), max_size=3),
        "attrs": st.dictionaries(st.text(max_size=3), st.floats(), max_size=3),
        "kind": st.sampled_from(["A", "B"]),
        "at": st.integers(0, 2**41),
        "n": st.none() | st.integers(-(2**31), 2**31 - 1) | st.text(max_size=4),
    }
)


@st.composite
def avro_payloads(draw) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, AVRO, draw(AVRO_ROWS))
    return edited(draw, out.getvalue())


GROK = "%{INT:id:int} %{DATA:ts:date:yyyy-MM-dd HH:mm:ss} %{WORD:level} %{GREEDYDATA:msg}"


@st.composite
def grok_lines(draw) -> bytes:
    line = (
        f"{draw(st.integers(-(2**40), 2**40))} "
        f"{draw(st.sampled_from(['2026-11-28 08:00:00', '2026-02-30 25:61:61', '-', '']))} "
        f"{draw(st.sampled_from(['INFO', 'WARN', 'x']))} {draw(st.text(max_size=20))}"
    ).encode("utf-8", "surrogatepass")
    return edited(draw, line)


def _check(fmt: PayloadFormat, payloads: list) -> None:
    """The rule, on one batch."""
    if fmt.grok is not None:
        payload = fmt.grok.struct
    elif fmt.classification == "avro":
        payload = fmt.avro_struct()
    elif fmt.classification == "csv":
        payload = StructType([StructField(f"_c{i}", t) for i, t in enumerate(CSV_TYPES)])
    else:
        payload = StructType([StructField(n, t) for n, t in JSON_COLUMNS])
    parser = PayloadParser(
        fmt, output_schema(payload, ["sequenceNumber"], True), ("sequenceNumber",), True
    )
    out, reasons = parser.parse_counted(records(payloads))
    assert out.num_rows == len(payloads)
    kept = out.column(CORRUPT_RECORD_COLUMN).to_pylist()
    assert sum(reasons.values()) == sum(k is not None for k in kept)
    assert all(k in (None, p) for k, p in zip(kept, payloads))
    assert out.column("sequenceNumber").to_pylist() == [str(100 + i) for i in range(len(payloads))]


CSV_TYPES = [IntegerType(), LongType(), DoubleType(), BooleanType(), TimestampType(), StringType()]


TEXT_PAYLOADS = {"json": json_payloads(), "csv": csv_payloads()}


@pytest.mark.parametrize("kind", sorted(TEXT_PAYLOADS))
@given(data=st.data())
def test_text_payloads_parse_or_are_counted_corrupt_and_inference_never_raises(kind, data):
    payloads = data.draw(st.lists(TEXT_PAYLOADS[kind], min_size=1, max_size=8))
    _check(PayloadFormat.parse(kind, "(typed)"), payloads)
    fmt = PayloadFormat.parse(kind, None, None, True)
    inferred = infer_struct(payloads, fmt)
    out, _ = PayloadParser(fmt, output_schema(inferred)).parse_counted(records(payloads))
    assert out.num_rows == len(payloads)


@given(st.lists(avro_payloads() | st.binary(max_size=30), min_size=1, max_size=8))
def test_avro_datums_parse_or_are_counted_corrupt(payloads):
    _check(PayloadFormat.parse("avro", json.dumps(AVRO_SCHEMA)), payloads)


@given(st.lists(grok_lines() | st.binary(max_size=40), min_size=1, max_size=8))
def test_grok_lines_parse_or_are_counted_corrupt(payloads):
    _check(PayloadFormat.parse("grok", grok_pattern=GROK), payloads)
