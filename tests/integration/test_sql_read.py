"""Review fixes of the Structured Streaming source, on moto's server, without Spark.

Each test drives the runner's calls and the executors' ``read()`` directly (as in
``test_sql_runner``) and checks what arrives against what the server holds.
"""

import dataclasses
import errno
import json
import logging
import os
import shutil
import time

import pytest

from kinesis_dstream.kpl import RecordAggregator
from kinesis_dstream.retrieval.streams import ensure_stream
from kinesis_dstream.sql.ends.store import DirectoryEndStore, EndStoreError
from kinesis_dstream.sql.executor import partition
from kinesis_dstream.sql.offsets import RangeEnd, make_offset

from ..support.faults import CallErrors
from ..support.records import put_records
from .test_sql_runner import _all, reader_for, rows


class GetRecordsErrors(CallErrors):
    """Throttle chosen GetRecords: ``executor(n)`` for reads (Limit > 2), else peeks."""

    def __init__(self, client, executor=lambda n: False, peek=lambda n: False):
        super().__init__(client, "kinesis", "GetRecords", lambda n: None)
        self.reads = self.peeks = 0
        self._executor, self._peek = executor, peek

    def _handle(self, params=None, **kwargs):
        if json.loads(params["body"]).get("Limit", 0) > 2:
            n, self.reads = self.reads, self.reads + 1
            fail = self._executor(n)
        else:
            n, self.peeks = self.peeks, self.peeks + 1
            fail = self._peek(n)
        code = "ProvisionedThroughputExceededException" if fail else None
        self._decide = lambda _n: code
        return super()._handle(**kwargs)


def drain(reader, offset, batches=20):
    """Run micro-batches until latestOffset returns its start; (records, sizes, offset)."""
    seen, sizes = [], []
    for _ in range(batches):
        end = reader.latestOffset(offset, _all())
        if json.dumps(end) == json.dumps(offset):
            return seen, sizes, offset
        batch = rows(reader, offset, end)
        seen += batch
        sizes.append(len(batch))
        offset = end
    raise AssertionError(f"still planning batches after {batches}: {sizes}")


def test_a_range_full_mid_page_of_aggregates_resumes_at_the_next_record(
    local_aws, kinesis, unique_name, tmp_path
):
    ensure_stream(kinesis, unique_name, 1)
    for a in range(3):  # three KPL aggregates of ten user records, one GetRecords page
        aggregator = RecordAggregator()
        for u in range(10):
            aggregator.add(f"a{a}u{u}".encode(), "samekey")
        (entry,) = aggregator.flush()
        kinesis.put_record(StreamName=unique_name, **entry)
    reader = reader_for(local_aws, unique_name, tmp_path, maxFetchRecordsPerShard="4")
    seen, sizes, _ = drain(reader, reader.initialOffset())
    assert [r[0] for r in seen] == [f"a{a}u{u}".encode() for a in range(3) for u in range(10)]
    assert sizes == [4] * 7 + [2]


@pytest.mark.parametrize("per_fetch", ["10000", "5"])
def test_throttling_in_the_middle_of_a_range_keeps_what_was_read(
    local_aws, kinesis, unique_name, tmp_path, per_fetch
):
    ensure_stream(kinesis, unique_name, 1)
    put_records(kinesis, unique_name, 10)
    reader = reader_for(local_aws, unique_name, tmp_path, maxRecordsPerFetch=per_fetch)
    errors = GetRecordsErrors(reader.settings.client_spec.client(), executor=lambda n: n >= 1)
    try:
        start = reader.initialOffset()
        end = reader.latestOffset(start, _all())
        first = rows(reader, start, end)  # the first page, then throttled past the budget
    finally:
        errors.remove()
    # one page of 5 leaves a second read, throttled; one page of 10 catches up at once
    assert errors.injected > 0 or per_fetch == "10000"
    assert len(first) == int(per_fetch) if per_fetch == "5" else len(first) == 10
    rest, _, _ = drain(reader, end)
    assert [r[0] for r in first + rest] == [f"r{i}".encode() for i in range(10)]


def test_latest_is_pinned_when_the_query_starts(local_aws, kinesis, unique_name, tmp_path):
    ensure_stream(kinesis, unique_name, 2)
    put_records(kinesis, unique_name, 3, key="before{i}")
    reader = reader_for(local_aws, unique_name, tmp_path, initialPosition="latest")
    start = reader.initialOffset()
    assert all("ts" in e["pos"] for e in start["shards"].values())
    # records put before the first look at the shards, by a restarted driver
    put_records(kinesis, unique_name, 6, start=3, key="after{i}")
    restarted = reader_for(local_aws, unique_name, tmp_path, initialPosition="latest")
    deadline = time.monotonic() + 10
    seen = []
    offset = start
    while len(seen) < 6:
        assert time.monotonic() < deadline, f"only {len(seen)} of 6 records within 10 s"
        end = restarted.latestOffset(offset, _all())
        seen += rows(restarted, offset, end)
        offset = end
        time.sleep(0.05)
    assert sorted(r[0] for r in seen) == [f"r{i}".encode() for i in range(3, 9)]


