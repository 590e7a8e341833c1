"""ShardReader's own CPU cost: records/s and MB/s for 1 KiB records, plain and KPL.

    python -m benchmarks.bench_reader

The Kinesis client is an in-memory stand-in that serves canned pages of 10,000 records
(GetRecords' largest page) and follows NextShardIterator, so what is timed is our reader:
pacing bookkeeping, de-aggregation with the shard's hash range, ESN tracking and building
a KinesisRecord per user record. No server is involved.

Baselines in the same run, over the same pages:
- plain: the least a consumer can do with a boto3 page, reading each record's fields into
  a tuple (what any reader must at least do);
- KPL: aws-kinesis-agg's ``iter_deaggregate_records(page, "Boto3")`` into a list.

A third line adds botocore's own work: the stand-in parses each page from the JSON body
Kinesis sends (base64 data, epoch timestamps) with botocore's parser, as a real client
does, so it shows what one core keeps up with end to end, short of the network; its
baseline is botocore's parse plus the field read.

The wire bodies are built once, before the timed runs. A fourth line does what a client
built by ``create_client`` does with the same wire JSON: the page decoder
(``retrieval/page_decoder.py``, with an ``x-amz-crc32`` header to check) decodes the body,
then botocore's parser runs on what it leaves (``ResponseMetadata``), exactly the steps of
botocore's endpoint; its baseline is the third line's reader.

"Shards per core" = our bytes/s divided by Kinesis's 2 MiB/s read limit per shard.
"""

from __future__ import annotations

import base64
import json
import time
import zlib
from datetime import datetime, timezone
from typing import Optional

import botocore.session
from aws_kinesis_agg.deaggregator import iter_deaggregate_records
from botocore.parsers import create_parser

from benchmarks import results
from kinesis_dstream.kpl import MAX_HASH_KEY, RecordAggregator
from kinesis_dstream.retrieval.page_decoder import GetRecordsDecoder
from kinesis_dstream.retrieval.reader import ReaderConfig, ShardReader, StartPosition

RECORD_BYTES = 1024
PAGE_RECORDS = 10_000
PAGES = 10
SHARD_READ_LIMIT_BPS = 2 * 1024 * 1024
ARRIVAL = datetime(2026, 11, 21, tzinfo=timezone.utc)


class CannedKinesis:
    """Serves ``pages`` in turn to GetRecords; each page's iterator names the next page."""

    def __init__(self, pages: list) -> None:
        self.pages = pages

    def get_shard_iterator(self, **_: object) -> dict:
        return {"ShardIterator": "0"}

    def get_records(self, ShardIterator: str, Limit: int) -> dict:  # boto3's argument names
        n = int(ShardIterator)
        return {
            "Records": self.pages[n % len(self.pages)],
            "NextShardIterator": str(n + 1),
            "MillisBehindLatest": 60_000,  # behind: the reader keeps going
        }


class ParsingKinesis(CannedKinesis):
    """Like CannedKinesis, but each page is parsed from its wire JSON by botocore."""

    def __init__(self, pages: list) -> None:
        super().__init__(pages)
        self._operation = (
            botocore.session.get_session()
            .get_service_model("kinesis")
            .operation_model("GetRecords")
        )
        self._parser = create_parser("json")
        self._bodies = [
            json.dumps({"Records": [_wire(r) for r in page]}).encode() for page in pages
        ]

    def get_records(self, ShardIterator: str, Limit: int) -> dict:  # boto3's argument names
        n = int(ShardIterator)
        body = self._bodies[n % len(self._bodies)]
        parsed = self._parser.parse(
            {"body": body, "headers": {}, "status_code": 200}, self._operation.output_shape
        )
        return {**parsed, "NextShardIterator": str(n + 1), "MillisBehindLatest": 60_000}


class DecodingKinesis(ParsingKinesis):
    """Like ParsingKinesis, with the page decoder's before-parse step first."""

    def __init__(self, pages: list) -> None:
        super().__init__(pages)
        self._decoder = GetRecordsDecoder()
        self._crc = [str(zlib.crc32(body) & 0xFFFFFFFF) for body in self._bodies]

    def get_records(self, ShardIterator: str, Limit: int) -> dict:  # boto3's argument names
        n = int(ShardIterator)
        k = n % len(self._bodies)
        response = {
            "body": self._bodies[k],
            "headers": {"content-type": "application/x-amz-json-1.1", "x-amz-crc32": self._crc[k]},
            "status_code": 200,
        }
        custom: dict = {}
        self._decoder(response_dict=response, customized_response_dict=custom)
        parsed = self._parser.parse(response, self._operation.output_shape)
        parsed.update(custom)
        assert self._decoder.pages_left_to_botocore == 0
        return {**parsed, "NextShardIterator": str(n + 1), "MillisBehindLatest": 60_000}


