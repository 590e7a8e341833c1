"""A receiver's state as pure logic: each operation, then many threads at once.

No Spark and no server: rounds are built from ShardRanges the test makes up, with an
injected clock, as the round thread would record them.
"""

from __future__ import annotations

import random
import threading
from typing import NamedTuple, Optional

import pytest

from kinesis_dstream.dstream.checkpointer import Checkpointer
from kinesis_dstream.dstream.executor_read import ShardRange
from kinesis_dstream.dstream.receiver_state import ReceiverState
from kinesis_dstream.dstream.round_book import Round
from kinesis_dstream.errors import KinesisDStreamError, LeaseLostError
from kinesis_dstream.esn import ESN_SHARD_END, ESN_TRIM_HORIZON, ExtendedSequenceNumber
from kinesis_dstream.retrieval.reader import StartPosition
from kinesis_dstream.retrieval.start import WHOLE_RECORD
from kinesis_dstream.spark_internals import next_job_times

BIG = 10**9


class Plan(NamedTuple):
    """What a round's plan carries that the state reads."""

    shard_id: str
    hash_key_range: Optional[tuple] = None


def esn(n: int) -> ExtendedSequenceNumber:
    return ExtendedSequenceNumber(str(n), 0)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Reads:
    """Makes up each shard's records: consecutive sequence numbers, per shard."""

    def __init__(self) -> None:
        self.next_seq: dict = {}
        self.lock = threading.Lock()

    def round(
        self,
        state: ReceiverState,
        ready: set,
        records: int = 3,
        ended: frozenset = frozenset(),
        error: Optional[str] = None,
    ) -> Optional[Round]:
        """Plan a round as the round thread does and record what it read."""
        planned = state.plan_round(ready, BIG, BIG)
        if planned is None:
            return None
        ranges, plans, generations = [], [], []
        for shard_id, cursor in planned.shards:
            with self.lock:
                first = self.next_seq.get(shard_id, 1)
                self.next_seq[shard_id] = first + records
            ranges.append(
                ShardRange(
                    planned.round_id,
                    shard_id,
                    0 if error else records,
                    None if error else (first, 0),
                    None if error else (first + records - 1, 0),
                    0 if error else records * 10,
                    0,
                    shard_id in ended,
                    (),
                    "iterator",
                    1,
                    0.0,
                    error_kind="permanent" if error else None,
                    error=error,
                )
            )
            plans.append(Plan(shard_id))
            generations.append(cursor.generation)
        round_ = Round(
            planned.round_id,
            None,
            plans,
            ranges,
            generations,
            sum(r.records for r in ranges),
            sum(r.data_bytes for r in ranges),
        )
        round_.planned_at = planned.planned_at
        state.round_recorded(round_)
        return round_


def opened(clock: Optional[Clock] = None, shards=("a", "b"), retain_s=5.0) -> ReceiverState:
    state = ReceiverState("stream-x", retain_s, clock=clock or Clock())
    for shard_id in shards:
        state.shard_opened(shard_id, ESN_TRIM_HORIZON, StartPosition.trim_horizon(), None)
    return state


def write_all(state: ReceiverState) -> list:
    """What a checkpointer whose every write succeeds writes."""
    targets, _ = state.checkpoint_targets()
    written = [(shard, gen, pos) for shard, (gen, pos) in sorted(targets.items())]
    state.checkpoints_written(written)
    return written


def test_a_round_goes_to_a_batch_and_its_success_is_what_may_be_checkpointed():
    state, reads = opened(), Reads()
    reads.round(state, {"a", "b"})
    assert state.buffered_records() == 6
    parts, logged = state.batch_opened(1000, (1000,))
    assert logged is None and len(parts) == 1
    assert state.checkpoint_targets()[0] == {}  # in a batch, not yet completed
    assert state.batch_opened(1000, (1000,))[0] == parts  # asked again: the same parts
    completed = state.batch_completed(1000, succeeded=True)
    assert [t for t, _ in completed.done] == [1000] and completed.blocked == []
    assert completed.shards_held == 2
    assert state.buffered_records() == 0
    assert write_all(state) == [("a", 1, esn(3)), ("b", 1, esn(3))]
    assert state.checkpoint_targets()[0] == {}
    ranges, _ = state.batch_ranges(1000)
    assert [(r.shard_id, r.first_esn, r.last_esn, r.records) for r in ranges] == [
        ("a", (1, 0), (3, 0), 3),
        ("b", (1, 0), (3, 0), 3),
    ]


