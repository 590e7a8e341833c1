"""records_to_arrow: the columns a read task yields, arrival times converted once each."""

from datetime import datetime, timedelta, timezone

import pyarrow as pa  # type: ignore[import-untyped]
from dateutil.tz import tzlocal, tzoffset

from kinesis_dstream.record import KinesisRecord
from kinesis_dstream.sql.schema import ARROW_SCHEMA, arrival_times, records_to_arrow

ARRIVALS = [
    None,
    datetime(2026, 11, 27, 1, 2, 3, 456000, tzinfo=timezone.utc),
    datetime(2026, 11, 27, 1, 2, 3, 456789),  # naive: taken as UTC, as pyarrow takes it
    datetime(2026, 1, 1, tzinfo=tzoffset("EST", -5 * 3600)),
    datetime(2026, 6, 1, tzinfo=tzlocal()),  # what botocore's own parser gives
    datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=timezone.utc),
]


def record(i: int, arrival) -> KinesisRecord:
    return KinesisRecord(b"%d" % i, f"k{i}", str(10**20 + i), i % 3, None, arrival)


def test_arrival_times_are_pyarrows_conversion_of_every_kind_of_datetime():
    records = [record(i, a) for i, a in enumerate(ARRIVALS * 3)]
    expected = pa.array(
        [r.approximate_arrival_timestamp for r in records], pa.timestamp("us", tz="UTC")
    )
    got = arrival_times(records)
    assert got.type == pa.timestamp("us", tz="UTC")
    assert got.equals(expected)
    assert got.null_count == 3


def test_a_page_of_shared_arrival_times_keeps_each_records_own():
    base = datetime(2026, 11, 27, tzinfo=timezone.utc)
    arrivals = [base + timedelta(milliseconds=i // 4) for i in range(40)]
    batch = records_to_arrow([record(i, a) for i, a in enumerate(arrivals)], "s", "shardId-1")
    assert batch.schema == ARROW_SCHEMA
    assert batch.column("approximateArrivalTimestamp").to_pylist() == arrivals
    assert batch.column("sequenceNumber").to_pylist() == [str(10**20 + i) for i in range(40)]
    assert batch.column("stream").to_pylist() == ["s"] * 40
