"""KPL aggregated records: de-aggregation exactly as the KCL does it, and aggregation.

Format: ``F3 89 9A C2`` + protobuf ``AggregatedRecord`` + MD5 (16 bytes) of the protobuf
bytes. The KCL's rules (``AggregatorUtil.deaggregate``), which :func:`deaggregate` keeps:

- data shorter than the magic, another magic, nothing after the magic but the digest,
  a wrong MD5 or a protobuf that does not parse: the record is a plain record;
- user records keep the outer sequence number and arrival time and get sub-sequence
  numbers 0, 1, 2, ...; an explicit hash key applies only when its index field is present;
- a user record whose effective hash key (its explicit hash key, else the MD5 of its
  UTF-8 partition key as an unsigned 128-bit integer) lies outside the shard's hash range
  drops the whole aggregate (counted, and logged with shard and sequence number).

One deliberate difference: where the KCL meets an index past the end of a key table, a
non-numeric explicit hash key or a user record missing a required field, it logs and
keeps the user records it had already emitted, losing the rest. Here such an aggregate is
passed through whole as one plain record (counted and logged): nothing lost.

Decoding: upb (protobuf's C backend) splits the aggregate into its key tables and each
user record's bytes; the common record layouts (partition key index < 128, no explicit
hash key, data under 16 KiB) are read inline, anything else by a full protobuf parse.
This measured fastest (README, ``benchmarks/bench_aggregation.py``).
"""

from __future__ import annotations

import bisect
import hashlib
import logging
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Optional

from google.protobuf import descriptor_pb2, descriptor_pool, message, message_factory

from .record import KinesisRecord

log = logging.getLogger(__name__)

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


AggregatedRecord, _AggregatedRecordView, _Record = _build_messages()


@dataclass
class DeaggregationStats:
    """Counters a caller keeps across calls (one per shard reader). Thread-safe updates."""

    aggregates: int = 0
    user_records: int = 0
    aggregates_dropped: int = 0
    user_records_dropped: int = 0
    malformed_aggregates: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, **counts: int) -> None:
        with self._lock:
            for name, value in counts.items():
                setattr(self, name, getattr(self, name) + value)

    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "_lock"}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state, _lock=threading.Lock())


class _Malformed(Exception):
    """An aggregate that parses but cannot be read: see the module's deliberate difference."""


try:  # CPython's built-in MD5: a third of OpenSSL's per-call cost on short inputs
    from _md5 import md5 as _new_md5  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - Pythons built without it
    _new_md5 = hashlib.md5


def _hash_key_digest(partition_key: str) -> bytes:
    return _new_md5(partition_key.encode("utf-8")).digest()


def effective_hash_key(partition_key: str, explicit_hash_key: Optional[str] = None) -> int:
    """The hash key Kinesis routes a record by: its explicit hash key, else MD5(key)."""
    if explicit_hash_key is not None:
        return int(explicit_hash_key)
    return int.from_bytes(_hash_key_digest(partition_key), "big")


def _md5(data: bytes) -> bytes:
    return _new_md5(data).digest()


def is_aggregated(data: bytes) -> bool:
    """True if ``data`` is a well-formed KPL aggregate (magic and MD5 both check)."""
    return (
        data[:4] == MAGIC
        and len(data) > len(MAGIC) + DIGEST_SIZE
        and _md5(data[4:-DIGEST_SIZE]) == data[-DIGEST_SIZE:]
    )


