"""The word producer: the Python counterpart of Spark's KinesisWordProducerASL.

    kinesis-word-producer <stream-name> <endpoint-url> <records-per-sec> <words-per-record>

Each one-second round puts ``records-per-sec`` records of ``words-per-record`` words
drawn from {spark, you, are, my, father}, prints ``Sent N records``, and at the end
prints the totals for the words sent. ``--local`` runs on the embedded local AWS,
creates the stream and reads it back to check every word arrived. ``--glue-registry R``
writes each record as Avro ``{"words": ...}`` framed as the Glue Schema Registry's
serializers frame it (schema ``kinesis_word_record`` in registry R, registered if
missing; ``--zlib`` compresses), for a source reading ``classification=avro`` with
``registryName=R``.
"""

from __future__ import annotations

import argparse
import logging
import random
import sys
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any, Callable, Optional

from ..aws import create_client
from ..errors import KinesisDStreamError, StreamNotFoundError
from ..producer import KinesisProducer
from ..progress_bar import Progress
from ..retrieval.streams import ensure_stream, require_stream

WORDS = ("spark", "you", "are", "my", "father")
DEFAULT_LOCAL_STREAM = "kinesis-dstream-demo"
#: ``--glue-registry``: each record's Avro schema, registered under its name.
WORD_RECORD_SCHEMA = {
    "type": "record",
    "name": "kinesis_word_record",
    "fields": [{"name": "words", "type": "string"}],
}


def make_record(rng: random.Random, words_per_record: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words_per_record))


def produce(
    producer: KinesisProducer,
    records_per_sec: int,
    words_per_record: int,
    rounds: int,
    rng: random.Random,
    out: Any = None,
    round_s: float = 1.0,
    encode: Optional[Callable[[str], bytes]] = None,
) -> Counter:
    """Put ``rounds`` rounds of records, one round per ``round_s``; returns the word totals.
    ``encode`` turns a record's text into its payload (default: the UTF-8 text)."""
    out = out or sys.stdout
    totals: Counter = Counter()
    record_num = 0
    next_round = time.monotonic()
    # On a terminal, a bar on stderr; elsewhere the "Sent" lines (as Spark's producer
    # prints them) are the progress.
    bar = Progress("producing", rounds * records_per_sec, "records") if _tty() else None
    for _ in range(rounds):
        for _ in range(records_per_sec):
            data = make_record(rng, words_per_record)
            totals.update(data.split(" "))
            producer.put(encode(data) if encode else data, f"partitionKey-{record_num}")
            record_num += 1
        producer.flush()
        if bar is not None:
            bar.advance(records_per_sec)
        else:
            print(f"Sent {records_per_sec} records", file=out, flush=True)
        next_round += round_s
        time.sleep(max(0.0, next_round - time.monotonic()))
    if bar is not None:
        bar.close()
    return totals


def _tty() -> bool:
    return sys.stderr.isatty()


def print_totals(
    totals: Counter, title: str = "Totals for the words sent", out: Any = None
) -> None:
    out = out or sys.stdout
    print(title, file=out)
    for word, count in sorted(totals.items()):
        print(f"({word}, {count})", file=out)
    out.flush()


def count_words_in_stream(
    client: Any, stream_name: str, decode: Optional[Callable[[bytes], str]] = None
) -> Counter:
    from ..kpl import deaggregate
    from .readback import read_all_records

    totals: Counter = Counter()
    with Progress("reading the stream back", unit="records") as progress:
        records = read_all_records(client, stream_name, on_page=progress.advance)
    for record in deaggregate(records):
        text = decode(record.data) if decode else record.data.decode("utf-8")
        totals.update(text.split(" "))
    return totals


