"""Glue's payload parsing (sql/payload.py, payload_types.py, payload_avro.py, decompress.py).

Pure: pyarrow and pyspark's type classes, no Spark session.
"""

from __future__ import annotations

import bz2
import csv
import datetime as dt
import gzip
import io
import json
import lzma
import pickle
import sys
import time
import tracemalloc
import zlib
from decimal import Decimal

import cramjam
import fastavro
import pyarrow as pa
import pytest
from hypothesis import given, settings
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

from kinesis_dstream.sql.parsing.decompress import (
    PayloadDecompressError,
    PayloadTooLargeError,
    decompress,
)
from kinesis_dstream.sql.parsing.payload import (
    CORRUPT_RECORD_COLUMN,
    SOURCE_TIMESTAMP_COLUMN,
    PayloadFormat,
    PayloadParser,
    arrow_schema,
    infer_schema,
    infer_struct,
    output_ddl,
    output_schema,
    parse_batch,
)
from kinesis_dstream.sql.schema import ARROW_SCHEMA

T0 = dt.datetime(2026, 11, 23, 8, 0, tzinfo=dt.timezone.utc)


def records(payloads: list) -> pa.RecordBatch:
    """A batch as the source reads it (ARROW_SCHEMA), one record per payload."""
    n = len(payloads)
    return pa.RecordBatch.from_arrays(
        [
            pa.array(payloads, pa.binary()),
            pa.array([f"pk{i}" for i in range(n)], pa.string()),
            pa.array(["s"] * n, pa.string()),
            pa.array(["shardId-000000000000"] * n, pa.string()),
            pa.array([str(100 + i) for i in range(n)], pa.string()),
            pa.array([0] * n, pa.int64()),
            pa.array([None] * n, pa.string()),
            pa.array([T0 + dt.timedelta(seconds=i) for i in range(n)], ARROW_SCHEMA[7].type),
        ],
        schema=ARROW_SCHEMA,
    )


def struct(*fields: tuple) -> StructType:
    return StructType([StructField(name, t, True) for name, t in fields])


def rows(batch: pa.RecordBatch) -> list:
    return batch.to_pylist()


# ---- decompression -------------------------------------------------------------------

PAYLOAD = b'{"a": 1, "b": "x"}' * 20

CODECS = [
    ("gzip", gzip.compress),
    ("bzip2", bz2.compress),
    ("xz", lzma.compress),
    ("deflate", zlib.compress),
    ("deflate", lambda d: zlib.compress(d, 9)),
    ("snappy", lambda d: bytes(cramjam.snappy.compress(d))),
    ("zstd", lambda d: bytes(cramjam.zstd.compress(d))),
]


@pytest.mark.parametrize("codec,compress", CODECS)
def test_each_codec_round_trips(codec, compress):
    assert decompress(compress(PAYLOAD)) == (PAYLOAD, codec)


def test_uncompressed_payloads_are_returned_unchanged():
    for data in (PAYLOAD, b"", b"x", b"H,1,2", b"(Sa,b", b"x^not zlib at all"):
        assert decompress(data) == (data, None)


