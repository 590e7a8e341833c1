"""The fan-out reader under the Structured Streaming range code, unchanged (no Spark).

``sql/partition.py::_read_fresh`` builds its reader through ``_reader``; here that one
function is swapped for a fan-out reader (the lead's wiring does the same by option), and
consecutive ranges of one shard must end exactly where the polling reader's ranges end,
with the same records: the two transports are interchangeable under the range code.
"""

from __future__ import annotations

import pytest

from kinesis_dstream.aws import ClientSpec
from kinesis_dstream.kpl import RecordAggregator
from kinesis_dstream.retrieval.fanout import FanOutConfig, FanOutShardReader
from kinesis_dstream.retrieval.reader import ReaderConfig
from kinesis_dstream.retrieval.streams import ensure_stream

partition = pytest.importorskip("kinesis_dstream.sql.executor.partition")
from kinesis_dstream.sql.offsets import ShardRange  # noqa: E402
from kinesis_dstream.sql.positions import TRIM_HORIZON  # noqa: E402

SHARD0 = "shardId-000000000000"


def _ranges(ministack, stream, limit, make_reader):
    """Read the shard in ranges of ``limit`` until one is caught up; (ends, data)."""
    spec = ClientSpec(
        "kinesis",
        region_name=ministack.region_name,
        endpoint_url=ministack.endpoint_url,
    )
    settings = partition.ReadSettings(spec, ReaderConfig(), fail_on_data_loss=True)
    ends, data, start = [], [], TRIM_HORIZON
    while True:
        part = partition.RangePartition(
            stream, SHARD0, f"k{len(ends)}", "q", ShardRange(start, limit)
        )
        buffer = partition._Buffer()
        end = make_reader.read(part, settings, buffer)
        ends.append(end)
        for batch in buffer:
            data += batch.column("data").to_pylist()
        if end.caught_up or end.count < limit:
            return ends, data
        start = end.next


class _Transport:
    """Reads one range with ``partition._read_fresh``, its reader built by ``build``."""

    def __init__(self, monkeypatch, build):
        self._monkeypatch, self._build = monkeypatch, build

    def read(self, part, settings, buffer):
        readers = []

        def reader(part, settings, *, hinted):
            readers.append(self._build(part, settings, hinted=hinted))
            return readers[-1]

        self._monkeypatch.setattr(partition, "_reader", reader)
        try:
            return partition._read_fresh(part, settings, buffer)
        finally:
            for made in readers:
                made.close()  # the wiring closes the reader when the range is read


def test_fan_out_ranges_end_where_polling_ranges_end(ministack, unique_name, monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ministack.access_key_id)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", ministack.secret_access_key)
    client = ministack.client("kinesis")
    ensure_stream(client, unique_name, 1)
    arn = client.describe_stream_summary(StreamName=unique_name)["StreamDescriptionSummary"][
        "StreamARN"
    ]
    consumer = client.register_stream_consumer(StreamARN=arn, ConsumerName="range")["Consumer"][
        "ConsumerARN"
    ]
    expected = []
    for group in range(12):  # aggregates of 10 and plain records, alternating
        payloads = [b"g%02d-%d" % (group, i) for i in range(10)]
        expected += payloads
        if group % 2:
            aggregator = RecordAggregator()
            for data in payloads:
                aggregator.add(data, "k")
            entries = aggregator.flush()
        else:
            entries = [{"Data": data, "PartitionKey": "k"} for data in payloads]
        client.put_records(StreamName=unique_name, Records=entries)

    polling = _Transport(monkeypatch, partition._reader)

    def fan_out(part, settings, *, hinted):  # (a fan-out range carries no iterator hint)
        return FanOutShardReader(
            settings.client_spec.client(),
            part.stream_name,
            part.shard_id,
            partition.start_position(part.shard_range.start),
            consumer_arn=consumer,
            hash_key_range=part.hash_key_range,
            config=settings.config,
            fanout=FanOutConfig(resubscribe_interval_s=0.0, retry_initial_delay_s=0.2),
        )

    poll_ends, poll_data = _ranges(ministack, unique_name, 37, polling)
    efo_ends, efo_data = _ranges(ministack, unique_name, 37, _Transport(monkeypatch, fan_out))
    assert poll_data == expected  # the baseline reads everything once, in order
    assert efo_data == expected
    assert [(e.count, e.next, e.last) for e in efo_ends] == [
        (e.count, e.next, e.last) for e in poll_ends
    ]
    assert len(efo_ends) == len(poll_ends) >= 4
    assert any(end.last["sub"] for end in efo_ends[:-1])  # a range ended inside an aggregate
