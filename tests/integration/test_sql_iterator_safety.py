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
import random
import time

import pytest

from kinesis_dstream.retrieval.streams import ensure_stream

from ..support.faults import CallErrors, Trimmed
from ..support.records import put_records
from ..support.waiting import wait_until
from .test_sql_iterators import IteratorCalls
from .test_sql_runner import _all, reader_for, rows
from .test_sql_tasks import next_offset


def data(got) -> list:
    return [r[0] for r in got]


def first_range(local_aws, kinesis, stream: str, tmp_path, records: int, **options) -> tuple:
    """A one-shard stream with ``records`` records put, and a source reader of it:
    ``(reader, offset, end, partition)`` of its first batch (one range)."""
    ensure_stream(kinesis, stream, 1)
    put_records(kinesis, stream, records)
    reader = reader_for(local_aws, stream, tmp_path, **options)
    offset = reader.initialOffset()
    end = next_offset(reader, offset)
    (part,) = reader.partitions(offset, end)
    return reader, offset, end, part


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


def expiring_once(n: int):
    """CallErrors' answer: the first call meets an expired iterator, the others go through."""
    return "ExpiredIteratorException" if n == 0 else None


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
    reader, offset, end, part = first_range(
        local_aws, kinesis, unique_name, tmp_path, 4, failOnDataLoss="true"
    )
    first = [(r[0], r[2]) for r in rows(reader, offset, end)]  # the end is recorded
    assert data(first) == [b"r0", b"r1", b"r2", b"r3"]
    # a partition whose hint stands after r1: a wrong one, or a stale one from an
    # earlier plan; the replay reads from the range's own start
    wrong = iterator_after(kinesis, unique_name, part.shard_id, first[1][1])
    replayed = dataclasses.replace(part, start_iterator=wrong)
    put_records(kinesis, unique_name, 2, start=4)
    got = [v for batch in reader.read(replayed) for v in batch.column(0).to_pylist()]
    assert got == data(first)


@pytest.mark.parametrize("source", ["the peek's reader", "the range's task"])
@pytest.mark.parametrize("expires", ["at once", "after an idle peek"])
def test_a_position_trimmed_while_the_iterator_at_it_expired_is_reported_as_lost(
    local_aws, kinesis, unique_name, tmp_path, source, expires
):
    """The next peek goes on from an iterator standing at the new position (``source``):
    it never reads the position's own record. Once that iterator expired, the new one is
    made AT the position, and its first record past it says the position was trimmed."""
    ensure_stream(kinesis, unique_name, 1)
    reader = reader_for(local_aws, unique_name, tmp_path)
    offset = reader.initialOffset()
    put_records(kinesis, unique_name, 1 if source == "the peek's reader" else 3)
    end = next_offset(reader, offset)  # the peek reads 2 records at most
    if source == "the range's task":
        put_records(kinesis, unique_name, 2, start=3)  # the range reads past the peek
    got = rows(reader, offset, end)
    reader.commit(end)
    count, position = len(got), got[-1][2]
    client = reader.runner.client
    calls = IteratorCalls(client)
    try:
        if expires == "after an idle peek":
            assert json.dumps(reader.latestOffset(end, _all())) == json.dumps(end)
            assert calls.taken() == 0  # the idle peek went on from the iterator
        put_records(kinesis, unique_name, 1, start=count)
        expired = CallErrors(client, "kinesis", "GetRecords", expiring_once)
        trimmed = Trimmed(client, position)
        try:
            following = next_offset(reader, end)
            assert (expired.injected, calls.taken()) == (1, 1)  # made again, AT the position
            assert trimmed.dropped >= 1
            assert reader.reportLatestOffset()["dataLossEvents"] == 1
            assert data(rows(reader, end, following)) == [f"r{count}".encode()]
        finally:
            expired.remove()
            trimmed.remove()
    finally:
        calls.remove()


class RefusedIterator(CallErrors):
    """GetRecords with one shard iterator is answered InvalidArgumentException, every time,
    as Kinesis answers an iterator it does not accept; other calls go through."""

    def __init__(self, client, iterator: str) -> None:
        super().__init__(client, "kinesis", "GetRecords", lambda n: None)
        self._iterator = iterator

    def _handle(self, params=None, **kwargs):
        refused = json.loads(params["body"]).get("ShardIterator") == self._iterator
        self._decide = (lambda n: "InvalidArgumentException") if refused else (lambda n: None)
        return super()._handle(**kwargs)