@pytest.mark.parametrize("codec,compress", [c for c in CODECS if c[0] != "deflate"])
def test_truncated_payload_with_a_codec_magic_is_an_error_naming_the_codec(codec, compress):
    data = compress(PAYLOAD * 50)
    with pytest.raises(PayloadDecompressError, match=codec):
        decompress(data[: len(data) // 2])


@pytest.mark.parametrize("codec,compress", CODECS)
def test_a_decompression_bomb_is_refused(codec, compress):
    bomb = compress(b"\0" * 1_000_000)
    with pytest.raises(PayloadTooLargeError, match=f"{codec}.*past 100000 bytes"):
        decompress(bomb, max_bytes=100_000)
    assert decompress(bomb, max_bytes=1_000_000) == (b"\0" * 1_000_000, codec)


@pytest.mark.parametrize("codec,compress", CODECS)
def test_a_bomb_is_refused_before_more_than_the_bound_is_in_memory(codec, compress):
    """Every codec decodes in steps that stop at the bound (zstd and framed Snappy were
    decoded whole: an 8 KB zstd record asked for 256 MiB; issue 52)."""
    bomb = compress(b"\0" * 64_000_000)
    tracemalloc.start()
    try:
        with pytest.raises(PayloadTooLargeError, match=f"{codec}.*past 1000000 bytes"):
            decompress(bomb, max_bytes=1_000_000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # the bound, a step past it and the codec's own window (xz: an 8 MiB dictionary);
    # decoded whole, the 64 MB were in memory
    assert peak < 16_000_000


@pytest.mark.parametrize("codec,compress", [c for c in CODECS if c[0] != "deflate"])
def test_many_tiny_streams_take_time_in_proportion_to_the_payload(codec, compress):
    """Payloads of empty streams (gzip members, bzip2 and xz streams, zstd frames, Snappy
    stream identifiers): each stream's end copied the whole rest of the payload (1 s for
    1 MiB of gzip members, 16 times as long for 4 times the payload); now a piece at most,
    so 4 times the payload takes about 4 times as long."""
    one = compress(b"") if codec != "snappy" else b"\xff\x06\x00\x00sNaPpY"

    def seconds(size: int) -> float:
        # this process's CPU time, the least of three: other processes' load (a busy
        # machine, CI beside other work) is not the decoder's cost
        payload = one * (size // len(one))
        times = []
        for _ in range(3):
            started = time.process_time()
            assert decompress(payload) == (b"", codec)
            times.append(time.process_time() - started)
        return min(times)

    small, large = seconds(256 * 1024), seconds(1024 * 1024)
    assert large < 10 * small + 0.05


def test_zstd_bytes_that_decode_to_nothing_near_the_bound_are_not_fed_a_byte_a_call():
    # A frame inflating to just under the bound, then megabytes of skippable frames (no
    # output): near the bound, (room / zstd's densest ratio) is a byte, and each call took
    # one (0.8 s of CPU a MiB). The decoder's calls are counted, not timed.
    import zstandard

    from kinesis_dstream.sql.parsing import decompress as module

    bound = 1024 * 1024
    near = zstandard.ZstdCompressor().compress(b"\0" * (bound - 1000))
    skippable = b"\x50\x2a\x4d\x18" + (1024 * 1024).to_bytes(4, "little") + bytes(1024 * 1024)
    calls = []

    def counting_decoder():
        decoder = zstandard.ZstdDecompressor().decompressobj()

        class Counted:
            def decompress(self, piece):
                calls.append(len(piece))
                return decoder.decompress(piece)

            def __getattr__(self, name):
                return getattr(decoder, name)

        return Counted()

    out = module._streams(counting_decoder, near + skippable + near[:0], bound, zstd=True)
    assert len(out) == bound - 1000
    assert len(calls) <= len(near + skippable) // module._ZSTD_MIN_PIECE + 64
    # and what passes the bound still stops within a step of it
    with pytest.raises(module._OverBound):
        module._streams(counting_decoder, near + near, bound, zstd=True)


def test_an_xz_stream_asking_for_a_dictionary_past_xz_9s_is_refused_not_allocated():
    # The block header's LZMA2 property byte says 256 MiB (2**(11 + 34/2)), its CRC-32
    # made right: what a producer (or a bit flip) can write without compressing with it.
    data = bytearray(lzma.compress(b"x" * 100, preset=0))
    header = slice(12, 12 + (data[12] + 1) * 4)
    assert data[header][2:4] == b"\x21\x01"  # one filter: LZMA2, one property byte
    data[16] = 34
    data[header.stop - 4 : header.stop] = zlib.crc32(data[header][:-4]).to_bytes(4, "little")
    with pytest.raises(PayloadDecompressError, match=r"xz.*Memory usage limit"):
        decompress(bytes(data))
    assert decompress(lzma.compress(b"x" * 100, preset=9 | lzma.PRESET_EXTREME))[1] == "xz"


def test_a_snappy_chunk_past_the_framing_formats_64_kib_is_refused():
    raw = bytes(cramjam.snappy.compress_raw(b"\0" * 70_000))
    chunk = b"\0" + (4 + len(raw)).to_bytes(3, "little") + b"\0\0\0\0" + raw
    with pytest.raises(PayloadDecompressError, match="snappy"):  # cramjam refuses it
        decompress(b"\xff\x06\x00\x00sNaPpY" + chunk)
    with pytest.raises(PayloadDecompressError, match=r"snappy.*holds 70,000 bytes, past 65,536"):
        decompress(b"\xff\x06\x00\x00sNaPpY" + chunk, max_bytes=50_000)  # read first
    reserved = b"\x02\x01\x00\x00x"
    with pytest.raises(PayloadDecompressError, match="snappy"):
        decompress(b"\xff\x06\x00\x00sNaPpY" + reserved)
    with pytest.raises(PayloadDecompressError, match="reserved type 2"):
        decompress(b"\xff\x06\x00\x00sNaPpY" + reserved, max_bytes=100)


def test_concatenated_streams_are_all_read():
    for codec, compress in CODECS[:3]:
        assert decompress(compress(b"ab") + compress(b"cd")) == (b"abcd", codec)


def test_a_truncated_zlib_stream_is_left_as_it_is():
    # Two header bytes are weak evidence: only a complete, checked stream counts.
    data = zlib.compress(PAYLOAD)
    assert decompress(data[:-1]) == (data[:-1], None)


# ---- options -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (
            dict(classification="parquet", schema_text="`a` INT"),
            "classification='parquet'.*json, csv, avro",
        ),
        (dict(classification=None), "classification=None"),
        (dict(classification="json"), "needs option schema"),
        (dict(classification="json", infer_schema="yes"), "inferSchema='yes'"),
        (dict(classification="csv", schema_text="`a` INT", delimiter=",."), "delimiter=',.'"),
        (dict(classification="csv", schema_text="`a` INT", delimiter=""), "delimiter=''"),
        (dict(classification="avro"), "needs option schema"),
        (dict(classification="avro", schema_text="{not json"), "option schema: not an Avro"),
        (dict(classification="avro", schema_text='{"type": "nope"}'), "option schema"),
        (dict(classification="avro", infer_schema="true"), "inferSchema=true"),
        (dict(classification="json", schema_text="  "), "schema='  ' is empty"),
        (dict(classification="json", infer_schema=True, avro_schema='"int"'), "avroSchema"),
    ],
)
def test_bad_options_are_refused_naming_option_and_value(kwargs, match):
    with pytest.raises(ValueError, match=match):
        PayloadFormat.parse(**kwargs)


def test_options_as_glue_writes_them():
    fmt = PayloadFormat.parse("JSON", None, None, "true")
    assert (fmt.classification, fmt.infer_schema, fmt.delimiter) == ("json", True, ",")
    csv_fmt = PayloadFormat.parse("csv", "`a` INT", "|", "false")
    assert (csv_fmt.delimiter, csv_fmt.payload_ddl()) == ("|", "`a` INT")
    avro = PayloadFormat.parse("avro", None, None, False, avro_schema='"long"')
    assert avro.payload_ddl() == "`value` bigint"
    assert pickle.loads(pickle.dumps(csv_fmt)) == csv_fmt


def test_output_ddl_puts_payload_then_corrupt_then_metadata_then_timestamp():
    ddl = output_ddl("`a` INT", ["shardId", "sequenceNumber"], add_record_timestamp=True)
    assert ddl == (
        "`a` INT, `_corrupt_record` binary, `shardId` string, `sequenceNumber` string, "
        "`__src_timestamp` timestamp"
    )
    with pytest.raises(ValueError, match="metadata column 'nope'"):
        output_ddl("`a` INT", ["nope"])


def test_arrow_schema_has_utc_microsecond_timestamps():
    schema = arrow_schema(output_schema(struct(("t", TimestampType())), (), True))
    assert schema.field("t").type == pa.timestamp("us", tz="UTC")
    assert schema.field(SOURCE_TIMESTAMP_COLUMN).type == pa.timestamp("us", tz="UTC")


# ---- json and csv with a schema ------------------------------------------------------


def test_json_with_a_schema_converts_types_nulls_missing_and_ignores_extra_keys():
    payload = struct(
        ("id", IntegerType()),
        ("name", StringType()),
        ("score", DoubleType()),
        ("ok", BooleanType()),
        ("at", TimestampType()),
        ("day", DateType()),
        ("price", DecimalType(10, 2)),
        ("tags", ArrayType(StringType())),
        ("inner", struct(("x", LongType()))),
        ("attrs", MapType(StringType(), LongType())),
    )
    schema = output_schema(payload, ["sequenceNumber"])
    fmt = PayloadFormat.parse("json", "(given as a StructType here)")
    full = {
        "id": 7,
        "name": "n",
        "score": 2,
        "ok": True,
        "at": "2026-11-23T08:00:00Z",
        "day": "2026-11-23",
        "price": "12.5",
        "tags": ["a", None],
        "inner": {"x": 3},
        "attrs": {"k": 1},
        "extra": "ignored",
    }
    out, corrupt = parse_batch(
        records([json.dumps(full).encode(), b'{"id": 8}', gzip.compress(b'{"name": 5}')]),
        fmt,
        schema,
        ["sequenceNumber"],
    )
    assert corrupt == 0
    assert out.schema == arrow_schema(schema)
    first, second, third = rows(out)
    assert first == {
        "id": 7,
        "name": "n",
        "score": 2.0,
        "ok": True,
        "at": T0,
        "day": dt.date(2026, 11, 23),
        "price": Decimal("12.50"),
        "tags": ["a", None],
        "inner": {"x": 3},
        "attrs": [("k", 1)],
        CORRUPT_RECORD_COLUMN: None,
        "sequenceNumber": "100",
    }
    assert second["id"] == 8 and second["name"] is None and second["tags"] is None
    assert third["name"] == "5"  # Spark keeps a non-string JSON value's text


def test_csv_with_a_schema_converts_types_and_pads_short_rows():
    schema = output_schema(
        struct(("a", IntegerType()), ("b", StringType()), ("c", DoubleType())), (), True
    )
    fmt = PayloadFormat.parse("csv", "`a` INT, `b` STRING, `c` DOUBLE", ";")
    out, corrupt = parse_batch(
        records([b'1;"x;y";2.5\n', b"2;;", b"3", bz2.compress(b"4;z;1e3;extra")]),
        fmt,
        schema,
        (),
        True,
    )
    assert corrupt == 0
    assert [(r["a"], r["b"], r["c"]) for r in rows(out)] == [
        (1, "x;y", 2.5),
        (2, None, None),
        (3, None, None),
        (4, "z", 1000.0),
    ]
    assert [r[SOURCE_TIMESTAMP_COLUMN] for r in rows(out)][:2] == [T0, T0 + dt.timedelta(seconds=1)]


# ---- bad payloads --------------------------------------------------------------------


def test_bad_payloads_are_counted_and_kept_raw():
    schema = output_schema(struct(("a", IntegerType()), ("b", StringType())))
    fmt = PayloadFormat.parse("json", "`a` INT, `b` STRING")
    truncated_gzip = gzip.compress(b'{"a": 1}' * 100)[:30]
    bad = [b"not json", b"[1, 2]", b'{"a": "seven", "b": "kept"}', truncated_gzip, b"\xff\xfe"]
    out, corrupt = parse_batch(records([b'{"a": 1}', *bad]), fmt, schema)
    assert corrupt == len(bad)
    got = rows(out)
    assert got[0] == {"a": 1, "b": None, CORRUPT_RECORD_COLUMN: None}
    assert [r[CORRUPT_RECORD_COLUMN] for r in got[1:]] == bad
    assert got[3]["b"] == "kept" and got[3]["a"] is None  # the fields that did fit stay
    assert all(r["a"] is None for r in got[1:])


def test_csv_value_of_the_wrong_type_is_corrupt_and_multi_row_records_too():
    schema = output_schema(struct(("a", IntegerType()), ("b", StringType())))
    fmt = PayloadFormat.parse("csv", "`a` INT, `b` STRING")
    out, corrupt = parse_batch(records([b"x,y", b"1,a\n2,b", b"1,a\n"]), fmt, schema)
    assert corrupt == 2
    assert [r["b"] for r in rows(out)] == ["y", None, "a"]
    assert [r[CORRUPT_RECORD_COLUMN] for r in rows(out)] == [b"x,y", b"1,a\n2,b", None]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(max_size=64), max_size=20), st.sampled_from(["json", "csv"]))