def test_available_now_reads_to_the_cutoff_while_peeks_learn_nothing(
    local_aws, kinesis, unique_name, tmp_path
):
    ensure_stream(kinesis, unique_name, 2)
    put_records(kinesis, unique_name, 20)
    reader = reader_for(local_aws, unique_name, tmp_path)
    start = reader.initialOffset()
    reader.prepareForTriggerAvailableNow()
    errors = GetRecordsErrors(reader.settings.client_spec.client(), peek=lambda n: True)
    try:
        seen, _, _ = drain(reader, start)
    finally:
        errors.remove()
    assert errors.peeks > 0 and errors.reads > 0
    assert sorted(r[0] for r in seen) == sorted(f"r{i}".encode() for i in range(20))


def test_a_lost_end_store_fails_the_query_instead_of_repeating_a_batch(
    local_aws, kinesis, unique_name, tmp_path
):
    ensure_stream(kinesis, unique_name, 1)
    put_records(kinesis, unique_name, 5)
    reader = reader_for(local_aws, unique_name, tmp_path)
    start = reader.initialOffset()
    end = reader.latestOffset(start, _all())
    assert len(rows(reader, start, end)) == 5
    shutil.rmtree(tmp_path / "ends")  # the end store is lost; the checkpoint is not
    restarted = reader_for(local_aws, unique_name, tmp_path)
    with pytest.raises(EndStoreError) as info:
        restarted.latestOffset(end, _all())
    message = str(info.value)
    shard = next(iter(end["shards"]))
    assert shard in message and str(tmp_path / "ends") in message and "metadataPath" in message


def test_a_range_ends_at_the_byte_limit_and_spills_to_disk(
    local_aws, kinesis, unique_name, tmp_path, monkeypatch
):
    ensure_stream(kinesis, unique_name, 1)
    with_sizes = [(f"r{i}".ljust(100, "x"), f"k{i}") for i in range(10)]
    for data, key in with_sizes:
        kinesis.put_record(StreamName=unique_name, Data=data.encode(), PartitionKey=key)
    reader = reader_for(local_aws, unique_name, tmp_path)
    reader.settings = dataclasses.replace(reader.settings, max_bytes=250)
    monkeypatch.setattr(partition, "SPILL_BYTES", 1)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    seen, sizes, _ = drain(reader, reader.initialOffset())
    assert [r[0] for r in seen] == [d.encode() for d, _ in with_sizes]
    assert sizes == [3, 3, 3, 1]
    assert not list(tmp_path.glob("kinesis-range-*"))  # spilled files are removed


def test_a_lost_shard_position_is_warned_about_and_counted_once(
    local_aws, kinesis, unique_name, tmp_path, caplog
):
    ensure_stream(kinesis, unique_name, 1)
    put_records(kinesis, unique_name, 3)
    shard = kinesis.list_shards(StreamName=unique_name)["Shards"][0]["ShardId"]
    iterator = kinesis.get_shard_iterator(
        StreamName=unique_name, ShardId=shard, ShardIteratorType="TRIM_HORIZON"
    )["ShardIterator"]
    first = int(kinesis.get_records(ShardIterator=iterator)["Records"][0]["SequenceNumber"])
    trimmed = make_offset(unique_name, "q", 5, {shard: {"seq": str(first - 1), "sub": 0}})
    reader = reader_for(local_aws, unique_name, tmp_path)
    caplog.set_level(logging.WARNING, logger="kinesis_dstream.sql.driver.runner")
    for _ in range(3):  # Spark re-plans from the same start until the batch runs
        reader.latestOffset(trimmed.to_json(), _all())
    warnings = [r for r in caplog.records if "past the stream's retention" in r.getMessage()]
    assert len(warnings) == 1
    report = reader.reportLatestOffset()
    assert report["dataLossEvents"] == 1 and report["shardsWithDataLoss"] == [shard]


def test_end_store_errors_name_the_key_and_the_cause(tmp_path, monkeypatch):
    store = DirectoryEndStore(str(tmp_path))

    def no_links(src, dst):
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_links)
    with pytest.raises(EndStoreError) as info:
        store.put_if_absent("ab12", RangeEnd(0, "TRIM_HORIZON"))
    assert "ab12" in str(info.value) and "FUSE" in str(info.value)
    assert "metadataPath" in str(info.value)
    monkeypatch.undo()
    # a store that refuses a write as existing but cannot read it back
    monkeypatch.setattr(os, "link", lambda src, dst: (_ for _ in ()).throw(FileExistsError()))
    with pytest.raises(EndStoreError) as info:
        store.put_if_absent("cd34", RangeEnd(0, "TRIM_HORIZON"))
    assert "cd34" in str(info.value)
