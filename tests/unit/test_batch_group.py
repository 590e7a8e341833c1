"""shardsPerTask in batch reads: slices grouped into tasks, a group's slices read by threads."""

import threading

import pytest

from kinesis_dstream.sql.batch.group import SliceGroup, group_slices, read_group


class Part:
    def __init__(self, name: str) -> None:
        self.name = name

    def describe(self) -> str:
        return self.name


def slice_threads() -> list:
    return [t for t in threading.enumerate() if t.name.startswith("kinesis-slice-")]


def test_slices_are_grouped_in_order_and_a_lone_last_slice_stays_a_slice():
    parts = [Part(f"s{i}") for i in range(5)]
    assert group_slices(parts, None) == parts
    assert group_slices(parts, 1) == parts
    tasks = group_slices(parts, 2)
    assert [type(t) for t in tasks] == [SliceGroup, SliceGroup, Part]
    assert [p.name for p in tasks[0].slices + tasks[1].slices] == ["s0", "s1", "s2", "s3"]
    assert tasks[2].name == "s4"
    assert tasks[0].describe() == "s0; s1"


def test_every_slices_batches_come_out_each_slice_in_its_order():
    group = SliceGroup(tuple(Part(f"s{i}") for i in range(3)))

    def read(part):
        for n in range(50):
            yield (part.name, n)

    got = list(read_group(group, read))
    assert len(got) == 150
    for name in ("s0", "s1", "s2"):
        assert [n for s, n in got if s == name] == list(range(50))
    assert slice_threads() == []


def test_a_failing_slice_fails_the_task_with_its_error_and_the_others_stop():
    group = SliceGroup((Part("good"), Part("bad")))
    running, stopped = threading.Event(), threading.Event()

    def read(part):
        if part.name == "bad":
            assert running.wait(10)  # fail only while the long slice is being read
            yield "bad-0"
            raise ValueError("shard gone")
        try:
            while True:  # a long slice: only the stop ends it
                running.set()
                yield "good"
        finally:
            stopped.set()

    with pytest.raises(ValueError, match="shard gone"):
        list(read_group(group, read))
    assert stopped.is_set()  # the long slice was stopped, not left reading
    assert slice_threads() == []


def test_a_task_stopped_early_stops_and_joins_its_slice_threads():
    closed = []

    def read(part):
        try:
            while True:
                yield part.name
        finally:
            closed.append(part.name)

    batches = read_group(SliceGroup((Part("a"), Part("b"))), read)
    assert next(batches) in ("a", "b")
    batches.close()
    assert sorted(closed) == ["a", "b"]
    assert slice_threads() == []


def test_a_groups_slices_are_read_at_the_same_time():
    """Each slice's read waits for the others to have started: read one after another,
    the barrier would break (after its bound) and the task fail."""
    parts = tuple(Part(f"s{i}") for i in range(3))
    together = threading.Barrier(len(parts), timeout=10)

    def read(part):
        together.wait()
        yield part.name

    assert sorted(read_group(SliceGroup(parts), read)) == ["s0", "s1", "s2"]
    assert slice_threads() == []