def deaggregate(
    records: Iterable[Any],
    starting_hash_key: Optional[Any] = None,
    ending_hash_key: Optional[Any] = None,
    *,
    shard_id: Optional[str] = None,
    stream_name: Optional[str] = None,
    stats: Optional[DeaggregationStats] = None,
) -> list:
    """User records (:class:`KinesisRecord`) from GetRecords records, in order.

    ``records`` are GetRecords entries (dicts with ``Data``, ``PartitionKey``,
    ``SequenceNumber`` and ``ApproximateArrivalTimestamp``). Give the shard's hash key
    range (decimal strings or ints, as ``HashKeyRange`` has them) to drop aggregates
    holding a user record that does not belong to the shard, as the KCL does; without it
    nothing is range-checked. Plain records come out with sub-sequence number 0.
    """
    low = int(starting_hash_key) if starting_hash_key is not None else 0
    high = int(ending_hash_key) if ending_hash_key is not None else MAX_HASH_KEY
    # Every MD5 is in [0, 2**128 - 1]: partition keys need hashing only for a narrower range.
    check_keys = low > 0 or high < MAX_HASH_KEY
    check_range = starting_hash_key is not None or ending_hash_key is not None
    low_digest = low.to_bytes(16, "big") if check_keys else b""
    high_digest = high.to_bytes(16, "big") if check_keys else b""
    md5 = _new_md5
    new = tuple.__new__
    out: list = []
    aggregates = user_records = dropped = dropped_records = malformed = 0
    for record in records:
        data = record["Data"]
        partition_key = record["PartitionKey"]
        sequence_number = record["SequenceNumber"]
        arrival = record.get("ApproximateArrivalTimestamp")
        plain = (data, partition_key, sequence_number, 0, None, arrival, shard_id, stream_name)
        if data[:4] != MAGIC or len(data) <= 4 + DIGEST_SIZE:
            out.append(new(KinesisRecord, plain))
            continue
        body = data[4:-DIGEST_SIZE]
        if md5(body).digest() != data[-DIGEST_SIZE:]:
            out.append(new(KinesisRecord, plain))
            continue
        try:
            view = _AggregatedRecordView.FromString(body)
        except message.DecodeError:
            out.append(new(KinesisRecord, plain))
            continue
        pks = list(view.partition_key_table)
        ehks = list(view.explicit_hash_key_table)
        user: list = []
        append = user.append
        try:
            if check_keys:
                pk_ok = [low_digest <= md5(k.encode()).digest() <= high_digest for k in pks]
            else:
                pk_ok = [True] * len(pks)
            if check_range:
                ehk_ok = [low <= _parse_hash_key(k) <= high for k in ehks]
            else:
                ehk_ok = [True] * len(ehks)
            for sub, raw in enumerate(view.records):
                # Inline fast path: 08 <pk index < 128> 1A <length: 1 or 2 bytes> <data>.
                # Any other layout (explicit hash key, tags, big indexes) is fully parsed.
                if raw[0] == 8 and raw[1] < 128 and raw[2] == 26:
                    n = raw[3]
                    if n < 128:
                        offset, length = 4, n
                    else:
                        offset, length = 5, (n & 127) | raw[4] << 7
                    if raw[offset - 1] < 128 and len(raw) == offset + length:
                        pki = raw[1]
                        if not pk_ok[pki]:
                            break
                        user_record = (
                            raw[offset:],
                            pks[pki],
                            sequence_number,
                            sub,
                            None,
                            arrival,
                            shard_id,
                            stream_name,
                        )
                        append(new(KinesisRecord, user_record))
                        continue
                parsed = _Record.FromString(raw)
                if not parsed.IsInitialized():  # the KCL's Java parser rejects these
                    raise _Malformed("a user record lacks a required field")
                pki = parsed.partition_key_index
                if parsed.HasField("explicit_hash_key_index"):
                    ehki = parsed.explicit_hash_key_index
                    if not ehk_ok[ehki]:
                        break
                    ehk: Optional[str] = ehks[ehki]
                else:
                    if not pk_ok[pki]:
                        break
                    ehk = None
                append(
                    new(
                        KinesisRecord,
                        (
                            parsed.data,
                            pks[pki],
                            sequence_number,
                            sub,
                            ehk,
                            arrival,
                            shard_id,
                            stream_name,
                        ),
                    )
                )
            else:
                out.extend(user)
                aggregates += 1
                user_records += len(user)
                continue
        except (IndexError, message.DecodeError, _Malformed) as exc:
            malformed += 1
            log.error(
                "malformed KPL aggregate (%s) passed through as one plain record "
                "(stream %s, shard %s, sequence number %s)",
                exc,
                stream_name,
                shard_id,
                sequence_number,
            )
            out.append(new(KinesisRecord, plain))
            continue
        # The loop broke: a user record hashes outside this shard. Drop the aggregate.
        dropped += 1
        dropped_records += len(view.records)
        log.warning(
            "dropped a KPL aggregate of %d user records: user record %d hashes outside the "
            "shard's range [%d, %d] (stream %s, shard %s, sequence number %s)",
            len(view.records),
            len(user),
            low,
            high,
            stream_name,
            shard_id,
            sequence_number,
        )
    if stats is not None:
        stats.add(
            aggregates=aggregates,
            user_records=user_records,
            aggregates_dropped=dropped,
            user_records_dropped=dropped_records,
            malformed_aggregates=malformed,
        )
    return out


