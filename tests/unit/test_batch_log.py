"""The batch log keeps what the DStream graph can still recompute (pure logic)."""

from kinesis_dstream.dstream.batches import MIN_RETENTION_MS, BatchLog, BatchRange
from kinesis_dstream.dstream.ledger import Ledger

RANGE = (BatchRange("shardId-000000000000", None, (1, 0), (5, 0), 5),)


def test_entries_older_than_the_remember_duration_are_trimmed():
    log = BatchLog()
    log.set_retention(1_200_000)  # a 20-minute window
    for batch_ms in range(0, 1_500_001, 100_000):
        log.add(batch_ms, RANGE)
    kept = sorted(log.snapshot())
    assert kept[0] == 300_000 and kept[-1] == 1_500_000


def test_an_unknown_remember_duration_keeps_the_minimum():
    log = BatchLog()
    log.set_retention(None)
    assert log.retention_ms == MIN_RETENTION_MS
    log.add(0, RANGE)
    log.add(MIN_RETENTION_MS + 1, RANGE)
    assert sorted(log.snapshot()) == [MIN_RETENTION_MS + 1]


def test_restored_times_take_no_live_records():
    log, ledger = BatchLog(), Ledger()
    assert log.restore({2000: RANGE, 1000: RANGE}) == [1000, 2000]
    for batch_ms in (1000, 2000):
        ledger.note_batch_time(batch_ms)
    log.restore({1000: ()})  # never overwrites what it has
    assert log.get(1000) == RANGE
    assert ledger.assign(2000) == [] and ledger.assign(1500) == []
