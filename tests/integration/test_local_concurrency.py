"""The embedded local AWS under concurrent writers (issue 52): every acknowledged write is
kept, every condition is won once, every call is answered.

moto's server answers on threads and moto's backends read, decide and write without a lock;
the server :class:`~kinesis_dstream.local.LocalAWS` starts runs Kinesis', DynamoDB's and
S3's requests one at a time. Writers run in threads here and in spawned processes at once.

PutRecords' race is hit on the session's server as users run it. The others have windows
of microseconds within a request: on :class:`InterleavingLocalAWS` (the same server, its
threads switched every 0.2 ms instead of Python's 5 ms) they are hit within seconds.
"""

from __future__ import annotations

import collections
import itertools
import threading

import pytest

from kinesis_dstream.leases.dynamodb import LeaseTable
from kinesis_dstream.leases.lease import Lease
from kinesis_dstream.local import LocalAWS
from kinesis_dstream.retrieval.streams import ensure_stream

from ..support.concurrent_writers import (
    lease_taker,
    object_creator,
    put_record_writer,
    put_records_writer,
    run_writers,
)

SHARD = "shardId-000000000000"
#: 5-10 s each: CI's long scenarios run them; by default, concurrent PutRecords and one
#: lease's conditional updates (the two races the lease protocol and every writer meet).
LONG = pytest.mark.slow
#: Python's thread switch interval in the interleaving server (its default: 5 ms).
SWITCH_INTERVAL_S = 0.0002


class InterleavingLocalAWS(LocalAWS):
    """The library's local AWS, its child switching threads every 0.2 ms."""

    label = "local AWS (moto, threads switched every 0.2 ms)"

    def command(self, port: int) -> list:
        command = super().command(port)
        command[-1] = f"import sys; sys.setswitchinterval({SWITCH_INTERVAL_S}); {command[-1]}"
        return command


@pytest.fixture(scope="module")
def interleaving_aws():
    with InterleavingLocalAWS() as aws:
        yield aws


def first_iterator(kinesis, stream: str) -> str:
    return kinesis.get_shard_iterator(
        StreamName=stream, ShardId=SHARD, ShardIteratorType="TRIM_HORIZON"
    )["ShardIterator"]


def read_shard(kinesis, stream: str) -> dict:
    """Every record of the stream's one shard: {sequence number: data}."""
    iterator = first_iterator(kinesis, stream)
    stored = {}
    while True:
        page = kinesis.get_records(ShardIterator=iterator, Limit=10000)
        if not page["Records"]:
            return stored
        stored.update((r["SequenceNumber"], bytes(r["Data"])) for r in page["Records"])
        iterator = page["NextShardIterator"]


def assert_every_acknowledged_record_kept(kinesis, stream: str, acknowledged: list) -> None:
    numbers = [number for number, _ in acknowledged]
    given_twice = len(numbers) - len(set(numbers))
    assert given_twice == 0, f"{given_twice} of {len(numbers)} sequence numbers given twice"
    stored = read_shard(kinesis, stream)
    lost = [(n, d) for n, d in acknowledged if stored.get(n) != d]
    assert not lost, f"{len(lost)} of {len(acknowledged)} acknowledged records lost: {lost[:3]}"
    assert len(stored) == len(acknowledged)


def test_concurrent_put_records_keep_every_acknowledged_record(local_aws, kinesis, stream):
    writers = run_writers(put_records_writer, 4, 2, local_aws.port, stream, 15, 100)
    acknowledged = list(itertools.chain.from_iterable(writers))
    assert len(acknowledged) == 6 * 15 * 100
    assert_every_acknowledged_record_kept(kinesis, stream, acknowledged)


@LONG
def test_concurrent_put_record_calls_keep_every_acknowledged_record(interleaving_aws, unique_name):
    kinesis = interleaving_aws.client("kinesis")
    ensure_stream(kinesis, unique_name, 1)
    writers = run_writers(put_record_writer, 4, 2, interleaving_aws.port, unique_name, 150)
    acknowledged = list(itertools.chain.from_iterable(writers))
    assert len(acknowledged) == 6 * 150
    assert_every_acknowledged_record_kept(kinesis, unique_name, acknowledged)