def test_a_task_refused_its_start_iterator_reads_the_range_from_its_start(
    local_aws, kinesis, unique_name, tmp_path
):
    """The hint is in the pickled partition: without the fallback every Spark retry of
    the task would meet it again and fail."""
    reader, _, end, planned = first_range(local_aws, kinesis, unique_name, tmp_path, 3)
    # one the server is never sent (moto makes the same string for the same position)
    part = dataclasses.replace(planned, start_iterator=f"refused-{planned.start_iterator}")
    refused = RefusedIterator(reader.settings.client_spec.client(), part.start_iterator)
    try:
        got = [v for batch in reader.read(part) for v in batch.column(0).to_pylist()]
    finally:
        refused.remove()
    assert refused.injected == 1  # once: then an iterator made from the range's start
    assert got == [b"r0", b"r1", b"r2"]
    reader.commit(end)
    assert json.dumps(reader.latestOffset(end, _all())) == json.dumps(end)  # nothing more
    assert reader.reportLatestOffset()["iteratorHintsRefused"] == 1


def test_a_peek_refused_the_iterator_of_a_recorded_end_reads_from_the_position(
    local_aws, kinesis, unique_name, tmp_path
):
    """The end's iterator is in the end store: without the fallback every restart of the
    query would meet it again and fail."""
    ensure_stream(kinesis, unique_name, 1)
    reader = reader_for(local_aws, unique_name, tmp_path)
    offset = reader.initialOffset()
    put_records(kinesis, unique_name, 3)
    end = next_offset(reader, offset)  # the peek reads 2 records at most
    put_records(kinesis, unique_name, 2, start=3)  # the range reads past the peek
    (part,) = reader.partitions(offset, end)
    assert len(rows(reader, offset, end)) == 5
    reader.commit(end)
    hint = reader.store.get(part.key).next_iterator
    assert hint
    restarted = reader_for(local_aws, unique_name, tmp_path)  # a new process, same ends
    put_records(kinesis, unique_name, 1, start=5)
    refused = RefusedIterator(restarted.runner.client, hint)
    try:
        following = next_offset(restarted, end)
    finally:
        refused.remove()
    assert refused.injected == 1
    assert data(rows(restarted, end, following)) == [b"r5"]
    assert restarted.reportLatestOffset()["iteratorHintsRefused"] == 1
    assert restarted.reportLatestOffset()["dataLossEvents"] == 0


def test_ranges_cut_inside_a_kpl_aggregate_go_on_at_the_next_sub_record_from_a_hint(
    local_aws, kinesis, unique_name, tmp_path
):
    """A position inside an aggregate ({seq, sub}): the peek's iterator stands at the
    aggregate, and the task's read drops its user records through the position."""
    ensure_stream(kinesis, unique_name, 1)
    reader = reader_for(local_aws, unique_name, tmp_path, maxFetchRecordsPerShard="3")
    offset = reader.initialOffset()
    put_records(kinesis, unique_name, 8, data="a{i}", aggregate=True)
    got, starts = [], []
    while len(got) < 8:
        end = next_offset(reader, offset)
        (part,) = reader.partitions(offset, end)
        starts.append((part.shard_range.start, part.start_iterator is not None))
        batch = rows(reader, offset, end)
        assert rows(reader, offset, end) == batch  # replayed from the range's start
        got += batch
        reader.commit(end)
        offset = end
    assert data(got) == [f"a{i}".encode() for i in range(8)]
    assert len({r[2] for r in got}) == 1 and [r[3] for r in got] == list(range(8))
    aggregate = got[0][2]
    assert starts == [
        ("TRIM_HORIZON", True),
        ({"seq": aggregate, "sub": 2}, True),
        ({"seq": aggregate, "sub": 5}, True),
    ]


class LostBeforeRecorded:
    """An end store whose first write fails, as if the task's executor was lost after
    reading its range and before recording its end; otherwise the store it wraps."""

    def __init__(self, store) -> None:
        self._store, self.lost = store, 0

    def __getattr__(self, name):
        return getattr(self._store, name)

    def put_if_absent(self, key, end):
        if not self.lost:
            self.lost += 1
            raise OSError("the executor was lost (injected)")
        return self._store.put_if_absent(key, end)


