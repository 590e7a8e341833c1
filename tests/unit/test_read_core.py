"""The read core's rules on scripted pages, no server (pure logic, milliseconds).

A scripted transport hands the :class:`ShardReader` fixed pages, as GetRecords (polled)
or SubscribeToShard (pushed) would; the reader's rules (a cut inside an aggregate, range
ends, consumed-through, the handler, shard end, a replay) are the same over both. The
transports themselves are tested against moto, kinesalite and ministack in
test_reader.py and test_fanout.py.
"""

from datetime import datetime, timezone

import pytest

from kinesis_dstream.errors import KinesisServiceError, MessageHandlerError, RecordsLostError
from kinesis_dstream.kpl import RecordAggregator
from kinesis_dstream.retrieval.reader import ReaderConfig, ReadPhase, ShardReader
from kinesis_dstream.retrieval.replay import replay_range
from kinesis_dstream.retrieval.start import WHOLE_RECORD, StartPosition, esn_key
from kinesis_dstream.retrieval.transport import Page, ShardTransport

ARRIVAL = datetime(2026, 1, 1, tzinfo=timezone.utc)


class ScriptedTransport(ShardTransport):
    """Hands out fixed pages, then empty pages at the tip (or the shard's end)."""

    def __init__(self, pages, pushed=False, ends=False):
        self._pages = list(pages)
        self.pushed = pushed
        self._ends = ends
        self.taken = 0

    @property
    def iterator(self):
        return f"it-{self.taken}"

    def next_page(self, limit):
        self.taken += 1
        if self._pages:
            records = self._pages.pop(0)
            last = not self._pages and self._ends
            return Page(records, 0 if not self._pages else 1000, not self._pages, last, ())
        return Page([], 0, True, self._ends, () if self._ends else None)


def raw(sequence, data, key="pk"):
    return {
        "SequenceNumber": str(sequence),
        "ApproximateArrivalTimestamp": ARRIVAL,
        "Data": data,
        "PartitionKey": key,
    }


def aggregate(sequence, payloads):
    aggregator = RecordAggregator()
    entries = []
    for payload in payloads:
        entries += aggregator.add(payload, "pk")
    entries += aggregator.flush()
    (entry,) = entries
    return raw(sequence, entry["Data"], entry["PartitionKey"])


def reader_on(transport, start=None, **kwargs):
    return ShardReader(
        None,
        "s",
        "shardId-000000000000",
        start or StartPosition.trim_horizon(),
        transport=transport,
        config=ReaderConfig(min_call_interval_s=0.0),
        **kwargs,
    )


PAGES = [
    [raw(1, b"a"), aggregate(2, [b"b0", b"b1", b"b2", b"b3"]), raw(3, b"c")],
    [raw(4, b"d"), aggregate(5, [b"e0", b"e1"])],
]
EVERYTHING = [b"a", b"b0", b"b1", b"b2", b"b3", b"c", b"d", b"e0", b"e1"]


@pytest.mark.parametrize("pushed", [False, True])
def test_a_read_cut_inside_an_aggregate_goes_on_at_the_next_sub_record(pushed):
    reader = reader_on(ScriptedTransport(PAGES, pushed=pushed))
    first = reader.read(max_records=3)
    assert [r.data for r in first.records] == [b"a", b"b0", b"b1"]
    assert first.last_esn == (2, 1) and reader.resume_after == (2, 1)
    assert reader.iterator is None  # the rest of the page waits here: hand off by ESN
    got = [r.data for r in first.records]
    while True:
        batch = reader.read(max_records=3)
        if not batch.records:
            break
        got += [r.data for r in batch.records]
    assert got == EVERYTHING
    assert reader.resume_after == (5, 1) and reader.iterator is not None


@pytest.mark.parametrize("pushed", [False, True])
def test_a_start_inside_an_aggregate_drops_through_the_checkpoint(pushed):
    start = StartPosition.after_checkpoint("2", 1)
    reader = reader_on(ScriptedTransport(PAGES, pushed=pushed), start)
    got = []
    while batch := reader.read().records:
        got += [r.data for r in batch]
    assert got == EVERYTHING[3:]


def test_a_range_read_stops_at_its_last_record_for_good():
    reader = reader_on(ScriptedTransport(PAGES))
    got = []
    while batch := reader.read(max_records=2, until=(2, 2)).records:
        got += [r.data for r in batch]
    assert got == [b"a", b"b0", b"b1", b"b2"]
    assert reader.read(until=(2, 2)).records == []
    assert reader.iterator is None  # records after the range's end were not consumed


def test_records_that_give_no_user_record_are_still_consumed():
    reader = reader_on(ScriptedTransport([[raw(8, b"w"), raw(9, b"x")]]))
    assert [r.data for r in reader.read(max_records=10).records] == [b"w", b"x"]
    assert reader.resume_after == (9, 0)  # the last user record delivered
    dropping = reader_on(ScriptedTransport([[raw(8, b"w")]]), StartPosition.after_checkpoint("8"))
    assert dropping.read().records == []
    assert dropping.resume_after == (8, WHOLE_RECORD)  # record 8 gave nothing, yet is consumed