def test_parse_batch_never_drops_a_row(payloads, kind):
    schema = output_schema(struct(("a", LongType()), ("b", StringType())), ["shardId"], True)
    fmt = PayloadFormat.parse(kind, "`a` BIGINT, `b` STRING")
    out, corrupt = parse_batch(records(payloads), fmt, schema, ["shardId"], True)
    assert out.num_rows == len(payloads)
    kept = [r[CORRUPT_RECORD_COLUMN] for r in rows(out)]
    assert corrupt == sum(k is not None for k in kept)
    assert all(k in (None, p) for k, p in zip(kept, payloads))


def nested(levels: int, leaf: bytes = b"1") -> bytes:
    """A JSON object nested ``levels`` deep: ``{"a": {"a": ... 1}}``."""
    return b'{"a":' * levels + leaf + b"}" * levels


def on_a_deep_stack(frames: int, call):
    """``call()`` under ``frames`` more Python frames, as a Spark worker's stack holds."""
    return call() if frames == 0 else on_a_deep_stack(frames - 1, call)


def test_json_nested_past_the_bound_is_one_corrupt_record_named_not_a_failed_task():
    """Nesting near Python's recursion limit passed the decoder, then raised RecursionError
    from a converter a few frames deeper and failed the task on every retry (issue 52):
    every depth up to a thousand is tried here. Past 100 levels a record is corrupt."""
    schema = output_schema(struct(("a", StringType()), ("b", LongType())))
    fmt = PayloadFormat.parse("json", "`a` STRING, `b` BIGINT")
    payloads = [nested(n) for n in range(1, 1001)] + [b"[" * 100_000, b'{"b": 7}']
    parser = PayloadParser(fmt, schema)
    out, reasons = on_a_deep_stack(40, lambda: parser.parse_counted(records(payloads)))
    got = rows(out)
    assert reasons == {"JSON nests deeper than 100 levels": 901}
    assert [r[CORRUPT_RECORD_COLUMN] for r in got] == [None] * 100 + payloads[100:-1] + [None]
    assert got[99]["a"] == nested(99).decode()  # a value 99 deep, as its JSON text
    assert got[-1]["b"] == 7