def test_a_retried_task_reads_its_range_from_the_same_hint(
    local_aws, kinesis, unique_name, tmp_path, monkeypatch
):
    """The first attempt read the range with the peek's iterator and failed before its end
    was recorded; Spark's retry runs the same partition (the same hint): it reads the
    range again, up to its limit, with what arrived in between."""
    reader, offset, end, part = first_range(local_aws, kinesis, unique_name, tmp_path, 3)
    assert part.start_iterator
    monkeypatch.setattr(reader, "store", LostBeforeRecorded(reader.store))
    calls = IteratorCalls(reader.settings.client_spec.client())
    try:
        with pytest.raises(OSError):
            list(reader.read(part))
        put_records(kinesis, unique_name, 1, start=3)
        got = [v for batch in reader.read(part) for v in batch.column(0).to_pylist()]
        assert calls.count == 0  # both attempts read from the hint
    finally:
        calls.remove()
    assert got == [b"r0", b"r1", b"r2", b"r3"]
    assert data(rows(reader, offset, end)) == got  # and a replay reads what was recorded
    reader.commit(end)
    assert json.dumps(reader.latestOffset(end, _all())) == json.dumps(end)


@pytest.mark.kinesalite
def test_fan_out_ranges_carry_no_shard_iterator_either_way(
    efo_kinesalite, efo, unique_name, tmp_path
):
    """A range under enhanced fan-out is a subscription: neither the peek's iterator nor
    the one a task stopped at means anything to it."""
    ensure_stream(efo, unique_name, 1)
    put_records(efo, unique_name, 3)
    reader = reader_for(
        efo_kinesalite, unique_name, tmp_path, consumerMode="efo", consumerName=unique_name
    )
    offset = reader.initialOffset()
    end = next_offset(reader, offset, timeout_s=20)
    (part,) = reader.partitions(offset, end)
    assert part.consumer_arn and part.start_iterator is None
    assert data(rows(reader, offset, end)) == [b"r0", b"r1", b"r2"]
    assert reader.store.get(part.key).next_iterator is None
    reader.commit(end)
    put_records(efo, unique_name, 1, start=3)
    following = next_offset(reader, end, timeout_s=20)
    assert data(rows(reader, end, following)) == [b"r3"]


@pytest.mark.parametrize("seed", range(6))
def test_every_record_once_with_aggregates_limits_and_replays_of_every_batch(
    local_aws, kinesis, unique_name, tmp_path, seed
):
    """Random puts of KPL aggregates and plain records over 1 or 2 shards, ranges of 1, 2,
    3 or 5 records (cut inside aggregates), each batch read and replayed while the hints
    pass between peeks and tasks: each record exactly once, in order on its shard (after
    an independent review's fuzz test)."""
    rnd = random.Random(seed)
    ensure_stream(kinesis, unique_name, rnd.choice([1, 2]))
    limit = rnd.choice([1, 2, 3, 5])
    reader = reader_for(local_aws, unique_name, tmp_path, maxFetchRecordsPerShard=str(limit))
    sent: list = []
    got: list = []
    offset = reader.initialOffset()

    def next_batch() -> None:
        nonlocal offset
        end = reader.latestOffset(offset, _all())
        if json.dumps(end) == json.dumps(offset):
            return
        batch = rows(reader, offset, end)
        assert rows(reader, offset, end) == batch, (seed, len(got))  # a replay
        got.extend(batch)
        reader.commit(end)
        offset = end

    for _ in range(25):
        if rnd.random() < 0.6:
            count, aggregate = rnd.randint(1, 12), rnd.random() < 0.6
            put_records(
                kinesis, unique_name, count, start=len(sent), data="d{i}", aggregate=aggregate
            )
            sent += [f"d{i}".encode() for i in range(len(sent), len(sent) + count)]
        next_batch()
    wait_until(
        lambda: next_batch() or len(got) >= len(sent),
        30,
        f"all {len(sent)} records (seed {seed}, {limit} a range)",
        interval_s=0.02,
    )
    assert sorted(data(got)) == sorted(sent)
    for shard in {r[1] for r in got}:
        positions = [(int(r[2]), r[3]) for r in got if r[1] == shard]
        assert positions == sorted(set(positions)), shard