def parse_args(argv: Optional[Sequence[str]]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="kinesis-word-producer",
        description="Put random words into a Kinesis stream, one round per second "
        "(the counterpart of Spark's KinesisWordProducerASL).",
    )
    parser.add_argument("stream_name", nargs="?", metavar="stream-name")
    parser.add_argument("endpoint_url", nargs="?", metavar="endpoint-url")
    parser.add_argument("records_per_sec", nargs="?", type=int, metavar="records-per-sec")
    parser.add_argument("words_per_record", nargs="?", type=int, metavar="words-per-record")
    parser.add_argument("--rounds", type=int, default=10, help="one-second rounds (default 10)")
    parser.add_argument("--region", help="AWS region (default: AWS_REGION / AWS config)")
    parser.add_argument("--create-stream", action="store_true", help="create the stream if missing")
    parser.add_argument(
        "--shards", type=int, default=1, help="shards for --create-stream (default 1)"
    )
    parser.add_argument("--seed", type=int, help="random seed, for a repeatable run")
    parser.add_argument(
        "--aggregate", action="store_true", help="pack records into KPL aggregates (by shard)"
    )
    parser.add_argument(
        "--glue-registry",
        metavar="REGISTRY",
        help="write Avro records framed for this Glue Schema Registry registry (schema "
        "kinesis_word_record, registered if missing)",
    )
    parser.add_argument("--zlib", action="store_true", help="with --glue-registry: zlib-compress")
    parser.add_argument(
        "--local",
        action="store_true",
        help="run on the embedded local AWS (moto): creates the stream, then reads it back "
        "and checks the totals; the positional arguments become optional",
    )
    args = parser.parse_args(argv)
    if args.local:
        args.stream_name = args.stream_name or DEFAULT_LOCAL_STREAM
        args.records_per_sec = args.records_per_sec or 1000
        args.words_per_record = args.words_per_record or 10
        args.create_stream = True
        if args.shards == 1:
            args.shards = 2
    elif None in (args.stream_name, args.endpoint_url, args.records_per_sec, args.words_per_record):
        parser.error(
            "the arguments stream-name, endpoint-url, records-per-sec and "
            "words-per-record are required (or use --local)"
        )
    if args.zlib and not args.glue_registry:
        parser.error("--zlib compresses --glue-registry records: give --glue-registry")
    for name in ("records_per_sec", "words_per_record", "rounds", "shards"):
        if getattr(args, name) < 1:
            parser.error(
                f"{name.replace('_', '-')} must be a positive integer, got {getattr(args, name)}"
            )
    return args


def _registry_codec(args: argparse.Namespace, glue: Any) -> tuple:
    """``(encode, decode)`` of ``--glue-registry`` records, or ``(None, None)``."""
    if not args.glue_registry:
        return None, None
    from ..schema_registry import GlueSchemaRegistryDeserializer, GlueSchemaRegistrySerializer

    compression = "zlib" if args.zlib else "none"
    serializer = GlueSchemaRegistrySerializer(
        WORD_RECORD_SCHEMA, args.glue_registry, client=glue, compression=compression
    )
    deserializer = GlueSchemaRegistryDeserializer(glue, WORD_RECORD_SCHEMA)
    return (
        lambda text: serializer.serialize({"words": text}),
        lambda data: deserializer.decode(data)["words"],
    )


def run(args: argparse.Namespace, endpoint_url: str, client: Any, glue: Any = None) -> int:
    if args.create_stream:
        ensure_stream(client, args.stream_name, args.shards)
    else:
        require_stream(client, args.stream_name)
    if args.glue_registry and glue is None:
        glue = create_client("glue", region_name=args.region)
    encode, decode = _registry_codec(args, glue)
    rng = random.Random(args.seed)
    with KinesisProducer(args.stream_name, client=client, aggregate=args.aggregate) as producer:
        totals = produce(
            producer, args.records_per_sec, args.words_per_record, args.rounds, rng, encode=encode
        )
    print_totals(totals)
    if args.local:
        read_back = count_words_in_stream(client, args.stream_name, decode)
        print_totals(read_back, "Totals for the words read back from the stream")
        if read_back != totals:
            print("MISMATCH: the stream does not hold exactly the words sent", file=sys.stderr)
            return 1
        print("OK: the stream holds exactly the words sent")
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    args = parse_args(argv)
    try:
        if args.local:
            from ..local import LocalAWS

            with LocalAWS() as aws:
                print(f"Local AWS (moto) at {aws.endpoint_url}", flush=True)
                glue = aws.client("glue")
                if args.glue_registry:
                    glue.create_registry(RegistryName=args.glue_registry)
                return run(args, aws.endpoint_url, aws.client("kinesis"), glue)
        client = create_client("kinesis", region_name=args.region, endpoint_url=args.endpoint_url)
        return run(args, args.endpoint_url, client)
    except StreamNotFoundError:
        print(
            f"error: stream {args.stream_name!r} not found at {args.endpoint_url}; "
            "create it or pass --create-stream",
            file=sys.stderr,
        )
        return 1
    except (KinesisDStreamError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
