"""The KPL aggregate format: magic, protobuf messages, MD5, hash keys, counters.

Format: ``F3 89 9A C2`` + protobuf ``AggregatedRecord`` + MD5 (16 bytes) of the protobuf
bytes. The messages are built from a descriptor at import (no protoc, no generated file).
"""

from __future__ import annotations

import codecs
import hashlib
import threading
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any, Optional

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

MAGIC = b"\xf3\x89\x9a\xc2"
DIGEST_SIZE = 16
MAX_HASH_KEY = 2**128 - 1
#: The KPL's default aggregate size limit; an aggregate can be at most 1 MiB with its key.
DEFAULT_MAX_AGGREGATE_BYTES = 51_200
MAX_AGGREGATE_BYTES = 1024 * 1024


def _build_messages() -> tuple:
    """The KPL protobuf messages, built from a descriptor (no protoc, no generated file).

    ``AggregatedRecordView`` reads field 3 as raw bytes so upb splits the user records
    without materialising a message object per record.
    """
    F = descriptor_pb2.FieldDescriptorProto
    proto = descriptor_pb2.FileDescriptorProto(
        name="kinesis_dstream/kpl.proto", package="kinesis_dstream.kpl", syntax="proto2"
    )

    def add(name: str, fields: list) -> None:
        msg = proto.message_type.add(name=name)
        for number, (fname, ftype, label, type_name) in enumerate(fields, start=1):
            msg.field.add(name=fname, number=number, type=ftype, label=label, type_name=type_name)

    rep, req, opt = F.LABEL_REPEATED, F.LABEL_REQUIRED, F.LABEL_OPTIONAL
    add("Tag", [("key", F.TYPE_STRING, req, None), ("value", F.TYPE_STRING, opt, None)])
    add(
        "Record",
        [
            ("partition_key_index", F.TYPE_UINT64, req, None),
            ("explicit_hash_key_index", F.TYPE_UINT64, opt, None),
            ("data", F.TYPE_BYTES, req, None),
            ("tags", F.TYPE_MESSAGE, rep, ".kinesis_dstream.kpl.Tag"),
        ],
    )
    tables = [
        ("partition_key_table", F.TYPE_STRING, rep, None),
        ("explicit_hash_key_table", F.TYPE_STRING, rep, None),
    ]
    add(
        "AggregatedRecord",
        [*tables, ("records", F.TYPE_MESSAGE, rep, ".kinesis_dstream.kpl.Record")],
    )
    add("AggregatedRecordView", [*tables, ("records", F.TYPE_BYTES, rep, None)])
    pool = descriptor_pool.DescriptorPool()  # our own pool: no clash with other KPL modules
    pool.Add(proto)
    return tuple(
        message_factory.GetMessageClass(pool.FindMessageTypeByName(f"kinesis_dstream.kpl.{n}"))
        for n in ("AggregatedRecord", "AggregatedRecordView", "Record")
    )


#: The AggregatedRecord message; a view of it whose records stay bytes (parsed one by one
#: on demand); one user record.
AggregatedRecord, AggregatedRecordView, UserRecordMessage = _build_messages()


@dataclass
class DeaggregationStats:
    """Counters a caller keeps across calls (one per shard reader). Thread-safe updates."""

    aggregates: int = 0
    user_records: int = 0
    aggregates_dropped: int = 0
    user_records_dropped: int = 0
    malformed_aggregates: int = 0
    #: User records whose hash key lies outside the shard's range (delivered by default).
    user_records_outside_shard: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, **counts: int) -> None:
        with self._lock:
            for name, value in counts.items():
                setattr(self, name, getattr(self, name) + value)

    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "_lock"}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state, _lock=threading.Lock())


class MalformedAggregate(Exception):
    """An aggregate that parses but cannot be read: see the module's deliberate difference."""


try:  # CPython's built-in MD5: a third of OpenSSL's per-call cost on short inputs
    from _md5 import md5 as new_md5  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - Pythons built without it
    new_md5 = hashlib.md5