def test_a_failed_batch_blocks_its_shards_and_nothing_past_it_is_checkpointed():
    state, reads = opened(shards=("a",)), Reads()
    reads.round(state, {"a"})
    state.batch_opened(1000, (1000,))
    reads.round(state, {"a"})
    state.batch_opened(2000, (2000,))
    state.batch_completed(2000, succeeded=True)  # the later batch ends first
    assert state.batch_completed(1000, succeeded=False).blocked == ["a"]
    assert state.checkpoint_targets()[0] == {}
    blocked, stalled = state.stuck(60_000)
    assert "batch 1000 failed" in blocked["a"] and stalled == []
    assert state.plan_round({"a"}, BIG, BIG) is None  # a blocked shard is not read


def test_a_batch_is_processed_only_once_every_outputs_next_job_has_succeeded():
    # Batch 500 ms; one output runs every batch, another is a window sliding every 2 s:
    # the window's job at 2000 is the one that processes batches 500 to 2000.
    slides = [500, 2000]
    for window_succeeds in (False, True):
        state, reads = opened(shards=("a",)), Reads()
        reads.round(state, {"a"})  # records 1..3, in batch 500
        for t in (500, 1000, 1500, 2000):
            state.batch_opened(t, next_job_times(0, slides, t))
        for t in (500, 1000, 1500):
            assert state.batch_completed(t, succeeded=True).done == []  # 2000 still to come
            assert state.checkpoint_targets()[0] == {}
        completed = state.batch_completed(2000, succeeded=window_succeeds)
        assert [t for t, _ in completed.done] == [500]  # (1000-2000 held no records)
        if window_succeeds:
            assert write_all(state) == [("a", 1, esn(3))]
        else:
            assert completed.blocked == ["a"] and state.checkpoint_targets()[0] == {}


def test_each_outputs_next_job_time_reports_a_batch():
    assert next_job_times(0, [500, 2000], 500) == (500, 2000)
    assert next_job_times(0, [500, 2000], 2000) == (2000,)
    assert next_job_times(100, [1000, 1000, 3000], 1600) == (2100, 3100)
    assert next_job_times(0, [], 700) == (700,)  # no outputs: the batch time itself
    assert next_job_times(5000, [1000], 5000) == (5000,)  # the zero time itself


def test_a_shard_whose_lease_is_not_ready_now_is_not_read_whatever_the_book_heard():
    state, reads = opened(shards=("a", "b")), Reads()
    reads.round(state, {"a", "b"})  # both read while both were held
    # b's lease went without a loss reaching the receiver (its entry dropped at a
    # SHARD_END written on a lease taken again): the round reads a only.
    planned = state.plan_round({"a"}, BIG, BIG)
    assert planned is not None and [shard for shard, _ in planned.shards] == ["a"]


def test_a_read_paused_at_the_buffer_bound_says_for_how_long_until_a_round_is_planned():
    clock = Clock()
    state, reads = opened(clock, shards=("a",)), Reads()
    reads.round(state, {"a"})  # 3 records fetched, in no completed batch
    assert state.reading_paused_s() is None
    assert state.plan_round({"a"}, 3, BIG) is None  # at the bound
    clock.now += 90
    assert state.plan_round({"a"}, 3, BIG) is None
    assert state.reading_paused_s() == 90
    table = LeaseTable(lost=set())
    Checkpointer(state, table, table, stalled_batch_ms=60_000).checkpoint_pass()
    assert table.paused_s == 90  # the observer warns past a minute (observe.PAUSE_WARNING_S)
    state.batch_opened(1000, (1000,))
    state.batch_completed(1000, succeeded=True)
    assert state.plan_round({"a"}, 3, BIG) is not None  # room again: reading goes on
    assert state.reading_paused_s() is None


