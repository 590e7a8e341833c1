"""KPL aggregation: pack user records into aggregates grouped by shard, as the KPL does.

Each aggregate carries an explicit hash key inside its shard; a single record, or one too
big to share an aggregate, goes out plain. Key tables are de-duplicated and the protobuf
is hand-encoded with exact sizes.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from typing import Optional

from .format import (
    DEFAULT_MAX_AGGREGATE_BYTES,
    DIGEST_SIZE,
    MAGIC,
    MAX_AGGREGATE_BYTES,
    effective_hash_key,
    md5_digest,
)


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

    def range_of(self, shard_id: str) -> Optional[tuple]:
        """(starting hash key, ending hash key) of the open shard ``shard_id``; None if
        this map does not hold it."""
        for start, end, known in self._shards:
            if known == shard_id:
                return start, end
        return None

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
        return _put_entry(
            MAGIC + body + md5_digest(body), self.partition_key, self.explicit_hash_key
        )


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
