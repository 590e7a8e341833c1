"""The Glue layer's frame shapes, pure parts: inferSchema's options and record texts, the
corrupt-record column option, the source's naming of corrupt records."""

from __future__ import annotations

import gzip

import pyarrow as pa

from kinesis_dstream.glue.sources.corrupt_records import pop_corrupt_column
from kinesis_dstream.glue.sources.infer_schema import payload_text, raw_options, text_kind
from kinesis_dstream.sql.reading import corrupt_records
from kinesis_dstream.sql.schema import records_to_arrow


def test_infer_schema_asks_glue_s_text_frame_for_json_and_csv_only():
    assert text_kind({"classification": "JSON", "inferSchema": True}) == "json"
    assert text_kind({"Classification": "csv", "INFERSCHEMA": "true"}) == "csv"
    assert text_kind({"classification": "json", "inferSchema": "false"}) is None
    assert text_kind({"classification": "grok", "inferSchema": "true"}) is None  # the pattern's
    assert text_kind({"classification": "avro", "inferSchema": "true"}) is None  # source's rule
    options = {"streamName": "s", "classification": "json", "inferSchema": "true", "Delimiter": ","}
    assert raw_options(options) == {"streamName": "s"}


def test_a_record_s_text_is_decompressed_and_what_is_not_json_says_why():
    assert payload_text("json", b'{"a": 1}') == ('{"a": 1}', None)
    assert payload_text("json", gzip.compress(b'{"a": 1}')) == ('{"a": 1}', None)
    assert payload_text("json", b"[1]") == ("[1]", "JSON is not an object")
    assert payload_text("json", b"{nope") == ("{nope", "not JSON")
    assert payload_text("csv", b"a,b") == ("a,b", None)
    assert payload_text("json", b"\xff{") == ("\ufffd{", "not UTF-8 text")
    assert payload_text("json", None) == (None, "no data")


def test_the_corrupt_record_column_option_is_the_glue_layer_s():
    options = {"streamName": "s", "COLUMNNAMEOFCORRUPTRECORD": "bad"}
    assert pop_corrupt_column(options) == "bad" and options == {"streamName": "s"}
    assert pop_corrupt_column({"columnNameOfCorruptRecord": " "}) is None
    assert pop_corrupt_column({}) is None


def test_the_source_names_its_corrupt_records_by_stream_shard_and_sequence_number():
    class Record:
        def __init__(self, n):
            self.data, self.partition_key, self.sequence_number = b"x", "k", f"{n:03}"
            self.sub_sequence_number, self.explicit_hash_key = 0, None
            self.approximate_arrival_timestamp = None

    batch = records_to_arrow([Record(n) for n in range(4)], "s", "shardId-1")
    parsed = pa.RecordBatch.from_arrays(
        [pa.array([None, b"x", None, b"x"], pa.binary())], names=["_corrupt_record"]
    )
    assert corrupt_records(batch, parsed, 5) == ["s/shardId-1#001", "s/shardId-1#003"]
    assert corrupt_records(batch, parsed, 1) == ["s/shardId-1#001"]
