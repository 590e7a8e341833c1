"""Glue payload parsing (sql/payload.py): rows/s against baselines in the same run.

    python -m benchmarks.bench_payload

100,000 small JSON records (5 fields, about 90 bytes) in one ``ARROW_SCHEMA`` batch,
parsed into ``bigint, string, double, boolean, timestamp`` columns; best of 5. Baselines:
``msgspec.json.decode`` of every payload alone (the per-record floor), and pyarrow's vectorised
``pyarrow.json.read_json`` of the payloads joined by newlines (no per-record Python).
Also: the same batch gzip-, zstd- and framed-Snappy-compressed per record, CSV, and with
the stdlib ``json``. msgspec is the one JSON decoder the parser uses (a declared
dependency). Decompression alone, bounded (every codec decoded in steps that stop at the
bound) against what it did before (cramjam's zstd and Snappy with no bound, gzip given
whole to zlib), on the 100,000 small records and on 200 records of 256 KiB of JSON.

The same five fields as plain Avro datums (``schema`` option), as Glue Schema Registry
Avro (moto's registry on the embedded local AWS: written with the reader's version, with
an older version resolved into it, zlib-compressed), and as log lines parsed with
``classification=grok``; plus Apache combined-log lines with ``%{COMBINEDAPACHELOG}``
(12 string columns), also with Python's unbounded ``re`` as grok matched that pattern
before every match was bounded (the cost of the bound), and its expression alone with
``re``, ``regex`` and ``regex`` with a timeout. The registry is asked once per version
(counted) and its round trips are outside the timed loop, as on an executor.
"""

from __future__ import annotations

import datetime as dt
import gzip
import io
import json
import re
import time
import zlib
from types import SimpleNamespace
from typing import Any

import cramjam
import fastavro
import msgspec
import pyarrow as pa
import pyarrow.json as pa_json
import regex
import zstandard
from pyspark.sql.types import (
    BooleanType,
    DoubleType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from benchmarks import results
from kinesis_dstream.sql.parsing import grok as grok_module
from kinesis_dstream.sql.parsing import payload_json
from kinesis_dstream.sql.parsing.decompress import MAX_DECOMPRESSED_BYTES as MAX
from kinesis_dstream.sql.parsing.decompress import decompress, detect_codec
from kinesis_dstream.sql.parsing.grok import compile_grok
from kinesis_dstream.sql.parsing.payload import PayloadFormat, PayloadParser, output_schema
from kinesis_dstream.sql.schema import ARROW_SCHEMA

N = 100_000
T0 = dt.datetime(2026, 11, 23, tzinfo=dt.timezone.utc)
PAYLOAD = StructType(
    [
        StructField("id", LongType(), True),
        StructField("user", StringType(), True),
        StructField("amount", DoubleType(), True),
        StructField("ok", BooleanType(), True),
        StructField("at", TimestampType(), True),
    ]
)


def batch(payloads: list) -> pa.RecordBatch:
    n = len(payloads)
    return pa.RecordBatch.from_arrays(
        [
            pa.array(payloads, pa.binary()),
            pa.array(["pk"] * n, pa.string()),
            pa.array(["s"] * n, pa.string()),
            pa.array(["shardId-000000000000"] * n, pa.string()),
            pa.array([str(i) for i in range(n)], pa.string()),
            pa.array([0] * n, pa.int64()),
            pa.array([None] * n, pa.string()),
            pa.array([T0] * n, ARROW_SCHEMA[7].type),
        ],
        schema=ARROW_SCHEMA,
    )


def best_rate(fn, runs: int = 5) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        assert fn() == N
        best = min(best, time.perf_counter() - start)
    return N / best


AVRO_ROW = {
    "type": "record",
    "name": "Row",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "user", "type": "string"},
        {"name": "amount", "type": "double"},
        {"name": "ok", "type": "boolean", "default": False},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-micros"}},
    ],
}
AVRO_OLD_ROW = {**AVRO_ROW, "fields": [f for f in AVRO_ROW["fields"] if f["name"] != "ok"]}
GROK_ROW = (
    "%{INT:id:long} %{USERNAME:user} %{NUMBER:amount:double} %{BOOLEAN:ok:boolean} "
    "%{TIMESTAMP_ISO8601:at}"
)
COMBINED = (
    '{i}.0.{a}.{b} - user{u} [23/Nov/2026:08:{m:02d}:{s:02d} +0000] "GET /item/{i}?p=2 '
    'HTTP/1.1" 200 {i} "https://example.com/ref/{u}" "Mozilla/5.0 (X11; Linux x86_64)"'
)