#: The error handler that decodes a key as protobuf-java's ``ByteString.toStringUtf8()``
#: does (Java's ``new String(bytes, UTF_8)``): each malformed sequence becomes one U+FFFD.
JAVA_UTF8_REPLACE = "kinesis_dstream.kpl.java-utf8-replace"


def _java_utf8_replace(exc: UnicodeError) -> tuple:
    """Python's ``replace`` but where Java's decoder differs: Java reads ``ED A0..BF`` as the
    start of a three-byte sequence and replaces an encoded surrogate (``ED A0 80``) whole,
    or those two bytes when no continuation byte follows; Python stops at the second byte
    (U+FFFD for each byte). Every other malformed sequence is replaced alike (checked
    against the Java KCL 2.5.8: ``tests/interop/test_java_kpl_keys.py``)."""
    if not isinstance(exc, UnicodeDecodeError):
        raise exc
    data, start, end = exc.object, exc.start, exc.end
    if data[start] == 0xED and start + 1 < len(data) and 0xA0 <= data[start + 1] <= 0xBF:
        follows = start + 2 < len(data) and data[start + 2] & 0xC0 == 0x80
        end = start + 3 if follows else start + 2
    return "\ufffd", end


codecs.register_error(JAVA_UTF8_REPLACE, _java_utf8_replace)


def key_text(raw: bytes) -> str:
    """A key table entry as the KCL reads it: UTF-8, each malformed sequence one U+FFFD."""
    return bytes(raw).decode("utf-8", JAVA_UTF8_REPLACE)


def key_table(table: Any) -> list:
    """A parsed key table (``partition_key_table``, ``explicit_hash_key_table``) as text.

    The fields are protobuf ``string``s, but a producer can write any bytes there: upb
    gives such an entry as ``bytes``. The KCL's protobuf-java decodes it with U+FFFD for
    each malformed sequence, and both the key it delivers and the MD5 of its effective
    hash key are of that text; so here (:func:`key_text`).
    """
    keys = list(table)
    if all(map(isinstance, keys, repeat(str))):
        return keys
    return [k if isinstance(k, str) else key_text(k) for k in keys]


def parse_hash_key(text: str) -> int:
    """An explicit hash key as Java's ``new BigInteger(text)`` reads it (the KCL's rule):
    an optional sign, then decimal digits (any script's), nothing else; a key past 39
    digits is outside every hash range. :class:`MalformedAggregate` otherwise."""
    digits = text[1:] if text[:1] in ("+", "-") else text
    if not digits.isdecimal():  # Unicode Nd, as Java's Character.digit(c, 10)
        raise MalformedAggregate(f"explicit hash key {text[:60]!r} is not a number")
    if len(digits) > 39:  # past 2**128 unless zero-padded (int() refuses > 4,300 digits)
        digits = digits.lstrip("0") or "0"
        if len(digits) > 39:
            return -1 if text[0] == "-" else MAX_HASH_KEY + 1
    value = int(digits)
    return -value if text[0] == "-" else value


def _hash_key_digest(partition_key: str) -> bytes:
    return new_md5(partition_key.encode("utf-8")).digest()


def effective_hash_key(partition_key: str, explicit_hash_key: Optional[str] = None) -> int:
    """The hash key Kinesis routes a record by: its explicit hash key, else MD5(key)."""
    if explicit_hash_key is not None:
        return int(explicit_hash_key)
    return int.from_bytes(_hash_key_digest(partition_key), "big")


def md5_digest(data: bytes) -> bytes:
    """MD5 of ``data``: the digest a KPL aggregate ends with."""
    return new_md5(data).digest()


def is_aggregated(data: bytes) -> bool:
    """True if ``data`` is a well-formed KPL aggregate (magic and MD5 both check)."""
    return (
        data[:4] == MAGIC
        and len(data) > len(MAGIC) + DIGEST_SIZE
        and md5_digest(data[4:-DIGEST_SIZE]) == data[-DIGEST_SIZE:]
    )
