"""GetShardIterator calls of a shard's micro-batches, on moto's server without Spark.

A shard with new records every micro-batch used to cost two GetShardIterator calls a
batch: the driver's peek at its new position and the task reading its range. The peek's
iterator now goes to the range's task, and a peek whose reader stands exactly at the new
position keeps it; the records each batch delivers stay exactly those of its range.
"""

from __future__ import annotations

import json

from kinesis_dstream.retrieval.streams import ensure_stream

from ..support.faults import CallErrors
from ..support.records import put_records
from .test_sql_runner import _all, reader_for, rows
from .test_sql_tasks import next_offset


class IteratorCalls:
    """GetShardIterator calls made through ``client`` (the runner's and the tasks' client:
    one per process for a connection's settings)."""

    def __init__(self, client) -> None:
        self.client, self.count = client, 0
        client.meta.events.register("before-call.kinesis.GetShardIterator", self._count)

    def _count(self, **_) -> None:
        self.count += 1

    def taken(self) -> int:
        count, self.count = self.count, 0
        return count

    def remove(self) -> None:
        self.client.meta.events.unregister("before-call.kinesis.GetShardIterator", self._count)


def test_a_trickle_costs_no_get_shard_iterator_once_its_shard_is_followed(
    local_aws, kinesis, unique_name, tmp_path
):
    ensure_stream(kinesis, unique_name, 1)
    reader = reader_for(local_aws, unique_name, tmp_path)
    offset = reader.initialOffset()
    executors = reader.settings.client_spec.client()
    assert executors is reader.runner.client  # one cached client: one counter sees both
    calls = IteratorCalls(executors)
    try:
        got = []
        for batch in range(4):
            put_records(kinesis, unique_name, 1, start=batch)
            end = next_offset(reader, offset)
            peeks = calls.taken()
            got += [r[0] for r in rows(reader, offset, end)]
            reads = calls.taken()
            reader.commit(end)
            offset = end
            # the first peek makes the shard's iterator (TRIM_HORIZON); then none at all
            assert (peeks, reads) == ((1, 0) if batch == 0 else (0, 0)), batch
        assert got == [f"r{i}".encode() for i in range(4)]
    finally:
        calls.remove()


def test_a_range_read_past_what_the_peek_saw_hands_its_own_iterator_to_the_next_peek(
    local_aws, kinesis, unique_name, tmp_path
):
    ensure_stream(kinesis, unique_name, 1)
    reader = reader_for(local_aws, unique_name, tmp_path)
    offset = reader.initialOffset()
    calls = IteratorCalls(reader.runner.client)
    try:
        put_records(kinesis, unique_name, 3)
        end = next_offset(reader, offset)  # the peek read 2 of the 3 records
        put_records(kinesis, unique_name, 2, start=3)  # more before the task reads
        assert [r[0] for r in rows(reader, offset, end)] == [f"r{i}".encode() for i in range(5)]
        reader.commit(end)
        calls.taken()
        put_records(kinesis, unique_name, 1, start=5)
        following = next_offset(reader, end)
        # the range ended past where the peek's reader stood: the next peek goes on from
        # the iterator the range's task stopped at (recorded with its end)
        assert calls.taken() == 0
        assert [r[0] for r in rows(reader, end, following)] == [b"r5"]
        assert calls.taken() == 0
    finally:
        calls.remove()


def test_an_expired_range_iterator_is_made_again_at_the_position_and_retention_checked(
    local_aws, kinesis, unique_name, tmp_path
):
    ensure_stream(kinesis, unique_name, 1)
    reader = reader_for(local_aws, unique_name, tmp_path)
    offset = reader.initialOffset()
    put_records(kinesis, unique_name, 3)
    end = next_offset(reader, offset)
    put_records(kinesis, unique_name, 2, start=3)
    assert len(rows(reader, offset, end)) == 5
    reader.commit(end)
    put_records(kinesis, unique_name, 1, start=5)
    client = reader.runner.client
    calls = IteratorCalls(client)
    expired = CallErrors(
        client, "kinesis", "GetRecords", lambda n: "ExpiredIteratorException" if n == 0 else None
    )
    try:
        following = next_offset(reader, end)
    finally:
        expired.remove()
        calls.remove()
    assert expired.injected == 1
    assert calls.count == 1  # made again AT the position: its record is there, no loss
    assert reader.runner.records_lost_shards == []
    assert [r[0] for r in rows(reader, end, following)] == [b"r5"]


def test_an_expired_start_iterator_is_made_again_from_the_range_start(
    local_aws, kinesis, unique_name, tmp_path
):
    ensure_stream(kinesis, unique_name, 1)
    reader = reader_for(local_aws, unique_name, tmp_path)
    offset = reader.initialOffset()
    put_records(kinesis, unique_name, 4)
    end = next_offset(reader, offset)
    parts = reader.partitions(offset, end)
    assert parts[0].start_iterator
    # the task starts after the peek's iterator has expired (Kinesis keeps one 5 minutes)
    expired = CallErrors(
        reader.settings.client_spec.client(),
        "kinesis",
        "GetRecords",
        lambda n: "ExpiredIteratorException" if n == 0 else None,
    )
    try:
        got = [v for p in parts for batch in reader.read(p) for v in batch.column(0).to_pylist()]
    finally:
        expired.remove()
    assert expired.injected == 1
    assert got == [f"r{i}".encode() for i in range(4)]
    assert json.dumps(reader.latestOffset(end, _all())) == json.dumps(end)  # nothing more
