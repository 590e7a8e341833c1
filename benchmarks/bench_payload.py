"""Glue payload parsing (sql/payload.py): rows/s against baselines in the same run.

    python -m benchmarks.bench_payload

100,000 small JSON records (5 fields, about 90 bytes) in one ``ARROW_SCHEMA`` batch,
parsed into ``bigint, string, double, boolean, timestamp`` columns; best of 5. Baselines:
``msgspec.json.decode`` of every payload alone (the per-record floor), and pyarrow's vectorised
``pyarrow.json.read_json`` of the payloads joined by newlines (no per-record Python).
Also: the same batch gzip-compressed per record, CSV, and with the stdlib ``json``.
msgspec is the one JSON decoder the parser uses (a declared dependency).
"""

from __future__ import annotations

import datetime as dt
import gzip
import io
import json
import time

import msgspec
import pyarrow as pa
import pyarrow.json as pa_json
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
from kinesis_dstream.sql.parsing import payload as payload_module
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
    payload_module.decode_json = json.loads
    rate_stdlib = best_rate(lambda: ours(json_parser, plain))
    payload_module.decode_json = msgspec.json.decode

    print(f"{N:,} JSON records of ~{len(joined) // N} bytes, best of 5")
    print(f"msgspec.json.decode alone       {loads_only:12,.0f} rows/s")
    print(f"pyarrow.json.read_json (joined) {arrow:12,.0f} rows/s")
    print(
        f"parse json (msgspec)            {rate:12,.0f} rows/s  "
        f"{rate / loads_only:.2f} of loads alone, {rate / arrow:.2f} of pyarrow"
    )
    print(f"parse json, gzip per record     {rate_gzip:12,.0f} rows/s  {rate_gzip / rate:.2f}")
    print(f"parse json (stdlib json)        {rate_stdlib:12,.0f} rows/s  {rate_stdlib / rate:.2f}")
    print(f"parse csv                       {rate_csv:12,.0f} rows/s  {rate_csv / rate:.2f}")


if __name__ == "__main__":
    results.run(main, "payload", "Glue payload parsing against msgspec's decode alone")
