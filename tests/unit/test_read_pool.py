"""The read pool (retrieval/read_pool.py): steps run when due, in due order, on the
pool's few threads; many shards' read-ahead shares them; a stop drops what is not run."""

import threading
import time

import pytest

from kinesis_dstream.retrieval.read_pool import ReadPool

from .test_prefetch import BOUND_S, Scripted, pages_of, prefetch_on, sequences, take_all, wait_for


def test_steps_run_in_due_order_and_a_step_due_now_at_once():
    ran = []
    done = threading.Event()
    pool = ReadPool("test", 2).start()
    try:
        now = time.monotonic()
        pool.call_at(now + 0.3, lambda: (ran.append("late"), done.set()))
        pool.call_at(now + 0.1, lambda: ran.append("early"))
        pool.call_at(now, lambda: ran.append("now"))
        assert done.wait(BOUND_S)
    finally:
        assert pool.stop(BOUND_S) == []
    assert ran == ["now", "early", "late"]
    assert pool.threads_alive() == 0


def test_a_step_is_not_run_before_it_is_due():
    ran = threading.Event()
    pool = ReadPool("test", 1).start()
    try:
        due = time.monotonic() + 0.3
        pool.call_at(due, lambda: ran.set())
        assert ran.wait(BOUND_S)
        assert time.monotonic() >= due
    finally:
        pool.stop(BOUND_S)


def test_a_stop_drops_the_steps_not_yet_run_and_joins_every_thread():
    ran = []
    pool = ReadPool("test", 3).start()
    pool.call_at(time.monotonic() + 60, lambda: ran.append("never"))
    assert pool.stop(BOUND_S) == []
    assert pool.threads_alive() == 0
    pool.call_at(time.monotonic(), lambda: ran.append("after the stop"))
    assert ran == []


def test_a_failing_step_is_logged_and_the_worker_goes_on(caplog):
    ran = threading.Event()
    pool = ReadPool("test", 1).start()
    try:
        pool.call_at(time.monotonic(), lambda: 1 / 0)
        pool.call_at(time.monotonic(), ran.set)
        assert ran.wait(BOUND_S)
    finally:
        pool.stop(BOUND_S)
    assert "a step failed" in caplog.text and "ZeroDivisionError" in caplog.text


def test_steps_due_together_run_in_order_and_a_failing_one_stops_none_after_it(caplog):
    ran = []
    done = threading.Event()
    pool = ReadPool("test", 1).start()
    try:
        due = time.monotonic() + 0.2  # one schedule hand-over: runs of several steps
        for n in range(20):
            pool.call_at(due, (lambda n=n: 1 / 0 if n == 7 else ran.append(n)))
        pool.call_at(due + 0.001, done.set)
        assert done.wait(BOUND_S)
    finally:
        pool.stop(BOUND_S)
    assert ran == [n for n in range(20) if n != 7]
    assert caplog.text.count("a step failed") == 1


def test_many_shards_read_ahead_on_two_threads_each_in_order():
    pool = ReadPool("test", 2).start()
    prefetches = []
    try:
        for n in range(40):
            transport = Scripted(pages_of(5, 3), ends=True)
            prefetch = prefetch_on(
                transport, pool=pool, shard_id=f"shardId-{n:012d}", max_pending_batches=2
            )
            prefetches.append(prefetch.start())
        for prefetch in prefetches:
            assert sequences(take_all(prefetch)) == list(range(1, 16))
    finally:
        for prefetch in prefetches:
            prefetch.close()
        pool.stop(BOUND_S)
    assert pool.threads_alive() == 0
    assert not [t for t in threading.enumerate() if t.name.startswith("prefetch-")]


def test_a_closed_prefetchs_scheduled_read_never_runs():
    transport = Scripted([])  # an idle shard: the next read is scheduled 60 s out
    pool = ReadPool("test", 1).start()
    try:
        prefetch = prefetch_on(transport, pool=pool, idle_between_calls_s=0.3).start()
        wait_for(lambda: len(transport.calls_at) == 1)
        prefetch.close()
        # A marker due after the prefetch's next read: once it ran, that read's turn came.
        marker = threading.Event()
        pool.call_at(time.monotonic() + 0.6, marker.set)
        assert marker.wait(BOUND_S)
        assert len(transport.calls_at) == 1
    finally:
        pool.stop(BOUND_S)


@pytest.mark.parametrize("threads", [0, -1])
def test_a_pool_needs_a_thread(threads):
    with pytest.raises(ValueError, match="at least 1 thread"):
        ReadPool("test", threads)