def test_a_lease_taken_again_before_its_loss_was_told_frees_the_old_generations_rounds():
    state, reads = opened(shards=("a",)), Reads()
    old = reads.round(state, {"a"})  # generation 1: 3 records, in no batch yet
    # The lease was lost and taken again before the loss reached the receiver: the new
    # generation's opening closes the old one, whose round now holds nothing.
    assert state.shard_opened("a", ESN_TRIM_HORIZON, StartPosition.trim_horizon(), None) == [old]
    assert state.rounds() == []
    reads.round(state, {"a"})
    state.batch_opened(1000, (1000,))
    state.batch_completed(1000, succeeded=True)
    assert state.buffered_records() == 0  # nothing of the dead generation stays buffered


def test_a_lost_lease_frees_its_unbatched_rounds_and_ignores_its_old_generation():
    state, reads = opened(shards=("a",)), Reads()
    round_ = reads.round(state, {"a"})
    assert state.rounds() == [round_]
    assert state.shard_closed("a") == [round_]  # nothing else holds it: unpersist it
    assert state.rounds() == []
    state.shard_opened("a", esn(3), StartPosition.after_checkpoint("3", 0), None)
    reads.round(state, {"a"})
    state.batch_opened(1000, (1000,))
    state.batch_completed(1000, succeeded=True)
    targets, _ = state.checkpoint_targets()
    assert targets == {"a": (2, esn(6))}
    state.checkpoints_written([("a", 1, esn(6))])  # a write for the lost generation
    assert state.checkpoint_targets()[0] == targets  # changed nothing


def test_rounds_expire_retain_s_after_their_batch_completed():
    clock = Clock()
    state, reads = opened(clock, shards=("a",), retain_s=5.0), Reads()
    first = reads.round(state, {"a"})
    state.batch_opened(1000, (1000,))
    assert state.batch_completed(1000, succeeded=True).expired == []  # kept for recompute
    clock.now = 4.0
    reads.round(state, {"a"})
    state.batch_opened(2000, (2000,))
    assert state.batch_completed(2000, succeeded=True).expired == []
    clock.now = 5.0
    reads.round(state, {"a"})
    state.batch_opened(3000, (3000,))
    assert state.batch_completed(3000, succeeded=True).expired == [first]
    assert first not in state.rounds()


def test_a_round_waits_on_parents_buffer_bounds_and_hands_out_copies():
    state = opened(shards=("a",))
    assert state.plan_round(set(), BIG, BIG) is None  # the lease is not ready yet
    assert state.progress()["shards_waiting_on_parents"] == ["a"]
    planned = state.plan_round({"a"}, BIG, BIG)
    assert planned is not None and [s for s, _ in planned.shards] == ["a"]
    assert state.progress()["shards_waiting_on_parents"] == []
    planned.shards[0][1].failures = 99  # the round thread's copy, not the state's
    again = state.plan_round({"a"}, BIG, BIG)
    assert again is not None and again.shards[0][1].failures == 0
    assert again.round_id == planned.round_id + 1
    Reads().round(state, {"a"}, records=5)
    assert state.plan_round({"a"}, 5, BIG) is None  # 5 records buffered: at the bound
    assert state.stats().rounds_skipped_full_buffer == 1


def test_a_shard_failed_for_good_fails_every_later_batch_naming_stream_and_shard():
    state = opened(shards=("a",))
    Reads().round(state, {"a"}, error="the message handler raised")
    with pytest.raises(KinesisDStreamError) as raised:
        state.batch_opened(1000, (1000,))
    assert "stream-x" in str(raised.value) and "shard a" in str(raised.value)
    assert "message handler raised" in state.progress()["failure"]


def test_a_shard_checkpointed_at_its_end_is_no_longer_held():
    state, reads = opened(shards=("a", "b")), Reads()
    reads.round(state, {"a", "b"}, ended=frozenset({"a"}))
    state.batch_opened(1000, (1000,))
    state.batch_completed(1000, succeeded=True)
    targets, _ = state.checkpoint_targets()
    assert targets["a"] == (1, ESN_SHARD_END)
    write_all(state)
    assert state.progress()["shards_held"] == ["b"]


