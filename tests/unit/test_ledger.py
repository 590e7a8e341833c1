"""The ledger rule, as pure logic: examples, then random interleavings (hypothesis)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from kinesis_dstream.dstream.ledger import IllegalTransition, Ledger, RangeEntry, ShardPhase
from kinesis_dstream.esn import ESN_SHARD_END, ESN_TRIM_HORIZON, ExtendedSequenceNumber


def esn(n: int, sub: int = 0) -> ExtendedSequenceNumber:
    return ExtendedSequenceNumber(str(n), sub)


def fetched(
    ledger: Ledger, round_id: int, shard: str, first: int, last: int, ends=False
) -> RangeEntry:
    slice_ = RangeEntry(
        round_id,
        shard,
        ledger.generation(shard) or 0,
        last - first + 1,
        esn(first),
        esn(last),
        ends_shard=ends,
    )
    assert ledger.add(slice_)
    return slice_


def test_a_later_batch_that_succeeds_first_does_not_move_the_checkpoint_past_a_failed_one():
    ledger = Ledger()
    ledger.open_shard("s", ESN_TRIM_HORIZON)
    fetched(ledger, 1, "s", 1, 10)
    assert len(ledger.assign(1000)) == 1
    fetched(ledger, 2, "s", 11, 20)
    assert len(ledger.assign(2000)) == 1
    ledger.complete(2000, succeeded=True)  # concurrentJobs=2: the later batch ends first
    assert ledger.targets() == {}
    assert ledger.complete(1000, succeeded=False) == ["s"]
    assert ledger.targets() == {}
    assert ledger.phase("s") is ShardPhase.BLOCKED
    assert "batch 1000 failed" in ledger.blocked()["s"]


def test_the_checkpoint_follows_the_contiguous_successful_prefix_only():
    ledger = Ledger()
    ledger.open_shard("s", ESN_TRIM_HORIZON)
    for n, batch in enumerate((1000, 2000, 3000)):
        fetched(ledger, n + 1, "s", n * 10 + 1, n * 10 + 10)
        ledger.assign(batch)
    ledger.complete(1000, True)
    ledger.complete(3000, True)  # 2000's event never arrives
    assert ledger.targets() == {"s": (1, esn(10))}
    ledger.checkpointed("s", 1, esn(10))
    assert ledger.targets() == {}
    assert [s.batch_ms for s in ledger.ranges("s")] == [2000, 3000]
    ledger.complete(2000, True)
    assert ledger.targets() == {"s": (1, esn(30))}


def test_a_lost_lease_drops_unassigned_slices_and_a_regained_one_starts_afresh():
    ledger = Ledger()
    ledger.open_shard("s", ESN_TRIM_HORIZON)
    fetched(ledger, 1, "s", 1, 5)
    ledger.assign(1000)
    old = fetched(ledger, 2, "s", 6, 9)
    assert ledger.lose("s") == [old]
    assert ledger.assign(2000) == []  # the dropped slice is in no later batch
    ledger.open_shard("s", esn(5))  # regained at the checkpoint another worker wrote
    assert not ledger.add(old)  # a slice of the old generation is refused
    fetched(ledger, 3, "s", 6, 9)
    ledger.complete(1000, True)  # the old generation's batch: ignored for checkpoints
    assert ledger.targets() == {}
    assert [s.round_id for s in ledger.assign(3000)] == [3]


def test_shard_end_is_a_target_only_after_every_slice_succeeded():
    ledger = Ledger()
    ledger.open_shard("s", ESN_TRIM_HORIZON)
    fetched(ledger, 1, "s", 1, 5)
    ledger.assign(1000)
    ledger.add(RangeEntry(2, "s", 1, 0, ends_shard=True))
    assert ledger.phase("s") is ShardPhase.ENDED
    ledger.assign(2000)
    ledger.complete(2000, True)
    assert ledger.targets() == {}
    ledger.complete(1000, True)
    assert ledger.targets() == {"s": (1, ESN_SHARD_END)}
    ledger.checkpointed("s", 1, ESN_SHARD_END)
    assert ledger.shards() == []


def test_live_slices_never_go_to_a_batch_time_at_or_before_a_logged_one():
    ledger = Ledger()
    ledger.note_batch_time(5000)  # restored from Spark's checkpoint after a restart
    ledger.open_shard("s", ESN_TRIM_HORIZON)
    fetched(ledger, 1, "s", 1, 5)
    assert ledger.assign(4000) == []  # a recomputed old time
    assert ledger.assign(5000) == []
    assert len(ledger.assign(6000)) == 1


def test_phases_change_only_along_the_transition_table():
    ledger = Ledger()
    ledger.open_shard("s", ESN_TRIM_HORIZON, ready=False)
    assert not ledger.add(RangeEntry(1, "s", 1, 3, esn(1), esn(3)))  # waiting on parents
    ledger.set_ready("s")
    ledger.block("s", "the message handler raised")
    assert not ledger.add(RangeEntry(2, "s", 1, 3, esn(1), esn(3)))
    book = ledger._books["s"]
    with pytest.raises(IllegalTransition):
        ledger._move("s", book, ShardPhase.READING)


# -- random interleavings ----------------------------------------------------------------

SHARDS = ("shard-a", "shard-b")


class LedgerMachine(RuleBasedStateMachine):
    """A model of the receiver around the ledger: the lease table's checkpoint per shard,
    the records each successful batch delivered, and every slice handed out."""

    def __init__(self) -> None:
        super().__init__()
        self.ledger = Ledger()
        self.table = {s: ESN_TRIM_HORIZON for s in SHARDS}  # checkpoints written
        self.cursor: dict = {}  # shard -> last sequence number fetched this generation
        self.end_at = {s: None for s in SHARDS}  # the shard's last record, once read
        self.delivered_ok = {s: set() for s in SHARDS}  # records in successful batches
        self.batches: dict = {}  # batch time -> slices handed to it
        self.completed: set = set()
        self.lost_at: dict = {}  # shard -> generation lost
        self.time = 0
        self.round = 0

    def _next_round(self) -> int:
        self.round += 1
        return self.round

    @rule(shard=st.sampled_from(SHARDS), ready=st.booleans())
    def gain(self, shard, ready):
        if self.ledger.phase(shard) is not None or self.table[shard].is_shard_end:
            return
        self.ledger.open_shard(shard, self.table[shard], ready=ready)
        checkpoint = self.table[shard]
        self.cursor[shard] = 0 if checkpoint.is_sentinel else int(checkpoint.sequence_number)

    @rule(shard=st.sampled_from(SHARDS))
    def parents_finished(self, shard):
        self.ledger.set_ready(shard)

    @rule(shard=st.sampled_from(SHARDS), records=st.integers(0, 3), ends=st.booleans())
    def fetch(self, shard, records, ends):
        if self.ledger.phase(shard) is not ShardPhase.READING:
            return
        end = self.end_at[shard]
        start = self.cursor[shard] + 1
        if end is not None:  # a re-read after regaining the lease: the shard ends there
            records = max(0, min(records, end - start + 1))
            ends = start + records - 1 >= end
        first, last = start, start + records - 1
        self.ledger.add(
            RangeEntry(
                self._next_round(),
                shard,
                self.ledger.generation(shard),
                records,
                esn(first) if records else None,
                esn(last) if records else None,
                ends_shard=ends,
            )
        )
        self.cursor[shard] = last if records else self.cursor[shard]
        if ends:
            self.end_at[shard] = self.cursor[shard]

    @rule(back=st.integers(0, 2))
    def assign(self, back):
        self.time += 1000
        batch = self.time - back * 1000  # sometimes an old (recomputed) time
        handed = self.ledger.assign(batch)
        for slice_ in handed:
            assert slice_.generation == self.ledger.generation(slice_.shard_id), (
                "a slice of a lost lease was handed out after the loss"
            )
        if handed:
            assert batch not in self.batches, "live slices went to a time already assigned"
            self.batches[batch] = handed

    @rule(data=st.data(), succeeded=st.booleans())
    def complete(self, data, succeeded):
        pending = sorted(set(self.batches) - self.completed)
        if not pending:
            return
        batch = data.draw(st.sampled_from(pending))  # any order; some never complete
        self.completed.add(batch)
        self.ledger.complete(batch, succeeded)
        if succeeded:
            for slice_ in self.batches[batch]:
                if slice_.records:
                    first, last = (
                        int(slice_.first.sequence_number),
                        int(slice_.last.sequence_number),
                    )
                    self.delivered_ok[slice_.shard_id].update(range(first, last + 1))
                if slice_.ends_shard:
                    self.delivered_ok[slice_.shard_id].add("end")

    @rule(shard=st.sampled_from(SHARDS))
    def lose(self, shard):
        generation = self.ledger.generation(shard)
        if generation is None:
            return
        dropped = self.ledger.lose(shard)
        assert all(s.generation == generation for s in dropped)
        self.cursor.pop(shard, None)

    @rule(shard=st.sampled_from(SHARDS))
    def fail_read(self, shard):
        self.ledger.block(shard, "a read failed for good")

    @rule()
    def checkpoint(self):
        for shard, (generation, position) in self.ledger.targets().items():
            self.table[shard] = position
            self.ledger.checkpointed(shard, generation, position)

    @invariant()
    def the_checkpoint_never_passes_an_unsuccessful_record(self):
        for shard, position in self.table.items():
            if position.is_shard_end:
                assert "end" in self.delivered_ok[shard]
                through = self.end_at[shard]
            elif position.is_sentinel:
                continue
            else:
                through = int(position.sequence_number)
            missing = set(range(1, through + 1)) - self.delivered_ok[shard]
            assert not missing, f"{shard} checkpointed at {position}; not delivered: {missing}"

    @invariant()
    def phases_are_consistent(self):
        for shard in SHARDS:
            phase = self.ledger.phase(shard)
            if self.table[shard].is_shard_end:
                assert phase is None


# No deadline and no too_slow health check: how fast steps are generated says nothing
# about the ledger on a loaded machine; every property check stays.
LedgerMachine.TestCase.settings = settings(
    max_examples=300,
    stateful_step_count=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
test_ledger_rule_under_random_interleavings = LedgerMachine.TestCase
