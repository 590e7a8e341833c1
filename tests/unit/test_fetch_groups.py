"""A fetch round's partition holding several shards: what a batch takes from it (pure)."""

import threading
from types import SimpleNamespace

import pytest

from kinesis_dstream.dstream import batch_read, executor_read
from kinesis_dstream.dstream.batch_read import deliver
from kinesis_dstream.dstream.executor_read import ShardRange
from kinesis_dstream.dstream.round_job import group_plans


def header(shard, records, first=(1, 0), last=(9, 0)):
    return ShardRange(0, shard, records, first, last, 0, None, False, (), None, 1, 0.0)


def test_plans_are_grouped_consecutively():
    assert group_plans(5, 2) == [[0, 1], [2, 3], [4]]
    assert group_plans(3, 1) == [[0], [1], [2]]
    assert group_plans(3, 8) == [[0, 1, 2]]


def test_a_batch_takes_only_its_shards_records_from_a_shared_partition():
    headers = [header("s0", 2), header("s1", 1), header("s2", 1)]
    items = [headers[0], "a0", "a1", headers[1], "b0", headers[2], "c0"]
    take = deliver([None] * 3, headers, frozenset({0, 2}), [[[0, 1, 2]]])
    assert list(take(0, iter(items))) == ["a0", "a1", "c0"]
    everything = deliver([None] * 3, headers, None, [[[0, 1, 2]]])
    assert list(everything(0, iter(items))) == ["a0", "a1", "b0", "c0"]
    # a partition none of whose shards is in the batch yields nothing
    assert list(deliver([None] * 3, headers, frozenset({5}), [[[0, 1, 2]]])(0, iter(items))) == []


class EndMarked:
    """A task's input as PySpark's worker reads it: the end marker is read only by the
    ``next()`` that finds no more elements (then the worker can be reused)."""

    def __init__(self, items):
        self._items = iter(items)
        self.end_read = False

    def __iter__(self):
        return self

    def __next__(self):
        try:
            return next(self._items)
        except StopIteration:
            self.end_read = True
            raise


def test_a_batch_task_reads_its_input_to_the_end_marker_so_its_python_worker_is_reused():
    headers = [header("s0", 2), header("s1", 1)]
    items = [headers[0], "a0", "a1", headers[1], "b0"]
    for included in (None, frozenset({0}), frozenset({7})):  # all, part, none of it
        task_input = EndMarked(items)
        list(deliver([None] * 2, headers, included, [[[0, 1]]])(0, task_input))
        assert task_input.end_read, included


def plan(shard):
    return SimpleNamespace(shard_id=shard, stream_name="s", transform=lambda record: record)


def test_an_empty_range_recomputed_with_records_delivers_nothing():
    recorded = [header("s0", 0, None, None), header("s1", 1)]
    recomputed = [header("s0", 2, (5, 0), (6, 0)), "new0", "new1", recorded[1], "b0"]
    take = deliver([None, None], recorded, None, [[[0, 1]]])
    assert list(take(0, iter(recomputed))) == ["b0"]  # s1 as recorded: from the block


def grown(recorded):
    """The same shard's range read again further (new records since the round)."""
    return recorded._replace(records=recorded.records + 1, last_esn=(99, 0))


def rereads_of(monkeypatch, records_by_shard):
    """Patch ``read_range`` to answer from ``records_by_shard``; returns the shards read."""
    lock = threading.Lock()
    read: list = []

    def read_range(p, expected):
        with lock:
            read.append(p.shard_id)
        return records_by_shard[p.shard_id]

    monkeypatch.setattr(batch_read, "read_range", read_range)
    return read


def test_a_recomputed_block_is_lined_up_with_the_record_by_shard(monkeypatch):
    """A round's task yields its shards as their reads finish; the driver records that
    order. A recomputed block whose reads finished in another order but read the same
    ranges is delivered from the block in the recorded order, nothing read again; a range
    that differs is read again, in its turn."""
    recorded = [header("s0", 1), header("s1", 2), header("s2", 1)]
    plans = [plan("s0"), plan("s1"), plan("s2")]
    read = rereads_of(monkeypatch, {"s1": ["b0", "b1"]})
    block = [recorded[2], "c0", recorded[0], "a0", recorded[1], "b0", "b1"]
    take = deliver(plans, recorded, None, [[[2, 0, 1]]])
    assert list(take(0, iter(block))) == ["c0", "a0", "b0", "b1"]  # as recorded
    recomputed = [recorded[0], "a0", recorded[1], "b0", "b1", recorded[2], "c0"]
    assert list(take(0, iter(recomputed))) == ["c0", "a0", "b0", "b1"]
    assert read == []
    changed = [recorded[0], "a0", grown(recorded[1]), "b0", "b1", "b2", recorded[2], "c0"]
    assert list(take(0, iter(changed))) == ["c0", "a0", "b0", "b1"]
    assert read == ["s1"]
    # held ranges are bounded: past the bound, an early range is read again in its turn
    monkeypatch.setattr(batch_read, "MAX_HELD_BYTES", 10)
    sized = [r._replace(data_bytes=6) for r in recorded]
    read = rereads_of(monkeypatch, {"s0": ["a0"], "s1": ["b0", "b1"], "s2": ["c0"]})
    big = [sized[0], "a0", sized[1], "b0", "b1", sized[2], "c0"]
    take = deliver(plans, sized, None, [[[2, 0, 1]]])
    assert list(take(0, iter(big))) == ["c0", "a0", "b0", "b1"]
    assert sorted(read) == ["s1", "s2"]  # s0 held (6 bytes of 10); s1 and s2 find no room


