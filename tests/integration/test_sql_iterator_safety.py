"""The shard iterators handed between the peek and the tasks never change what a batch
reads, on moto's server without Spark.

The iterators are hints (docs/design/range-ends.md, "Shard iterators as hints"): a batch
stays a function of its offsets, a replay reads exactly the recorded range, and a
position whose records were trimmed is still reported. Each test here is a way a hint
could break one of those: a page cut at an AvailableNow cutoff, a replay or retry of a
range, an iterator that expired or is refused, KPL aggregates, fan-out.
"""

from __future__ import annotations

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