def test_brackets_inside_strings_do_not_count_as_nesting():
    schema = output_schema(struct(("a", StringType())))
    fmt = PayloadFormat.parse("json", "`a` STRING")
    payload = b'{"a": "' + b"[{" * 5000 + b'"}'
    out, corrupt = parse_batch(records([payload, b'[[{"a": "' + b"[" * 200 + b'"}]]']), fmt, schema)
    assert corrupt == 1  # only the second: an array, not an object
    assert rows(out)[0]["a"] == "[{" * 5000


# ---- inference -----------------------------------------------------------------------


def test_inference_leaves_out_json_nested_past_the_bound_and_says_so(caplog):
    """One such record in inferSchema's sample made load() fail (RecursionError)."""
    fmt = PayloadFormat.parse("json", None, None, "true")
    sample = [nested(990), b'{"x": 1}', nested(101), nested(3)]
    with caplog.at_level("WARNING", logger="kinesis_dstream.sql.parsing.payload"):
        ddl = on_a_deep_stack(150, lambda: infer_schema(sample, fmt))
    assert ddl == "`x` bigint, `a` struct<`a`: struct<`a`: bigint>>"
    [line] = [r.getMessage() for r in caplog.records]
    assert line == (
        "inferSchema: 2 of 4 sampled records did not parse as json and are left out of the "
        "inferred schema (2: JSON nests deeper than 100 levels)"
    )