def registry_rows(rows: list, metadata: tuple) -> tuple:
    """(name, parser, batch) rows for Schema Registry Avro, and the registry's call count."""
    from kinesis_dstream.aws import AWSCredentials
    from kinesis_dstream.local import LocalAWS
    from kinesis_dstream.schema_registry import GlueSchemaRegistrySerializer, shared_cache
    from kinesis_dstream.sql.parsing.registry import RegistrySchema

    aws = LocalAWS().start()
    glue = aws.client("glue")
    glue.create_registry(RegistryName="bench")
    old = GlueSchemaRegistrySerializer(AVRO_OLD_ROW, "bench", client=glue)
    assert old.version_id  # registered first: version 1
    new = GlueSchemaRegistrySerializer(AVRO_ROW, "bench", client=glue)
    new_zlib = GlueSchemaRegistrySerializer(AVRO_ROW, "bench", client=glue, compression="zlib")
    assert new.version_id == new_zlib.version_id != old.version_id  # version 2: the latest
    options = {
        "registryName": "bench",
        "schemaName": "Row",
        "registryEndpointUrl": aws.endpoint_url,
    }
    fmt = PayloadFormat.parse("avro", registry=RegistrySchema.parse(options.get)).resolved(
        aws.region_name, AWSCredentials(access_key_id="testing", secret_access_key="testing")
    )
    assert fmt.registry.reader.version_id == new.version_id
    parser = PayloadParser(fmt, output_schema(PAYLOAD, list(metadata), True), metadata, True)
    cases = [
        ("registry, reader's version", parser, batch([new.serialize(r) for r in rows])),
        ("registry, older version", parser, batch([old.serialize(r) for r in rows])),
        ("registry, zlib", parser, batch([new_zlib.serialize(r) for r in rows])),
    ]
    return cases, aws, lambda: shared_cache(fmt.registry.client_spec).fetches