def test_concurrent_conditional_updates_of_one_lease_exactly_one_wins(
    interleaving_aws, unique_name
):
    table = LeaseTable(interleaving_aws.client("dynamodb"), unique_name)
    table.create_if_missing()
    assert table.create_lease(Lease("shardId-000000000000"))
    rounds = 40
    tries = run_writers(
        lease_taker, 4, 2, interleaving_aws.port, unique_name, "shardId-000000000000", rounds
    )
    winners = collections.Counter()
    for worker in tries:
        assert [counter for counter, _ in worker] == list(range(rounds)), "a stale read"
        winners.update(counter for counter, won in worker if won)
    not_one = {counter: winners[counter] for counter in range(rounds) if winners[counter] != 1}
    assert not not_one, f"rounds (expected leaseCounter: winners) not won exactly once: {not_one}"
    assert table.get_lease("shardId-000000000000").lease_counter == rounds


@LONG
def test_concurrent_creates_of_one_object_exactly_one_wins(interleaving_aws, unique_name):
    bucket = unique_name.lower()
    interleaving_aws.client("s3").create_bucket(Bucket=bucket)
    keys = 40
    created = run_writers(object_creator, 4, 2, interleaving_aws.port, bucket, keys)
    winners = collections.Counter(key for keys_created in created for key in keys_created)
    not_one = {key: winners[key] for key in range(keys) if winners[key] != 1}
    assert not not_one, f"objects (key: creators told they created it) not created once: {not_one}"


@LONG
def test_get_records_while_a_writer_puts_answers_every_call(interleaving_aws, unique_name):
    kinesis = interleaving_aws.client("kinesis")
    ensure_stream(kinesis, unique_name, 1)
    batch = [{"Data": b"x" * 20, "PartitionKey": "one-key"}] * 100
    for _ in range(10):  # a shard long enough that a read is still walking it when a put lands
        kinesis.put_records(StreamName=unique_name, Records=batch * 5)
    reads_done = threading.Event()
    failures: list = []
    written = [5000]

    def write() -> None:
        client = interleaving_aws.client("kinesis")
        try:
            while not reads_done.is_set():
                client.put_records(StreamName=unique_name, Records=batch)
                written[0] += len(batch)
        except Exception as exc:  # reported by the assertion below
            failures.append(f"PutRecords: {str(exc)[:200]}")

    writer = threading.Thread(target=write, name="writer")
    writer.start()
    reads = 10
    try:
        for _ in range(reads):  # each GetRecords walks the shard while records arrive
            try:
                kinesis.get_records(ShardIterator=first_iterator(kinesis, unique_name))
            except Exception as exc:  # reported by the assertion below
                failures.append(f"GetRecords: {str(exc)[:200]}")
    finally:
        reads_done.set()
        writer.join(timeout=120)
    assert not writer.is_alive()
    assert not failures, f"{len(failures)} failed calls in {reads} reads: {failures[:2]}"
    assert len(read_shard(kinesis, unique_name)) == written[0]


@LONG
def test_transactions_beside_writes_lose_no_write(interleaving_aws, unique_name):
    dynamodb = interleaving_aws.client("dynamodb")
    dynamodb.create_table(
        TableName=unique_name,
        KeySchema=[{"AttributeName": "k", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "k", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    putters_done = threading.Event()
    failures: list = []
    written: list = []

    def put(worker: int) -> None:
        client = interleaving_aws.client("dynamodb")
        for n in range(300):
            client.put_item(TableName=unique_name, Item={"k": {"S": f"{worker}-{n}"}})
            written.append(f"{worker}-{n}")

    def cancel() -> None:
        client = interleaving_aws.client("dynamodb")
        impossible = {
            "Put": {
                "TableName": unique_name,
                "Item": {"k": {"S": "never"}},
                "ConditionExpression": "attribute_exists(k)",
            }
        }
        while not putters_done.is_set():
            try:
                client.transact_write_items(TransactItems=[impossible])
            except client.exceptions.TransactionCanceledException:
                pass
            except Exception as exc:  # reported by the assertion below
                failures.append(str(exc)[:200])

    putters = [threading.Thread(target=put, args=(w,), name=f"putter-{w}") for w in range(2)]
    cancellers = [threading.Thread(target=cancel, name=f"canceller-{c}") for c in range(2)]
    for thread in putters + cancellers:
        thread.start()
    try:
        for thread in putters:
            thread.join(timeout=120)
    finally:
        putters_done.set()
        for thread in cancellers:
            thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in putters + cancellers)
    assert len(written) == 2 * 300
    assert not failures, f"{len(failures)} TransactWriteItems not answered: {failures[:2]}"
    stored = set()
    for page in dynamodb.get_paginator("scan").paginate(TableName=unique_name):
        stored |= {item["k"]["S"] for item in page["Items"]}
    lost = set(written) - stored
    assert not lost, f"{len(lost)} of {len(written)} acknowledged PutItems lost: {sorted(lost)[:3]}"
