"""A fetch round's partition holding several shards: what a batch takes from it (pure)."""

from kinesis_dstream.dstream.executor_read import ShardRange, deliver
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
    take = deliver([None] * 3, headers, frozenset({0, 2}), [[0, 1, 2]])
    assert list(take(0, iter(items))) == ["a0", "a1", "c0"]
    everything = deliver([None] * 3, headers, None, [[0, 1, 2]])
    assert list(everything(0, iter(items))) == ["a0", "a1", "b0", "c0"]
    # a partition none of whose shards is in the batch yields nothing
    assert list(deliver([None] * 3, headers, frozenset({5}), [[0, 1, 2]])(0, iter(items))) == []


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
        list(deliver([None] * 2, headers, included, [[0, 1]])(0, task_input))
        assert task_input.end_read, included


def test_an_empty_range_recomputed_with_records_delivers_nothing():
    recorded = [header("s0", 0, None, None), header("s1", 1)]
    recomputed = [header("s0", 2, (5, 0), (6, 0)), "new0", "new1", recorded[1], "b0"]
    take = deliver([None, None], recorded, None, [[0, 1]])
    assert list(take(0, iter(recomputed))) == ["b0"]


def test_a_group_applies_the_message_handler_after_reading_and_a_failure_is_permanent():
    import threading
    from types import SimpleNamespace

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


def test_a_large_group_is_read_in_order_with_a_bounded_window_of_pages(monkeypatch):
    """A task of hundreds of shards holds at most MAX_READ_THREADS pages at a time."""
    import threading
    from types import SimpleNamespace

    from kinesis_dstream.dstream import executor_read
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
    assert out == plans
    assert max(held) <= executor_read.MAX_READ_THREADS
    default = SimpleNamespace(shards_per_task=None)
    assert shards_per_task(default, 128, 2) == 64  # one task per core
    assert shards_per_task(default, 512, 2) == 64  # at most 64 a task: the cached block