def _parse_hash_key(explicit_hash_key: str) -> int:
    try:
        return int(explicit_hash_key)
    except ValueError:
        raise _Malformed(f"explicit hash key {explicit_hash_key!r} is not a number") from None


def _varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _put_entry(data: bytes, partition_key: str, explicit_hash_key: Optional[str]) -> dict:
    """A PutRecords entry; the explicit hash key only when there is one."""
    entry = {"Data": data, "PartitionKey": partition_key}
    if explicit_hash_key is not None:
        entry["ExplicitHashKey"] = explicit_hash_key
    return entry


def _field(tag: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field (wire type 2)."""
    return bytes((tag,)) + _varint(len(payload)) + payload


_TAG_PK_TABLE, _TAG_EHK_TABLE, _TAG_RECORD = 0x0A, 0x12, 0x1A


class ShardMap:
    """Open shards by hash key range: which shard a hash key goes to."""

    def __init__(self, shards: Iterable[tuple]) -> None:
        ordered = sorted((int(start), int(end), shard_id) for shard_id, start, end in shards)
        if not ordered:
            raise ValueError("a shard map needs at least one shard")
        self._starts = [start for start, _, _ in ordered]
        self._shards = ordered

    @classmethod
    def from_list_shards(cls, shards: Iterable[dict]) -> ShardMap:
        """From ListShards entries; closed shards (with an ending sequence number) skipped."""
        return cls(
            (s["ShardId"], s["HashKeyRange"]["StartingHashKey"], s["HashKeyRange"]["EndingHashKey"])
            for s in shards
            if "EndingSequenceNumber" not in s.get("SequenceNumberRange", {})
        )

    def shard_for(self, hash_key: int) -> tuple:
        """(shard id, starting hash key, ending hash key) of the shard holding ``hash_key``."""
        index = bisect.bisect_right(self._starts, hash_key) - 1
        start, end, shard_id = self._shards[max(index, 0)]
        if not start <= hash_key <= end:
            raise ValueError(f"hash key {hash_key} is in no open shard of this map")
        return shard_id, start, end


class _OpenAggregate:
    """One aggregate being filled: key tables, encoded user records, exact size."""

    __slots__ = (
        "count",
        "ehk_index",
        "explicit_hash_key",
        "first_data",
        "partition_key",
        "parts",
        "pk_index",
        "size",
    )

    def __init__(self, partition_key: str, explicit_hash_key: Optional[str]) -> None:
        self.partition_key = partition_key  # the outer record's key: the first user record's
        self.explicit_hash_key = explicit_hash_key
        self.pk_index: dict = {}
        self.ehk_index: dict = {}
        self.parts: list = []  # (tag, encoded field) in insertion order
        self.count = 0
        self.first_data = b""
        self.size = len(MAGIC) + DIGEST_SIZE + len(partition_key.encode("utf-8"))

    def cost(self, data: bytes, partition_key: str, explicit_hash_key: Optional[str]) -> tuple:
        """(bytes this record adds, its encoded fields): nothing is changed yet."""
        fields = []
        pki = self.pk_index.get(partition_key)
        if pki is None:
            pki = len(self.pk_index)
            fields.append((_TAG_PK_TABLE, partition_key))
        record = b"\x08" + _varint(pki)
        if explicit_hash_key is not None:
            ehki = self.ehk_index.get(explicit_hash_key)
            if ehki is None:
                ehki = len(self.ehk_index)
                fields.append((_TAG_EHK_TABLE, explicit_hash_key))
            record += b"\x10" + _varint(ehki)
        record += b"\x1a" + _varint(len(data)) + data
        encoded = [(tag, _field(tag, key.encode("utf-8"))) for tag, key in fields]
        encoded.append((_TAG_RECORD, _field(_TAG_RECORD, record)))
        return sum(len(e) for _, e in encoded), encoded, fields

    def add(self, data: bytes, encoded: list, fields: list, cost: int) -> None:
        if not self.count:
            self.first_data = data
        self.count += 1
        for tag, key in fields:
            table = self.pk_index if tag == _TAG_PK_TABLE else self.ehk_index
            table[key] = len(table)
        self.parts.extend(encoded)
        self.size += cost

    def entry(self) -> dict:
        """The PutRecords entry for this aggregate (a single record goes unaggregated)."""
        if self.count == 1:
            return _put_entry(self.first_data, self.partition_key, self.explicit_hash_key)
        records = [e for tag, e in self.parts if tag == _TAG_RECORD]
        # protobuf allows fields in any order; tables first reads best and matches the KPL.
        body = b"".join(
            [e for tag, e in self.parts if tag == _TAG_PK_TABLE]
            + [e for tag, e in self.parts if tag == _TAG_EHK_TABLE]
            + records
        )
        return _put_entry(MAGIC + body + _md5(body), self.partition_key, self.explicit_hash_key)


class RecordAggregator:
    """Packs user records into KPL aggregates of at most ``max_bytes`` and ``max_records``.

    :meth:`add` returns the PutRecords entries completed by adding a record (usually none);
    :meth:`flush` returns the rest. With a :class:`ShardMap`, user records are grouped by
    the shard their effective hash key belongs to and each aggregate carries an explicit
    hash key inside that shard, so every user record lands on its own shard and a
    range-checking consumer (the KCL, this library) keeps it. Without a shard map every
    user record goes into one aggregate routed by its first record's key: only safe for a
    one-shard stream, since consumers drop aggregates holding records of other shards.
    A record too large to share an aggregate is sent as a plain record, as the KPL does;
    so is an aggregate of one record. Not thread-safe: the producer serializes calls.
    """

    def __init__(
        self,
        max_bytes: int = DEFAULT_MAX_AGGREGATE_BYTES,
        max_records: int = 2**32 - 1,
        shard_map: Optional[ShardMap] = None,
    ) -> None:
        if not 64 <= max_bytes <= MAX_AGGREGATE_BYTES:
            raise ValueError(f"max_bytes must be in [64, {MAX_AGGREGATE_BYTES}], got {max_bytes}")
        if max_records < 1:
            raise ValueError(f"max_records must be >= 1, got {max_records}")
        self.max_bytes = max_bytes
        self.max_records = max_records
        self.shard_map = shard_map
        self._open: dict = {}  # shard id (or None without a map) -> _OpenAggregate

    def add(self, data: bytes, partition_key: str, explicit_hash_key: Optional[str] = None) -> list:
        """Add one user record; returns the PutRecords entries it completed."""
        if self.shard_map is not None:
            hash_key = effective_hash_key(partition_key, explicit_hash_key)
            group: Optional[str] = self.shard_map.shard_for(hash_key)[0]
            outer_ehk: Optional[str] = str(hash_key)
        else:
            group, outer_ehk = None, explicit_hash_key
        done = []
        current = self._open.get(group)
        if current is None:
            current = self._open[group] = _OpenAggregate(partition_key, outer_ehk)
        cost, encoded, fields = current.cost(data, partition_key, explicit_hash_key)
        if current.count and (
            current.size + cost > self.max_bytes or current.count >= self.max_records
        ):
            done.append(current.entry())
            current = self._open[group] = _OpenAggregate(partition_key, outer_ehk)
            cost, encoded, fields = current.cost(data, partition_key, explicit_hash_key)
        if current.size + cost > self.max_bytes:  # alone it does not fit: send it plain
            del self._open[group]
            done.append(_put_entry(data, partition_key, explicit_hash_key))
            return done
        current.add(data, encoded, fields, cost)
        return done

    def flush(self) -> list:
        """PutRecords entries for every open aggregate; the aggregator is empty after."""
        done = [aggregate.entry() for aggregate in self._open.values() if aggregate.count]
        self._open.clear()
        return done

    def __len__(self) -> int:
        """User records waiting in open aggregates."""
        return sum(aggregate.count for aggregate in self._open.values())