def test_json_inference_unions_keys_in_first_seen_order_and_widens():
    fmt = PayloadFormat.parse("json", None, None, "true")
    sample = [
        b'{"id": 1, "price": 2, "tag": "a", "nested": {"x": 1}, "list": [1, 2]}',
        gzip.compress(b'{"price": 2.5, "ok": true, "nested": {"y": "b"}, "id": "x"}'),
        b'{"list": [1.5], "none": null}',
        b"garbage",
        b"[1]",
    ]
    assert infer_schema(sample, fmt) == (
        "`id` string, `price` double, `tag` string, `nested` struct<`x`: bigint, `y`: string>, "
        "`list` array<double>, `ok` boolean, `none` string"
    )


def test_csv_inference_names_columns_like_spark_and_widens():
    fmt = PayloadFormat.parse("csv", None, "\t", True)
    sample = [b"1\t2.5\ttrue\tx\t2026-11-23T08:00:00", b"3000000000\t3\tfalse\t\t2026-11-23"]
    assert infer_schema(sample, fmt) == (
        "`_c0` bigint, `_c1` double, `_c2` boolean, `_c3` string, `_c4` timestamp"
    )


def test_inferred_schema_parses_the_sample():
    fmt = PayloadFormat.parse("json", None, None, "true")
    sample = [b'{"a": 1, "b": {"c": [true]}}', b'{"a": 2.5, "d": "x"}']
    payload = infer_struct(sample, fmt)
    out, corrupt = parse_batch(records(sample), fmt, output_schema(payload))
    assert corrupt == 0
    assert [(r["a"], r["b"], r["d"]) for r in rows(out)] == [
        (1.0, {"c": [True]}, None),
        (2.5, None, "x"),
    ]


