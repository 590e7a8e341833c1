"""KPL key tables that are not UTF-8, read by the real Java KCL 2.5.8 and by ``deaggregate``.

The key tables are protobuf ``string`` fields, but a producer can write any bytes there.
The KCL's protobuf-java decodes them with U+FFFD for each malformed sequence; the
delivered partition key is that text, and the hash-range check takes the MD5 of its UTF-8
bytes (not of the bytes written). This test holds ``deaggregate`` to both on a two-shard
stream: each key is written into both shards, and exactly the copy in the shard that
the KCL's effective hash key names is kept. Every key's suffix is chosen so that the
MD5 of the bytes written and the MD5 of the decoded text name different shards, so the
test tells the two apart. ``deaggregate`` runs with ``drop_outside_shard=True`` (the KCL's
drop) on the very records the KCL read.
"""

from __future__ import annotations

import base64
import hashlib

import pytest

from kinesis_dstream.kpl import deaggregate
from kinesis_dstream.kpl.format import key_text
from kinesis_dstream.retrieval.streams import ensure_stream

from ..support.java_kcl import (
    Nghttpx,
    kcl_jars,
    skip_unless_tools,
    start_java_daemon,
    stop_process_group,
)
from ..support.kpl_bytes import aggregate, user_record
from ..support.kpl_streams import shard_ranges
from ..support.waiting import wait_until
from .test_java_fleet import JAVA_START_S, java_app
from .test_multilang_daemon import records_seen

#: Malformed UTF-8 of every kind Java's decoder and Python's may treat differently:
#: encoded surrogates (whole, cut short, at the end), truncated and overlong sequences,
#: code points past U+10FFFF, bytes that never start a sequence.
PATTERNS = [
    b"\xff",
    b"a\xffb",
    b"\xed\xa0\x80",
    b"\xed\xa0A",
    b"x\xed\xa0",
    b"\xed\xbf\xbf",
    b"\xed\x9f\xbf",  # U+D7FF: valid, just below the surrogates
    b"\xe2\x82",
    b"\xe2\x82A",
    b"\xe2A",
    b"\xf0\x90\x80",
    b"\xf0\x90\x80A",
    b"\xf0\x90A",
    b"\xf4\x90\x80\x80",
    b"\xf5\x80\x80\x80",
    b"\xc0\x80",
    b"\xc1\xbf",
    b"\xe0\x80\x80",
    b"\xe0\x9f\xbf",
    b"\xf0\x80\x80\x80",
    b"\xf8\x88\x80\x80\x80",
    b"\x80",
    b"\xc2",
    b"\xdf\xc0",
]


def _shard_of(ranges: list, digest: bytes) -> str:
    value = int.from_bytes(digest, "big")
    return next(shard for shard, low, high in ranges if low <= value <= high)


def keys_that_tell_the_rules_apart(ranges: list) -> list:
    """Each pattern with a suffix for which MD5(bytes) and MD5(decoded text) differ in shard
    (a valid key has no such suffix: it is kept as it is)."""
    keys = []
    for pattern in PATTERNS:
        decoded = key_text(pattern).encode()
        if decoded == pattern:
            keys.append(pattern)
            continue
        for n in range(1000):
            key = pattern + str(n).encode()
            as_written = _shard_of(ranges, hashlib.md5(key).digest())
            as_text = _shard_of(ranges, hashlib.md5(key_text(key).encode()).digest())
            if as_written != as_text:
                keys.append(key)
                break
    return keys


# The Java daemon takes over a minute to take its first lease: a slow test.
@pytest.mark.slow
def test_the_java_kcl_and_deaggregate_read_keys_that_are_not_utf8_alike(
    local_aws, kclpy, unique_name, tmp_path
):
    skip_unless_tools()
    jars = kcl_jars()
    kinesis = local_aws.client("kinesis")
    ensure_stream(kinesis, unique_name, 2)
    ranges = shard_ranges(kinesis, unique_name)
    keys = keys_that_tell_the_rules_apart(ranges)
    assert len(keys) == len(PATTERNS)
    for shard, low, _high in ranges:  # every key into both shards, then an end marker
        entries = [
            {
                "Data": aggregate(
                    [key],
                    [
                        user_record(0, f"{i}@{shard}#0".encode()),
                        user_record(0, f"{i}@{shard}#1".encode()),
                    ],
                ),
                "PartitionKey": "outer",
                "ExplicitHashKey": str(low),
            }
            for i, key in enumerate(keys)
        ]
        entries.append({"Data": b"end", "PartitionKey": "end", "ExplicitHashKey": str(low)})
        assert (
            kinesis.put_records(StreamName=unique_name, Records=entries)["FailedRecordCount"] == 0
        )

    out = tmp_path / "out"
    out.mkdir()
    proxy = Nghttpx(local_aws.port, tmp_path)
    properties, env = java_app(
        tmp_path, local_aws, kclpy, proxy, unique_name, "batch", failoverTimeMillis="6000"
    )
    daemon = start_java_daemon(jars, properties, env, tmp_path / "java.log")
    try:
        wait_until(
            lambda: sum(base64.b64decode(e["data"]) == b"end" for e in records_seen(out)) == 2,
            JAVA_START_S,
            "the Java KCL reading both shards to their end markers",
        )
    finally:
        stop_process_group(daemon, 9)
        proxy.stop()
    java = sorted(
        (e["shard"], e["pk"], base64.b64decode(e["data"]).decode(), e["sub"])
        for e in records_seen(out)
    )

    ours = []
    for shard, low, high in ranges:
        iterator = kinesis.get_shard_iterator(
            StreamName=unique_name, ShardId=shard, ShardIteratorType="TRIM_HORIZON"
        )["ShardIterator"]
        page = kinesis.get_records(ShardIterator=iterator, Limit=10_000)["Records"]
        for record in deaggregate(page, low, high, drop_outside_shard=True):
            ours.append(
                (shard, record.partition_key, record.data.decode(), record.sub_sequence_number)
            )
    assert sorted(ours) == java
    # Each key kept once, in the shard its decoded text's MD5 names, with its text as the key.
    kept = {(pk, data.split("#")[0]) for _, pk, data, _ in java if data != "end"}
    assert kept == {
        (key_text(key), f"{i}@{_shard_of(ranges, hashlib.md5(key_text(key).encode()).digest())}")
        for i, key in enumerate(keys)
    }