def test_a_failing_handler_names_the_record_and_hands_off_nothing():
    def handler(record):
        if record.data == b"b2":
            raise ValueError("bad payload")
        return record.data

    transport = ScriptedTransport(PAGES)
    reader = reader_on(transport, message_handler=handler)
    with pytest.raises(MessageHandlerError, match=r"shardId-000000000000, record 2/2"):
        reader.read()
    assert reader.iterator is None  # restart from the last recorded position, skip nothing
    assert reader.phase is ReadPhase.FAILED
    taken = transport.taken
    assert reader.read().records == [] and transport.taken == taken  # it reads no further


def test_shard_end_comes_after_the_last_pending_record():
    reader = reader_on(ScriptedTransport(PAGES, ends=True))
    got = []
    while not reader.shard_ended:
        got += [r.data for r in reader.read(max_records=4).records]
    assert got == EVERYTHING and reader.child_shard_ids == []


def test_a_replay_gives_exactly_the_recorded_range():
    reader = reader_on(ScriptedTransport(PAGES), StartPosition.at_esn("2", 1))
    chunks = list(replay_range(reader, (4, 0), 5, "the range", max_records=2))
    assert [r.data for chunk in chunks for r in chunk] == [b"b1", b"b2", b"b3", b"c", b"d"]
    assert max(len(chunk) for chunk in chunks) == 2


def test_a_replay_that_finds_fewer_records_says_so():
    trimmed = [[raw(3, b"c"), raw(4, b"d")]]  # records 1 and 2 are past retention
    reader = reader_on(ScriptedTransport(trimmed), StartPosition.at_esn("1", 0))
    with pytest.raises(RecordsLostError, match=r"replaying shard X gave 2 records where .* 5"):
        list(replay_range(reader, (4, 0), 5, "shard X", max_records=100))


def test_a_replay_that_ends_before_its_last_record_says_so():
    reader = reader_on(ScriptedTransport([[raw(1, b"a")]]), StartPosition.at_esn("1", 0))
    with pytest.raises(RecordsLostError, match="gave 1 records where the first read gave 1"):
        list(replay_range(reader, esn_key("2"), 1, "shard X", max_records=100))


class FailsOnce(ScriptedTransport):
    """A scripted transport whose ``fail_at``-th call raises (a broken subscription,
    a GetRecords that failed for good) before it hands out its next page."""

    def __init__(self, pages, fail_at, **kwargs):
        super().__init__(pages, **kwargs)
        self.fail_at = fail_at
        self.calls = 0

    def next_page(self, limit):
        self.calls += 1
        if self.calls == self.fail_at:
            raise KinesisServiceError(
                "ExpiredTokenException", code="ExpiredTokenException", operation="GetRecords"
            )
        return super().next_page(limit)


def read_through_failures(reader, **bounds):
    """Read as the kcl daemon does: every failure retried on the same reader."""
    got, failures = [], 0
    for _ in range(20):
        try:
            batch = reader.read(**bounds)
        except KinesisServiceError:
            failures += 1
            continue
        got += [r.data for r in batch.records]
        if batch.shard_ended or (not batch.records and got == EVERYTHING):
            break
    return got, failures


@pytest.mark.parametrize("pushed", [False, True])
def test_a_failed_call_after_pending_records_were_taken_loses_none_of_them(pushed):
    # A read serves the records left over from the last page, then its call fails: the
    # records it had taken come first at the next read on the same reader.
    reader = reader_on(FailsOnce(PAGES, fail_at=2, pushed=pushed))
    got, failures = read_through_failures(reader, max_records=4, max_calls=1)
    assert failures == 1
    assert got == EVERYTHING


class ChildLookup:
    """ListShards for a stream whose shard 0 split into 1 and 2; the first call fails."""

    meta = None

    def __init__(self):
        self.calls = 0

    def list_shards(self, **kwargs):
        self.calls += 1
        if self.calls == 1:
            raise KinesisServiceError("AccessDeniedException", code="AccessDeniedException")
        return {
            "Shards": [
                {"ShardId": "shardId-000000000000"},
                {"ShardId": "shardId-000000000001", "ParentShardId": "shardId-000000000000"},
                {"ShardId": "shardId-000000000002", "ParentShardId": "shardId-000000000000"},
            ]
        }


class EndsWithoutChildren(ScriptedTransport):
    """A shard that ends without ChildShards on its last page (kinesalite, older servers)."""

    def __init__(self, pages, lookup):
        super().__init__(pages, ends=True)
        self.lookup = lookup

    @property
    def client(self):
        return self.lookup

    def next_page(self, limit):
        page = super().next_page(limit)
        return Page(page.records, page.millis_behind_latest, page.at_tip, page.shard_ended, None)


def test_the_last_page_survives_a_failed_lookup_of_the_shards_children(caplog):
    lookup = ChildLookup()
    reader = reader_on(EndsWithoutChildren(PAGES, lookup))
    got, failures = read_through_failures(reader, max_records=100)
    assert got == EVERYTHING  # the last page went out although the lookup failed
    assert reader.shard_ended and reader.child_shard_ids == [
        "shardId-000000000001",
        "shardId-000000000002",
    ]
    # The failure came with records to hand over: logged, and asked again at the next read.
    assert lookup.calls == 2 and failures == 0
    assert "child shards could not be listed (AccessDeniedException)" in caplog.text