# ---- avro ----------------------------------------------------------------------------

AVRO_SCHEMA = {
    "type": "record",
    "name": "test",
    "fields": [
        {"name": "_id", "type": "string"},
        {"name": "index", "type": ["int", "string", "float"]},
        {"name": "maybe", "type": ["null", "long"]},
        {"name": "color", "type": {"type": "enum", "name": "C", "symbols": ["RED", "BLUE"]}},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
    ],
}


def avro_datum(value: dict, schema: dict = AVRO_SCHEMA) -> bytes:
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, fastavro.parse_schema(schema), value)
    return buf.getvalue()


def test_avro_datum_with_a_schema():
    fmt = PayloadFormat.parse("avro", json.dumps(AVRO_SCHEMA))
    assert fmt.payload_ddl() == (
        "`_id` string, `index` struct<`member0`: int, `member1`: string, `member2`: float>, "
        "`maybe` bigint, `color` string, `at` timestamp"
    )
    schema = output_schema(fmt.avro_struct())
    datum = {"_id": "a", "index": "two", "maybe": None, "color": "BLUE", "at": T0}
    out, corrupt = parse_batch(
        records([avro_datum(datum), lzma.compress(avro_datum({**datum, "index": 3})), b"\x02"]),
        fmt,
        schema,
    )
    assert corrupt == 1
    first, second, bad = rows(out)
    assert first == {
        "_id": "a",
        "index": {"member0": None, "member1": "two", "member2": None},
        "maybe": None,
        "color": "BLUE",
        "at": T0,
        CORRUPT_RECORD_COLUMN: None,
    }
    assert second["index"] == {"member0": 3, "member1": None, "member2": None}
    assert bad[CORRUPT_RECORD_COLUMN] == b"\x02" and bad["_id"] is None


def test_avro_array_root_is_one_value_column():
    schema_text = json.dumps({"type": "array", "items": "int"})
    fmt = PayloadFormat.parse("avro", None, None, "false", schema_text)
    schema = output_schema(fmt.avro_struct())
    out, corrupt = parse_batch(records([avro_datum([1, 2], json.loads(schema_text))]), fmt, schema)
    assert (corrupt, rows(out)[0]["value"]) == (0, [1, 2])