def test_the_batch_log_survives_a_restart_and_live_ranges_go_only_to_later_times():
    state, reads = opened(shards=("a",)), Reads()
    reads.round(state, {"a"})
    state.batch_opened(1000, (1000,))
    log = state.batch_log()
    restarted = opened(shards=("a",))
    restarted.batch_log_restored(log)
    assert restarted.batch_opened(1000, (1000,))[1] == log[1000]  # re-read from the log
    reads.round(restarted, {"a"})
    assert restarted.batch_opened(500, (500,))[0] == []  # never back in time
    assert len(restarted.batch_opened(2000, (2000,))[0]) == 1
    restarted.keep_batch_log_for(1_200_000)
    assert restarted.batch_log_retention_ms() == 1_200_000


class LeaseTable:
    """The checkpointer's collaborators, as the state sees them: the lease writes (one
    shard's lease is lost), the children's leases and what the observer hears."""

    def __init__(self, lost: set) -> None:
        self.lost = lost
        self.checkpoints: dict = {}
        self.children_created: list = []
        self.heard: list = []

    def checkpoint(self, shard_id, esn, child_shard_ids=None):
        if shard_id in self.lost:
            raise LeaseLostError(f"shard {shard_id}: lease lost")
        self.checkpoints[shard_id] = (esn, child_shard_ids)

    def shard_ended(self, shard_id, child_shard_ids):
        self.checkpoint(shard_id, ESN_SHARD_END, child_shard_ids)
        self.children_created.append(list(child_shard_ids))

    def checkpoint_written(self, shard_id, seconds):
        self.heard.append(("written", shard_id))

    def checkpoint_refused(self, shard_id, position, exc):
        self.heard.append(("refused", shard_id))

    def checkpoint_pass(self, blocked, stalled, paused_s=None):
        self.heard.append(("pass", dict(blocked), list(stalled)))
        self.paused_s = paused_s


def test_the_checkpointer_tells_the_state_only_what_was_written():
    state, reads = opened(shards=("a", "b")), Reads()
    reads.round(state, {"a", "b"})
    state.batch_opened(1000, (1000,))
    state.batch_completed(1000, succeeded=True)
    table = LeaseTable(lost={"a"})
    checkpointer = Checkpointer(state, table, table, stalled_batch_ms=60_000)
    assert checkpointer.checkpoint_now() == 1
    assert table.checkpoints == {"b": (esn(3), None)}
    assert state.checkpoint_targets()[0] == {"a": (1, esn(3))}  # tried again next pass
    checkpointer.checkpoint_pass()
    assert table.heard == [("refused", "a"), ("written", "b"), ("refused", "a"), ("pass", {}, [])]


