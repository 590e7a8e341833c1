"""The shard iterators handed between the peek and the tasks never change what a batch
reads, on moto's server without Spark.

The iterators are hints (docs/design/range-ends.md, "Shard iterators as hints"): a batch
stays a function of its offsets, a replay reads exactly the recorded range, and a
position whose records were trimmed is still reported. Each test here is a way a hint
could break one of those: a page cut at an AvailableNow cutoff, a replay or retry of a
range, an iterator that expired or is refused, KPL aggregates, fan-out.
"""

from __future__ import annotations

import dataclasses
import json
import time

from kinesis_dstream.retrieval.streams import ensure_stream

from ..support.records import put_records
from .test_sql_runner import _all, reader_for, rows
from .test_sql_tasks import next_offset


def data(got) -> list:
    return [r[0] for r in got]


def test_a_range_cut_at_an_available_now_cutoff_hands_on_no_iterator_past_the_cut(
    local_aws, kinesis, unique_name, tmp_path
):
    """The page that crossed the cutoff was read whole, but the range kept only its
    records before the cutoff: the reader's iterator stands past the others. Were it
    recorded with the end, the next run's peek would go on from it and skip them."""
    ensure_stream(kinesis, unique_name, 1)
    put_records(kinesis, unique_name, 2)
    time.sleep(0.05)
    run = reader_for(local_aws, unique_name, tmp_path)
    start = run.initialOffset()
    run.prepareForTriggerAvailableNow()
    time.sleep(0.05)
    put_records(kinesis, unique_name, 1, start=2)  # after the cutoff, on the same page
    end = next_offset(run, start)
    assert data(rows(run, start, end)) == [b"r0", b"r1"]
    run.commit(end)
    assert json.dumps(run.latestOffset(end, _all())) == json.dumps(end)  # the run ends
    put_records(kinesis, unique_name, 1, start=3)
    following_run = reader_for(local_aws, unique_name, tmp_path)  # a new process, same ends
    following = next_offset(following_run, end)
    assert data(rows(following_run, end, following)) == [b"r2", b"r3"]


def iterator_after(kinesis, stream, shard_id, sequence_number) -> str:
    return kinesis.get_shard_iterator(
        StreamName=stream,
        ShardId=shard_id,
        ShardIteratorType="AFTER_SEQUENCE_NUMBER",
        StartingSequenceNumber=sequence_number,
    )["ShardIterator"]


def test_a_replay_reads_the_recorded_range_whatever_iterator_its_partition_carries(
    local_aws, kinesis, unique_name, tmp_path
):
    ensure_stream(kinesis, unique_name, 1)
    put_records(kinesis, unique_name, 4)
    reader = reader_for(local_aws, unique_name, tmp_path, failOnDataLoss="true")
    offset = reader.initialOffset()
    end = next_offset(reader, offset)
    (part,) = reader.partitions(offset, end)
    first = [(r[0], r[2]) for r in rows(reader, offset, end)]  # the end is recorded
    assert data(first) == [b"r0", b"r1", b"r2", b"r3"]
    # a partition whose hint stands after r1: a wrong one, or a stale one from an
    # earlier plan; the replay reads from the range's own start
    wrong = iterator_after(kinesis, unique_name, part.shard_id, first[1][1])
    replayed = dataclasses.replace(part, start_iterator=wrong)
    put_records(kinesis, unique_name, 2, start=4)
    got = [v for batch in reader.read(replayed) for v in batch.column(0).to_pylist()]
    assert got == data(first)
