"""Idle polling against moto's server: an idle shard's peeks thin out, and a record put
on it is still found within the cap (the pure rules are in ``unit/test_idle_polling.py``)."""

import pytest

from kinesis_dstream.retrieval.streams import ensure_stream, list_shard_ids
from kinesis_dstream.sql.driver.peek import Peeker
from kinesis_dstream.sql.positions import TRIM_HORIZON


class FakeClock:
    """Time in quarters of a second: sums and differences of steps are exact."""

    def __init__(self):
        self.quarters = 0

    def __call__(self):
        return self.quarters / 4


def peek_for(peeker, clock, shard, seconds):
    """Peek every 0.25 s of fake time for ``seconds``; when a peek first found data."""
    for _ in range(round(seconds * 4)):
        if peeker.peek(shard, TRIM_HORIZON, None).has_data:
            return clock()
        clock.quarters += 1
    return None


@pytest.mark.parametrize("idle_ms, most_calls", [(2000, 8), (0, 33)])
def test_an_idle_shards_peeks_thin_out_and_a_record_is_still_found_within_the_cap(
    kinesis, unique_name, idle_ms, most_calls
):
    ensure_stream(kinesis, unique_name, 1)
    (shard,) = list_shard_ids(kinesis, unique_name)
    clock = FakeClock()
    peeker = Peeker(kinesis, unique_name, 0.25, clock, max_idle_wait_s=idle_ms / 1000)
    assert peek_for(peeker, clock, shard, 8.0) is None
    # 1 GetShardIterator, then GetRecords at 0, 0.25, 0.75, 1.75, 3.75, 5.75, 7.75 s (idle)
    # or every 0.25 s
    assert peeker.calls == most_calls
    kinesis.put_record(StreamName=unique_name, Data=b"x", PartitionKey="k")
    woke_at = clock()
    found_at = peek_for(peeker, clock, shard, 5.0)
    assert found_at is not None and found_at - woke_at <= max(0.25, idle_ms / 1000)
