"""A batch read's bounds from Kafka's option names and the source's: pure parsing."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from kinesis_dstream.sql.batch.bounds import BatchBounds, ShardEnd, refuse_batch_options
from kinesis_dstream.sql.batch.plan import hours_not_retained
from kinesis_dstream.sql.config.options import OptionError
from kinesis_dstream.sql.positions import TRIM_HORIZON

STREAMS = ("s",)
PLANNED = datetime(2026, 11, 27, 12, 0, tzinfo=timezone.utc)


def bounds(**options):
    return BatchBounds.parse({"streamName": "s", **options}, STREAMS)


def test_by_default_a_batch_read_goes_from_the_trim_horizon_to_the_planned_moment():
    b = bounds()
    assert b.start_of("s", "shardId-0") == TRIM_HORIZON
    assert b.end_of("s", "shardId-0", PLANNED) == ShardEnd(before_ts="2026-11-27T12:00:00.000000Z")


def test_kafka_epoch_milliseconds_and_iso_timestamps_bound_the_range():
    b = bounds(startingTimestamp="1764244800000", endingTimestamp="2026-11-27T13:00:00+01:00")
    assert b.start_of("s", "x") == {"ts": "2025-11-27T12:00:00.000000Z"}
    assert b.end_of("s", "x", PLANNED) == ShardEnd(before_ts="2026-11-27T12:00:00.000000Z")


def test_the_sources_position_names_start_a_batch_read_too():
    b = bounds(startingPosition="AT_TIMESTAMP 2026-11-27T10:00:00Z")
    assert b.start_of("s", "x") == {"ts": "2026-11-27T10:00:00.000000Z"}
    assert bounds(initialPosition="trim_horizon").start_of("s", "x") == TRIM_HORIZON


def test_a_timestamp_takes_precedence_over_offsets_as_in_kafka():
    b = bounds(startingOffsets="earliest", startingTimestamp="2026-11-27T10:00:00Z")
    assert b.start_of("s", "x") == {"ts": "2026-11-27T10:00:00.000000Z"}


def test_per_shard_sequence_numbers_start_inclusive_and_end_exclusive():
    b = bounds(
        startingOffsets='{"s": {"shardId-1": "100", "shardId-2": "earliest"}}',
        endingOffsets='{"s": {"shardId-1": "200", "shardId-3": "latest"}}',
    )
    assert b.start_of("s", "shardId-1") == {"seq": "100", "sub": -1}
    assert b.start_of("s", "shardId-2") == TRIM_HORIZON
    assert b.end_of("s", "shardId-1", PLANNED) == ShardEnd(before_seq="200")
    assert b.end_of("s", "shardId-3", PLANNED).before_ts == "2026-11-27T12:00:00.000000Z"
    assert b.end_of("s", "shardId-9", PLANNED).before_ts == "2026-11-27T12:00:00.000000Z"


@pytest.mark.parametrize(
    "options, message",
    [
        ({"startingOffsets": "latest"}, "cannot start at latest"),
        ({"initialPosition": "latest"}, "cannot start at latest"),
        ({"endingOffsets": "earliest"}, "cannot end at earliest"),
        ({"startingOffsets": '{"other": {"shardId-1": "1"}}'}, "names stream(s) ['other']"),
        ({"startingOffsets": '{"s": {"shardId-1": "abc"}}'}, "not a sequence number"),
        ({"endingTimestamp": "yesterday"}, "neither milliseconds"),
        (
            {"startingTimestamp": "2026-11-27T10:00:00Z", "endingTimestamp": "1764237600000"},
            "not before its end",
        ),
    ],
)
def test_bounds_that_cannot_be_read_fail_in_one_line_naming_the_option(options, message):
    with pytest.raises(OptionError) as failed:
        bounds(**options)
    assert message in str(failed.value)


@pytest.mark.parametrize(
    "options, words",
    [
        # epoch milliseconds past any date (OSError 75, OverflowError, ValueError before)
        ({"endingTimestamp": "67768036191676796929"}, ["'endingTimestamp'", "out of range"]),
        ({"endingTimestamp": "9" * 400}, ["'endingTimestamp'", "out of range"]),
        ({"startingTimestamp": "1700000000000000000"}, ["'startingTimestamp'", "nanoseconds"]),
        # JSON nested ~1,000 deep (RecursionError before)
        ({"startingOffsets": "[" * 1000 + "]" * 1000}, ["'startingOffsets'", "nested 1000 deep"]),
        (
            {"endingOffsets": '{"s": ' * 999 + "1" + "}" * 999},
            ["'endingOffsets'", "nested 999 deep"],
        ),
        # a number past Python's digit limit (a bare ValueError before)
        ({"startingOffsets": '{"s": {"a": ' + "9" * 5000 + "}}"}, ["'startingOffsets'", "digits"]),
        # digits that are not ASCII are no sequence number (they were taken as one)
        ({"startingOffsets": '{"s": {"shardId-1": "\u00b2"}}'}, ["not a sequence number"]),
    ],
)
def test_hostile_bounds_are_the_options_error(options, words):
    with pytest.raises(OptionError) as failed:
        bounds(**options)
    message = str(failed.value)
    assert all(word in message for word in words), message
    assert len(message) < 400


def test_read_stream_refuses_a_batch_reads_bounds():
    with pytest.raises(OptionError, match="'endingTimestamp' bounds a batch read"):
        refuse_batch_options({"streamName": "s", "endingTimestamp": "1"})
    refuse_batch_options({"streamName": "s", "initialPosition": "latest"})


def test_hours_before_the_retention_are_counted_from_the_start_bound():
    start = {"ts": "2026-11-26T06:00:00.000000Z"}  # 30 hours before PLANNED
    assert hours_not_retained(start, 24, PLANNED) == pytest.approx(6.0)
    assert hours_not_retained(start, 48, PLANNED) == 0.0
    assert hours_not_retained(TRIM_HORIZON, 24, PLANNED) == 0.0