def _wire(record: dict) -> dict:
    return {
        **record,
        "Data": base64.b64encode(record["Data"]).decode(),
        "ApproximateArrivalTimestamp": record["ApproximateArrivalTimestamp"].timestamp(),
    }


def plain_pages() -> list:
    pages = []
    for p in range(PAGES):
        base = 10**55 + p * PAGE_RECORDS
        pages.append(
            [
                {
                    "SequenceNumber": str(base + i),
                    "ApproximateArrivalTimestamp": ARRIVAL,
                    "Data": bytes([i % 251]) * RECORD_BYTES,
                    "PartitionKey": f"pk-{i % 100}",
                }
                for i in range(PAGE_RECORDS)
            ]
        )
    return pages


def kpl_pages() -> list:
    """Pages of 10,000 user records each, in 50 KiB aggregates as the KPL writes them."""
    pages = []
    for p in range(PAGES):
        aggregator = RecordAggregator()
        entries = []
        for i in range(PAGE_RECORDS):
            entries += aggregator.add(bytes([i % 251]) * RECORD_BYTES, f"pk-{i % 100}")
        entries += aggregator.flush()
        base = 10**55 + p * PAGE_RECORDS
        pages.append(
            [
                {
                    "SequenceNumber": str(base + i),
                    "ApproximateArrivalTimestamp": ARRIVAL,
                    "Data": entry["Data"],
                    "PartitionKey": entry["PartitionKey"],
                }
                for i, entry in enumerate(entries)
            ]
        )
    return pages


def ours(pages: list, client: Optional[CannedKinesis] = None) -> int:
    reader = ShardReader(
        client or CannedKinesis(pages),
        "bench",
        "shardId-000000000000",
        StartPosition.trim_horizon(),
        hash_key_range=(0, MAX_HASH_KEY),
        config=ReaderConfig(min_call_interval_s=0.0),
    )
    count = 0
    for _ in range(PAGES):
        count += len(reader.read(max_records=PAGE_RECORDS).records)
    return count


def baseline_plain(pages: list) -> int:
    count = 0
    for page in pages:
        out = [
            (r["Data"], r["PartitionKey"], r["SequenceNumber"], r["ApproximateArrivalTimestamp"])
            for r in page
        ]
        count += len(out)
    return count


def baseline_plain_parsing(pages: list, client: ParsingKinesis) -> int:
    parsed = [client.get_records(ShardIterator=str(n), Limit=PAGE_RECORDS) for n in range(PAGES)]
    return baseline_plain([page["Records"] for page in parsed])


def baseline_kpl(pages: list) -> int:
    return sum(len(list(iter_deaggregate_records(page, data_format="Boto3"))) for page in pages)


def best_seconds(fn, pages: list, runs: int = 5) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        assert fn(pages) == PAGES * PAGE_RECORDS
        best = min(best, time.perf_counter() - start)
    return best


def report(name: str, ours_s: float, baseline_s: float, baseline_name: str) -> None:
    records = PAGES * PAGE_RECORDS
    rate = records / ours_s
    mb_s = rate * RECORD_BYTES / 1e6
    shards = rate * RECORD_BYTES / SHARD_READ_LIMIT_BPS
    print(
        f"{name}:\n  ours {rate:>10,.0f} rec/s {mb_s:7.1f} MB/s  "
        f"= {shards:5.1f} shards at 2 MiB/s per core\n  {baseline_name}: "
        f"{records / baseline_s:,.0f} rec/s; ours takes {ours_s / baseline_s:.2f}x its time"
    )


def main() -> None:
    print(
        f"{PAGES} canned pages x {PAGE_RECORDS:,} records x {RECORD_BYTES} B, best of 5, "
        "in-memory stand-in client (no server)"
    )
    plain, kpl = plain_pages(), kpl_pages()
    print(f"KPL pages hold {sum(map(len, kpl)) // PAGES} aggregates each")
    report("plain", best_seconds(ours, plain), best_seconds(baseline_plain, plain), "field read")
    report("KPL", best_seconds(ours, kpl), best_seconds(baseline_kpl, kpl), "aws-kinesis-agg")
    # The wire bodies are encoded once, outside the timed runs.
    parsing, decoding = ParsingKinesis(plain), DecodingKinesis(plain)
    botocore_s = best_seconds(lambda p: ours(p, parsing), plain, runs=3)
    report(
        "plain+botocore parse",
        botocore_s,
        best_seconds(lambda p: baseline_plain_parsing(p, parsing), plain, runs=3),
        "botocore parse + field read",
    )
    report(
        "plain+page decoder (what create_client's clients do)",
        best_seconds(lambda p: ours(p, decoding), plain, runs=3),
        botocore_s,
        "ours on botocore's parse",
    )


if __name__ == "__main__":
    results.run(main, "reader", "The shard reader and the page decoder against botocore's parser")