def main() -> None:
    json_payloads = [
        msgspec.json.encode(
            {
                "id": i,
                "user": f"user-{i % 977}",
                "amount": i / 7,
                "ok": i % 2 == 0,
                "at": f"2026-11-23T08:{i // 60 % 60:02d}:{i % 60:02d}Z",
            }
        )
        for i in range(N)
    ]
    csv_payloads = [
        f"{i},user-{i % 977},{i / 7},true,2026-11-23T08:00:00Z".encode() for i in range(N)
    ]
    schema = output_schema(PAYLOAD, ["shardId", "sequenceNumber"], True)
    json_parser = PayloadParser(
        PayloadFormat.parse("json", "(StructType)"), schema, ("shardId", "sequenceNumber"), True
    )
    csv_parser = PayloadParser(
        PayloadFormat.parse("csv", "(StructType)"), schema, ("shardId", "sequenceNumber"), True
    )
    plain = batch(json_payloads)
    gzipped = batch([gzip.compress(p) for p in json_payloads])
    zstd_batch = batch([zstandard.ZstdCompressor().compress(p) for p in json_payloads])
    snappy_batch = batch([bytes(cramjam.snappy.compress(p)) for p in json_payloads])
    csv_batch = batch(csv_payloads)
    joined = b"\n".join(json_payloads)

    def ours(parser: PayloadParser, b: pa.RecordBatch) -> int:
        out, corrupt = parser.parse(b)
        assert corrupt == 0
        return out.num_rows

    loads_only = best_rate(lambda: len([msgspec.json.decode(p) for p in json_payloads]))
    arrow = best_rate(lambda: pa_json.read_json(io.BytesIO(joined)).num_rows)
    rate = best_rate(lambda: ours(json_parser, plain))
    rate_gzip = best_rate(lambda: ours(json_parser, gzipped))
    rate_csv = best_rate(lambda: ours(csv_parser, csv_batch))
    rate_zstd = best_rate(lambda: ours(json_parser, zstd_batch))
    rate_snappy = best_rate(lambda: ours(json_parser, snappy_batch))
    payload_json.decode_json = json.loads
    rate_stdlib = best_rate(lambda: ours(json_parser, plain))
    payload_json.decode_json = msgspec.json.decode
    decompress_rates = decompression_rates(json_payloads)

    metadata = ("shardId", "sequenceNumber")
    rows = [
        {
            "id": i,
            "user": f"user-{i % 977}",
            "amount": i / 7,
            "ok": i % 2 == 0,
            "at": T0 + dt.timedelta(seconds=i),
        }
        for i in range(N)
    ]
    avro_fmt = PayloadFormat.parse("avro", json.dumps(AVRO_ROW))
    avro_parser = PayloadParser(avro_fmt, schema, metadata, True)
    parsed_row = fastavro.parse_schema(AVRO_ROW)
    avro_batch = batch([_datum(parsed_row, r) for r in rows])
    rate_avro = best_rate(lambda: ours(avro_parser, avro_batch))
    registry_cases, aws, fetches = registry_rows(rows, metadata)
    try:
        registry_rates = [
            (name, best_rate(lambda p=p, b=b: ours(p, b))) for name, p, b in registry_cases
        ]
        registry_calls = fetches()
    finally:
        aws.stop()
    lines = [
        f"{r['id']} {r['user']} {r['amount']} {str(r['ok']).lower()} "
        f"{r['at'].strftime('%Y-%m-%dT%H:%M:%SZ')}".encode()
        for r in rows
    ]
    grok_batch = batch(lines)
    grok_fmt = PayloadFormat.parse("grok", grok_pattern=GROK_ROW)
    grok_parser = PayloadParser(grok_fmt, schema, metadata, True)
    grok_rate = best_rate(lambda: ours(grok_parser, grok_batch))
    combined = batch(
        [
            COMBINED.format(i=i, a=i % 256, b=i % 7, u=i % 50, m=i // 60 % 60, s=i % 60).encode()
            for i in range(N)
        ]
    )
    combined_rates = []
    bounded_regex = grok_module.compile_regex
    for engine in (bounded_regex, unbounded_re):
        grok_module.compile_regex = engine  # used where a pattern's matcher is built
        try:
            fmt = PayloadFormat.parse("grok", grok_pattern="%{COMBINEDAPACHELOG}")
            out = output_schema(fmt.grok.struct, list(metadata), True)
            combined_parser = PayloadParser(fmt, out, metadata, True)
            combined_rates.append(best_rate(lambda p=combined_parser: ours(p, combined)))
        finally:
            grok_module.compile_regex = bounded_regex
    combined_lines = [b.decode() for b in combined.column("data").to_pylist()]
    text = compile_grok("%{COMBINEDAPACHELOG}").regex_text
    plain_re = re.compile(text, re.ASCII).fullmatch
    plain_regex = regex.compile(text, regex.ASCII).fullmatch
    match_rates = [
        best_rate(lambda: sum(plain_re(x) is not None for x in combined_lines)),
        best_rate(lambda: sum(plain_regex(x) is not None for x in combined_lines)),
        best_rate(lambda: sum(plain_regex(x, timeout=1.0) is not None for x in combined_lines)),
    ]

    print(f"{N:,} JSON records of ~{len(joined) // N} bytes, best of 5")
    print(f"msgspec.json.decode alone       {loads_only:12,.0f} rows/s")
    print(f"pyarrow.json.read_json (joined) {arrow:12,.0f} rows/s")
    print(
        f"parse json (msgspec)            {rate:12,.0f} rows/s  "
        f"{rate / loads_only:.2f} of loads alone, {rate / arrow:.2f} of pyarrow"
    )
    print(f"parse json, gzip per record     {rate_gzip:12,.0f} rows/s  {rate_gzip / rate:.2f}")
    print(f"parse json, zstd per record     {rate_zstd:12,.0f} rows/s  {rate_zstd / rate:.2f}")
    print(f"parse json, snappy per record   {rate_snappy:12,.0f} rows/s  {rate_snappy / rate:.2f}")
    for label, bounded_rate, before_rate in decompress_rates:
        print(
            f"decompress {label:<21}{bounded_rate:12,.0f} rows/s bounded, "
            f"{before_rate:,.0f} before ({bounded_rate / before_rate:.2f})"
        )
    print(f"parse json (stdlib json)        {rate_stdlib:12,.0f} rows/s  {rate_stdlib / rate:.2f}")
    print(f"parse csv                       {rate_csv:12,.0f} rows/s  {rate_csv / rate:.2f}")
    print(f"parse avro (schema option)      {rate_avro:12,.0f} rows/s  {rate_avro / rate:.2f}")
    for name, value in registry_rates:
        print(
            f"parse {name:<26}{value:12,.0f} rows/s  {value / rate:.2f} of json, "
            f"{value / rate_avro:.2f} of plain avro"
        )
    print(
        f"  (GetSchemaVersion calls for {len(registry_rates) * 5} timed batches: {registry_calls})"
    )
    print(
        f"parse grok, 5 typed fields      {grok_rate:12,.0f} rows/s  {grok_rate / rate:.2f} of json"
    )
    print(
        f"parse grok, COMBINEDAPACHELOG   {combined_rates[0]:12,.0f} rows/s  "
        f"{combined_rates[0] / rate:.2f} of json; with unbounded re (before 2026-11-26): "
        f"{combined_rates[1]:,.0f} ({combined_rates[1] / combined_rates[0]:.2f}x)"
    )
    print(
        f"  its regular expression alone: re {match_rates[0]:,.0f} lines/s, regex "
        f"{match_rates[1]:,.0f}, regex bounded (timeout=1.0) {match_rates[2]:,.0f} "
        f"(re {match_rates[0] / match_rates[2]:.2f}x, regex unbounded "
        f"{match_rates[1] / match_rates[2]:.2f}x the bounded)"
    )


def decompression_rates(small: list) -> list:
    """(label, bounded rows/s, before rows/s) of each codec, on ``small`` payloads and on
    200 of 256 KiB (best of 7, run by turns): ``decompress`` against :func:`before`."""
    n = len(small)
    large = [
        b"\n".join(small[j % n] for j in range(i * 2800, (i + 1) * 2800))[: 256 * 1024]
        for i in range(200)
    ]
    codecs = [
        ("gzip", gzip.compress),
        ("zstd", zstandard.ZstdCompressor().compress),
        ("snappy", lambda d: bytes(cramjam.snappy.compress(d))),
    ]
    rates = []
    for size, payloads in (("small", small), ("256 KiB", large)):
        for codec, compress in codecs:
            data = [compress(p) for p in payloads]
            assert all(decompress(d) == before(d) == (p, codec) for d, p in zip(data, payloads))
            bounded, old = best_rates_alternating(
                lambda d=data: [decompress(x) for x in d], lambda d=data: [before(x) for x in d]
            )
            n = len(payloads)
            rates.append((f"{codec}, {size}", n / bounded, n / old))
    return rates


def best_rates_alternating(first, second, runs: int = 7) -> tuple:
    """The best seconds of each of two calls, run by turns (a loaded machine's drift falls
    on both alike)."""
    best = [float("inf"), float("inf")]
    for _ in range(runs):
        for i, fn in enumerate((first, second)):
            start = time.perf_counter()
            fn()
            best[i] = min(best[i], time.perf_counter() - start)
    return best[0], best[1]


def before(data: bytes) -> tuple:
    """What ``decompress`` did before every codec was bounded (2026-11-28), for gzip, zstd
    and framed Snappy: gzip given whole to zlib a member at a time, zstd and Snappy given
    whole to cramjam (no bound); ``(payload, codec)`` as ``decompress`` answers."""
    codec = detect_codec(data)
    if codec == "gzip":
        out, rest = bytearray(), data
        while rest:
            member = zlib.decompressobj(16 + zlib.MAX_WBITS)
            out += member.decompress(rest, MAX + 1 - len(out))
            rest = member.unused_data
        return bytes(out), codec
    if codec == "zstd":
        return bytes(cramjam.zstd.decompress(data)), codec
    return bytes(cramjam.snappy.decompress(data)), codec


def unbounded_re(text: str) -> Any:
    """What grok matched ``%{COMBINEDAPACHELOG}`` with before every match was bounded:
    Python's ``re``, which has no timeout (the keyword is taken and ignored)."""
    compiled = re.compile(text, re.ASCII)
    match = compiled.fullmatch
    return SimpleNamespace(
        groupindex=compiled.groupindex, fullmatch=lambda line, timeout=None: match(line)
    )


def _datum(schema, row: dict) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, schema, row)
    return out.getvalue()


if __name__ == "__main__":
    results.run(main, "payload", "Glue payload parsing against msgspec's decode alone")
