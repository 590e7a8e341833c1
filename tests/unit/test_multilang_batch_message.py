"""The processRecords line as a child reads it: every field, UTF-8 keys, shared arrivals."""

import base64
import io
import json
from datetime import datetime, timedelta, timezone

from kinesis_dstream.multilang import messages
from kinesis_dstream.record import KinesisRecord

T0 = datetime(2026, 11, 25, 12, 0, 0, 123000, tzinfo=timezone.utc)


def rec(seq, sub, data, key, arrival):
    return KinesisRecord(data, key, str(seq), sub, None, arrival, "shardId-0", "s")


def test_a_batch_line_decodes_to_the_java_daemons_fields_for_every_record():
    later = T0 + timedelta(seconds=1)
    records = [
        rec(7, 0, b"\x00\xff", "cl\u00e9-\u2603", T0),  # aggregate: one arrival for both
        rec(7, 1, b"", "k2", T0),
        rec(8, 0, bytes(range(256)), "k3", later),
        rec(9, 0, b"x", "k4", None),
    ]
    out = io.BytesIO()
    out.mode = "wb"
    messages.MessageWriter(out, "shardId-0").write(messages.process_records(records, 5))
    line = out.getvalue()
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert json.loads(line) == {
        "action": "processRecords",
        "records": [
            {
                "action": "record",
                "data": base64.b64encode(r.data).decode(),
                "partitionKey": r.partition_key,
                "sequenceNumber": r.sequence_number,
                "subSequenceNumber": r.sub_sequence_number,
                "approximateArrivalTimestamp": (
                    None
                    if r.approximate_arrival_timestamp is None
                    else round(r.approximate_arrival_timestamp.timestamp() * 1000)
                ),
            }
            for r in records
        ],
        "millisBehindLatest": 5,
    }
    assert json.loads(line)["records"][2]["approximateArrivalTimestamp"] == 1795608001123