def test_parser_pickles_and_rejects_a_schema_of_another_layout():
    fmt = PayloadFormat.parse("json", "`a` BIGINT")
    parser = PayloadParser(fmt, output_schema(struct(("a", LongType()))))
    parser.parse(records([b'{"a": 1}']))
    clone = pickle.loads(pickle.dumps(parser))
    assert rows(clone.parse(records([b'{"a": 2}']))[0])[0]["a"] == 2
    wrong = PayloadParser(fmt, struct(("a", LongType())))
    with pytest.raises(ValueError, match="does not end with the columns"):
        wrong.parse(records([b"{}"]))


def test_the_declared_json_decoder_gives_the_stdlibs_columns(monkeypatch):
    from kinesis_dstream.sql.parsing import payload_json as payload_module

    schema = output_schema(struct(("a", LongType()), ("b", DoubleType())))
    fmt = PayloadFormat.parse("json", "`a` BIGINT, `b` DOUBLE")
    batch = records([b'{"a": 1, "b": 2}', b'{"a": 1.5}', b"nope"])
    declared = rows(parse_batch(batch, fmt, schema)[0])
    monkeypatch.setattr(payload_module, "decode_json", json.loads)
    assert rows(parse_batch(batch, fmt, schema)[0]) == declared
    assert [r[CORRUPT_RECORD_COLUMN] for r in declared] == [None, b'{"a": 1.5}', b"nope"]


def test_a_thirty_digit_integer_infers_as_a_decimal_on_every_machine(monkeypatch):
    from kinesis_dstream.sql.parsing import payload_json as payload_module

    fmt = PayloadFormat.parse("json", None, None, "true")
    sample = [b'{"id": 123456789012345678901234567890, "n": 5}']
    assert infer_schema(sample, fmt) == "`id` decimal(38,0), `n` bigint"
    monkeypatch.setattr(payload_module, "decode_json", json.loads)  # the stdlib agrees
    assert infer_schema(sample, fmt) == "`id` decimal(38,0), `n` bigint"


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=8,
)
RICH = struct(
    ("i", IntegerType()),
    ("d", DoubleType()),
    ("t", TimestampType()),
    ("day", DateType()),
    ("dec", DecimalType(5, 2)),
    ("arr", ArrayType(LongType())),
    ("s", struct(("x", BooleanType()), ("y", StringType()))),
    ("m", MapType(StringType(), DoubleType())),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.dictionaries(st.sampled_from(RICH.names), JSON_VALUES, max_size=8), max_size=8))
def test_any_json_values_in_any_typed_column_never_fail_the_batch(objects):
    schema = output_schema(RICH)
    fmt = PayloadFormat.parse("json", "(StructType)")
    payloads = [json.dumps(o).encode() for o in objects]
    out, corrupt = parse_batch(records(payloads), fmt, schema)
    assert out.num_rows == len(payloads) and out.schema == arrow_schema(schema)
    assert corrupt == sum(r[CORRUPT_RECORD_COLUMN] is not None for r in rows(out))


CSV_RICH = struct(
    ("i", IntegerType()),
    ("d", DoubleType()),
    ("t", TimestampType()),
    ("day", DateType()),
    ("dec", DecimalType(5, 2)),
    ("ok", BooleanType()),
)
CSV_FIELDS = st.one_of(
    # csv.writer writes a NUL only from Python 3.11 (before: "need to escape")
    st.text(max_size=12)
    if sys.version_info >= (3, 11)
    else st.text(
        st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=12
    ),
    st.integers().map(str),
    st.floats().map(str),
    st.datetimes().map(dt.datetime.isoformat),
    st.sampled_from(["true", "FALSE", "", " 1"]),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(CSV_FIELDS, max_size=8), max_size=8))
def test_any_csv_fields_in_any_typed_column_never_fail_the_batch(lines):
    buf = io.StringIO()
    payloads = []
    for fields in lines:
        buf.seek(0)
        buf.truncate()
        csv.writer(buf).writerow(fields)
        payloads.append(buf.getvalue().encode())
    schema = output_schema(CSV_RICH)
    out, corrupt = parse_batch(records(payloads), PayloadFormat.parse("csv", "(t)"), schema)
    assert out.num_rows == len(payloads) and out.schema == arrow_schema(schema)
    assert corrupt == sum(r[CORRUPT_RECORD_COLUMN] is not None for r in rows(out))