def test_a_recomputed_block_rereads_what_differs_concurrently_and_only_the_batchs(
    monkeypatch,
):
    """The ranges of a recomputed block that differ are read again at the same time (a
    3-party barrier): one after another, a lost 64-shard block took 64 round trips."""
    recorded = [header("s0", 1), header("s1", 2), header("s2", 1)]
    plans = [plan("s0"), plan("s1"), plan("s2")]
    barrier = threading.Barrier(3, timeout=10)
    rereads = {"s0": ["a0"], "s1": ["b0", "b1"], "s2": ["c0"]}

    def read_range(p, expected):
        barrier.wait()
        return rereads[p.shard_id]

    monkeypatch.setattr(batch_read, "read_range", read_range)
    changed = [grown(recorded[0]), "x", "y", grown(recorded[1]), "x", "y", "z"]
    changed += [grown(recorded[2]), "x", "y"]
    take = deliver(plans, recorded, None, [[[2, 0, 1]]])
    assert list(take(0, iter(changed))) == ["c0", "a0", "b0", "b1"]
    # only the batch's shards are read again, and empty ranges never
    barrier = threading.Barrier(1, timeout=10)
    part = deliver(plans, recorded, frozenset({1}), [[[2, 0, 1]]])
    assert list(part(0, iter(changed))) == ["b0", "b1"]


def test_a_lost_block_of_a_coalesced_partition_rereads_only_its_own_ranges(monkeypatch):
    """A coalesced batch partition reads two cached blocks one after another; only the
    first came back different (recomputed after its shards grew). Only that block's
    ranges are read again; the second block, intact, comes from the cache."""
    recorded = [header("s0", 1), header("s1", 2), header("s2", 1), header("s3", 1)]
    plans = [plan(f"s{n}") for n in range(4)]
    read = rereads_of(monkeypatch, {"s0": ["a0"], "s1": ["b0", "b1"]})
    recomputed_first = [grown(recorded[1]), "b0", "b1", "b2", grown(recorded[0]), "a0", "a1"]
    intact_second = [recorded[2], "c0", recorded[3], "d0"]
    take = deliver(plans, recorded, None, [[[0, 1], [2, 3]]])
    got = list(take(0, iter(recomputed_first + intact_second)))
    assert got == ["a0", "b0", "b1", "c0", "d0"]
    assert sorted(read) == ["s0", "s1"]  # not s2, s3: their block was not lost


def test_a_mismatch_in_a_middle_block_rereads_from_that_block_alone(monkeypatch):
    """Three blocks joined end to end: the first intact, the middle one recomputed with
    its second range grown (a shard with new records), the last recomputed to exactly
    the record in another order."""
    recorded = [header(f"s{n}", 1, (n, 0), (n, 0)) for n in range(7)]
    plans = [plan(f"s{n}") for n in range(7)]
    read = rereads_of(monkeypatch, {"s3": ["r3"]})
    first = [recorded[0], "x0", recorded[1], "x1"]
    middle = [recorded[2], "x2", grown(recorded[3]), "x3", "new3", recorded[4], "x4"]
    last = [recorded[6], "x6", recorded[5], "x5"]
    blocks = [[[0, 1], [2, 3, 4], [5, 6]]]
    got = list(deliver(plans, recorded, None, blocks)(0, iter(first + middle + last)))
    assert got == ["x0", "x1", "x2", "r3", "x4", "x5", "x6"]
    assert read == ["s3"]
    # a batch holding part of the shards re-reads only its own
    read.clear()
    part = deliver(plans, recorded, frozenset({1, 3, 6}), blocks)
    assert list(part(0, iter(first + middle + last))) == ["x1", "r3", "x6"]
    assert read == ["s3"]
    read.clear()
    part = deliver(plans, recorded, frozenset({1, 4, 6}), blocks)
    assert list(part(0, iter(first + middle + last))) == ["x1", "x4", "x6"]
    assert read == []