def test_operations_from_many_threads_keep_the_ledger_rule():
    """Rounds, batches, checkpoints, lease churn and readers at once: no operation sees
    another half done, and no checkpoint passes a range whose batch did not succeed."""
    shards = ("a", "b", "c")
    state, reads = opened(shards=shards, retain_s=0.0), Reads()
    stop = threading.Event()
    errors: list = []
    succeeded: dict = {s: set() for s in shards}  # last seq of ranges in good batches
    written: dict = {s: [] for s in shards}  # (generation, position) in write order
    record_lock = threading.Lock()

    def run(body) -> None:
        try:
            while not stop.is_set():
                body()
        except BaseException as exc:  # reported by the test below
            errors.append(exc)
            stop.set()

    def fetcher() -> None:
        reads.round(state, set(shards), records=random.randint(0, 3))

    batch_times = iter(range(1000, 10**9, 1000))

    def batches() -> None:
        batch_ms = next(batch_times)
        parts, _ = state.batch_opened(batch_ms, (batch_ms,))
        ok = random.random() < 0.95
        if ok:
            for round_, included in parts or ():
                with record_lock:
                    for i in included:
                        r = round_.ranges[i]
                        if r.records:
                            succeeded[r.shard_id].add(r.last_esn[0])
        state.batch_completed(batch_ms, succeeded=ok)

    def checkpointer() -> None:
        targets, _ = state.checkpoint_targets()
        done = [(s, g, p) for s, (g, p) in sorted(targets.items())]
        with record_lock:
            for shard_id, generation, position in done:
                if not position.is_shard_end:
                    assert int(position.sequence_number) in succeeded[shard_id], position
                written[shard_id].append((generation, position))
        state.checkpoints_written(done)

    def churn() -> None:
        shard_id = random.choice(shards)
        state.shard_closed(shard_id)
        targets = [p for g, p in written[shard_id]]
        start = max(targets, default=ESN_TRIM_HORIZON)
        state.shard_opened(shard_id, start, StartPosition.trim_horizon(), None)
        stop.wait(0.001)

    def reader() -> None:
        progress = state.progress()
        assert set(progress["shards_held"]) <= set(shards)
        state.stats()
        state.buffered_records()
        state.rounds()

    threads = [
        threading.Thread(target=run, args=(body,), name=f"hammer-{n}")
        for n, body in enumerate((fetcher, batches, batches, checkpointer, churn, reader))
    ]
    for thread in threads:
        thread.start()
    stop.wait(2.0)
    stop.set()
    for thread in threads:
        thread.join(timeout=10)
    assert not any(t.is_alive() for t in threads)
    assert errors == []
    assert state.stats().rounds > 10
    # Per shard and generation, checkpoints only move forward.
    for shard_id in shards:
        by_generation: dict = {}
        for generation, position in written[shard_id]:
            by_generation.setdefault(generation, []).append(position)
        for positions in by_generation.values():
            assert positions == sorted(positions)


def test_a_shard_end_is_due_once_the_batch_of_its_last_range_completed():
    state, reads = opened(shards=("a", "b")), Reads()
    reads.round(state, {"a", "b"}, ended=frozenset({"a"}))  # a's last range
    assert not state.shard_end_due()  # its batch has not completed
    state.batch_opened(1000, (1000,))
    state.batch_completed(1000, succeeded=True)
    assert state.shard_end_due()  # the receiver wakes its checkpointer now
    assert not state.shard_end_due()  # once: a write that fails waits for the interval
    table = LeaseTable(lost=set())
    Checkpointer(state, table, table, stalled_batch_ms=60_000).checkpoint_now()
    assert table.checkpoints["a"][0] == ESN_SHARD_END and table.children_created == [[]]
    assert not state.shard_end_due()


def test_under_fan_out_a_shard_is_read_again_only_after_the_subscription_gap():
    clock = Clock()
    state = ReceiverState("stream-x", 5.0, clock=clock, min_read_gap_s=5.0)
    state.shard_opened("a", ESN_TRIM_HORIZON, StartPosition.trim_horizon(), None)
    reads = Reads()
    assert reads.round(state, {"a"}) is not None  # subscribed now
    clock.now += 4.9
    assert state.plan_round({"a"}, BIG, BIG) is None  # Kinesis would refuse it
    clock.now += 0.1
    planned = state.plan_round({"a"}, BIG, BIG)
    assert planned is not None and [shard for shard, _ in planned.shards] == ["a"]


def test_a_read_that_consumed_its_last_record_whole_is_followed_after_it_not_at_it():
    """A new subscription (or iterator) AT the last record would send it again, and a
    subscription stops at a caught-up event: a closed shard's end, in the event after,
    would never be read."""
    state = opened(shards=("a",))
    planned = state.plan_round({"a"}, BIG, BIG)
    read = ShardRange(
        planned.round_id,
        "a",
        2,
        (5, 0),
        (6, 0),
        20,
        0,
        False,
        (),
        None,
        1,
        0.0,
        resume_after=(6, WHOLE_RECORD),
    )
    state.round_recorded(Round(planned.round_id, None, [Plan("a")], [read], [1], 2, 20))
    ((_, cursor),) = state.plan_round({"a"}, BIG, BIG).shards
    assert cursor.position == StartPosition.after_sequence_number("6")
    assert StartPosition.after_checkpoint("6", 0).iterator_type == "AT_SEQUENCE_NUMBER"