def test_a_group_applies_the_message_handler_after_reading_and_a_failure_is_permanent():
    from kinesis_dstream.dstream.executor_read import _handle

    seen_threads = set()

    def transform(record):
        seen_threads.add(threading.current_thread().name)
        if record.sequence_number == "2":
            raise ValueError("bad record")
        return record.sequence_number

    plan = SimpleNamespace(
        stream_name="s", shard_id="shardId-1", iterator="it-0", transform=transform
    )
    records = [SimpleNamespace(sequence_number=str(n), sub_sequence_number=0) for n in (1, 3)]
    header = header_ok = ShardRange(
        0, "shardId-1", 2, (1, 0), (3, 0), 10, 0, False, (), "it-9", 1, 0.0
    )
    assert _handle(plan, (header_ok, records)) == (header, ["1", "3"])
    assert seen_threads == {threading.current_thread().name}
    failing = [*records, SimpleNamespace(sequence_number="2", sub_sequence_number=4)]
    failed, delivered = _handle(plan, (header._replace(records=3), failing))
    assert delivered == [] and failed.records == 0 and failed.error_kind == "permanent"
    assert failed.error_type == "MessageHandlerError" and "shardId-1" in failed.error
    assert "2/4" in failed.error
    assert failed.next_iterator == "it-0"  # the shard is read again from where it was


def test_a_large_group_is_read_with_a_bounded_window_of_pages(monkeypatch):
    """A task of hundreds of shards holds at most MAX_READ_THREADS pages at a time."""
    from kinesis_dstream.dstream.settings import shards_per_task

    lock = threading.Lock()
    started: list = []

    def read_one(plan, with_handler=True):
        with lock:
            started.append(plan)
        return header(plan, 1), [f"{plan}-record"]

    monkeypatch.setattr(executor_read, "_read_one", read_one)
    monkeypatch.setattr(executor_read, "_handle", lambda plan, result: result)
    plans = [f"shardId-{n:03d}" for n in range(100)]
    held = []
    out = []
    for item in executor_read.fetch([plans]):
        if isinstance(item, ShardRange):
            with lock:  # reads started, not yet yielded (this one included)
                held.append(len(started) - len(out))
            out.append(item.shard_id)
    assert sorted(out) == plans
    assert max(held) <= executor_read.MAX_READ_THREADS
    default = SimpleNamespace(shards_per_task=None)
    assert shards_per_task(default, 128, 2) == 64  # one task per core
    assert shards_per_task(default, 512, 2) == 64  # at most 64 a task: the cached block


def test_a_slow_read_does_not_hold_back_the_reads_behind_it(monkeypatch):
    """One slow read (a full page, a throttled call's backoff) keeps one slot of the
    window: the group's other reads go on through the rest and are yielded first."""
    lock = threading.Lock()
    others_done = threading.Event()
    finished: list = []
    plans = [f"shardId-{n:03d}" for n in range(3 * executor_read.MAX_READ_THREADS)]

    def read_one(plan, with_handler=True):
        if plan == plans[0]:
            released = others_done.wait(timeout=10)
            return header(plan, 1 if released else 0), ["slow-record"] if released else []
        with lock:
            finished.append(plan)
            if len(finished) == len(plans) - 1:
                others_done.set()
        return header(plan, 1), [f"{plan}-record"]

    monkeypatch.setattr(executor_read, "_read_one", read_one)
    monkeypatch.setattr(executor_read, "_handle", lambda plan, result: result)
    out = {h.shard_id: h for h in executor_read.fetch([plans]) if isinstance(h, ShardRange)}
    assert sorted(out) == plans
    assert out[plans[0]].records == 1, "the slow read ran out its wait: the others waited on it"


@pytest.mark.parametrize("reported", [["s1", "s0"], ["s0", "s1"]])
def test_a_round_records_each_partition_in_the_order_its_task_yielded(reported):
    from kinesis_dstream.dstream.round_job import run_round

    class Accumulator:
        value = [header(s, 1)._replace(round_id=7) for s in reported]

    class RDD:
        def mapPartitions(self, f):
            return self

        def persist(self, level):
            return self

        _jrdd = SimpleNamespace(count=lambda: 0)

    sc = SimpleNamespace(parallelize=lambda elements, n: RDD())
    plans = [plan("s0"), plan("s1")]
    round_ = run_round(sc, 7, plans, [1, 1], Accumulator(), None, shards_per_task=2)
    assert [plans[i].shard_id for i in round_.groups[0]] == reported
    assert [r.shard_id for r in round_.ranges] == ["s0", "s1"]  # the plans' order
