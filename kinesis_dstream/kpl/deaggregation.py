"""KPL de-aggregation, as the KCL does it but for two deliberate differences.

Format: ``F3 89 9A C2`` + protobuf ``AggregatedRecord`` + MD5 (16 bytes) of the protobuf
bytes. The KCL's rules (``AggregatorUtil.deaggregate``), which :func:`deaggregate` keeps
but for the two differences below:

- data shorter than the magic, another magic, nothing after the magic but the digest,
  a wrong MD5 or a protobuf that does not parse: the record is a plain record;
- user records keep the outer sequence number and arrival time and get sub-sequence
  numbers 0, 1, 2, ...; an explicit hash key applies only when its index field is present;
- a key table entry that is not UTF-8 is read as protobuf-java reads it, each malformed
  sequence one U+FFFD (:func:`~.format.key_table`): that text is the delivered key, and
  its UTF-8 bytes are what the partition key's MD5 is taken of;
- a user record whose effective hash key (its explicit hash key, else the MD5 of its
  UTF-8 partition key as an unsigned 128-bit integer) lies outside the shard's hash range
  drops the whole aggregate in the KCL. Not here, by default.

Two deliberate differences. **User records outside the shard's hash range are delivered
and counted** (``DeaggregationStats.user_records_outside_shard``), not dropped: AWS's own
aggregators (``aws-kinesis-agg`` for Python, Node and Java, the usual Lambda producers) are
not shard-aware, so on a multi-shard stream nearly every aggregate they write holds keys of
other shards, and the KCL's rule silently loses them. The KCL drops them for one case only:
the KPL predicted a shard from a stale shard map and re-sent those user records to the right
shard, so the misplaced copy is a duplicate. ``drop_outside_shard=True`` restores the KCL's
drop for streams written only by the KPL; what it drops is counted too
(``aggregates_dropped``, ``user_records_dropped``). Callers log the counts once per shard per
interval (:class:`~.outside.OutsideShardTally`), never once per record.

Second: where the KCL meets an index past the end of a key table, a non-numeric explicit
hash key or a user record missing a required field, it logs and keeps the user records it
had already emitted, losing the rest. Here such an aggregate is passed through whole as
one plain record (counted and logged): nothing lost.

Decoding: upb (protobuf's C backend) splits the aggregate (read through a memoryview, not
copied) into its key tables and each user record's bytes. An aggregate whose user records
all have the common layout (partition key index, optional explicit hash key index and data
length each a varint of at most two bytes, nothing after the data: :mod:`.layout`) is
split by one short loop into data, partition keys and explicit hash keys, and its
``KinesisRecord`` objects are built by ``map``/``zip`` in C, with no bytecode per record;
any other aggregate gets the general loop, with a full protobuf parse of each uncommon
user record. :func:`iter_deaggregate` hands the records over a few aggregates at a time,
for consumers that keep none of them. The garbage collector is
left alone (pausing it would change process-wide state from library code): what remains
per record is one tuple-subclass allocation, which CPython's collector always tracks. This
measured fastest (docs/benchmarks/, ``benchmarks/bench_aggregation.py``).
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable, Iterator
from functools import partial
from itertools import count, islice, repeat
from typing import Any, Optional

from google.protobuf import message

from ..record import KinesisRecord
from .format import (
    DIGEST_SIZE,
    MAGIC,
    MAX_HASH_KEY,
    AggregatedRecordView,
    DeaggregationStats,
    MalformedAggregate,
    UserRecordMessage,
    key_table,
    new_md5,
    parse_hash_key,
)
from .layout import count_outside, split_common, split_keyed

log = logging.getLogger(__name__)


#: KinesisRecord from a ready tuple, in C (the named tuple's own __new__ is Python code).
_make = partial(tuple.__new__, KinesisRecord)
#: Aggregates at least this long are hashed by OpenSSL's MD5, faster than CPython's own
#: on long inputs (CPython's wins on short ones: its per-call cost is a third).
_LONG_BODY = 4096


def deaggregate(
    records: Iterable[Any],
    starting_hash_key: Optional[Any] = None,
    ending_hash_key: Optional[Any] = None,
    *,
    shard_id: Optional[str] = None,
    stream_name: Optional[str] = None,
    stats: Optional[DeaggregationStats] = None,
    drop_outside_shard: bool = False,
) -> list:
    """User records (:class:`KinesisRecord`) from GetRecords records, in order.

    ``records`` are GetRecords entries (dicts with ``Data``, ``PartitionKey``,
    ``SequenceNumber`` and ``ApproximateArrivalTimestamp``). Give the shard's hash key
    range (decimal strings or ints, as ``HashKeyRange`` has them) to count the user records
    that do not belong to the shard (``stats.user_records_outside_shard``); they are
    delivered unless ``drop_outside_shard`` asks for the KCL's rule (drop every aggregate
    holding one). Without a range nothing is checked. Plain records come out with
    sub-sequence number 0.
    """
    low = int(starting_hash_key) if starting_hash_key is not None else 0
    # min(): moto before 5.2 ends a stream's last shard at 2**128, one past any MD5; no
    # key lies there, and the digest below must fit 16 bytes.
    high = min(int(ending_hash_key), MAX_HASH_KEY) if ending_hash_key is not None else MAX_HASH_KEY
    # Every MD5 is in [0, 2**128 - 1]: partition keys need hashing only for a narrower range.
    check_keys = low > 0 or high < MAX_HASH_KEY
    check_range = starting_hash_key is not None or ending_hash_key is not None
    low_digest = low.to_bytes(16, "big") if check_keys else b""
    high_digest = high.to_bytes(16, "big") if check_keys else b""
    md5 = new_md5
    long_md5 = hashlib.md5
    make = _make
    out: list = []
    append = out.append
    extend = out.extend
    aggregates = user_records = dropped = dropped_records = malformed = outside_total = 0
    for record in records:
        data = record["Data"]
        sequence_number = record["SequenceNumber"]
        arrival = record.get("ApproximateArrivalTimestamp")
        if data[:4] != MAGIC or len(data) <= 4 + DIGEST_SIZE:
            append(
                make(
                    (
                        data,
                        record["PartitionKey"],
                        sequence_number,
                        0,
                        None,
                        arrival,
                        shard_id,
                        stream_name,
                    )
                )
            )
            continue
        body = memoryview(data)[4:-DIGEST_SIZE]
        digest = (md5 if len(body) < _LONG_BODY else long_md5)(body).digest()
        try:
            view = None if digest != data[-DIGEST_SIZE:] else AggregatedRecordView.FromString(body)
        except message.DecodeError:
            view = None
        if view is None:  # a wrong MD5 or no protobuf: a plain record
            append(
                make(
                    (
                        data,
                        record["PartitionKey"],
                        sequence_number,
                        0,
                        None,
                        arrival,
                        shard_id,
                        stream_name,
                    )
                )
            )
            continue
        pks = key_table(view.partition_key_table)
        try:
            ehk_table = view.explicit_hash_key_table
            if ehk_table:
                ehks = key_table(ehk_table)
                split = split_keyed(view.records, pks, ehks)
            else:
                ehks = None
                split = split_common(view.records, pks)
            if split is not None:
                datas, keys, hashes = split
                outside = 0
                bad = (
                    {k for k in pks if not low_digest <= md5(k.encode()).digest() <= high_digest}
                    if check_keys
                    else None
                )
                if ehks is None:
                    if bad:
                        outside = sum(1 for k in keys if k in bad)
                else:
                    # Non-numeric keys in the table fail as the record-by-record path fails.
                    bad_hashes = (
                        {e for e in ehks if not low <= parse_hash_key(e) <= high}
                        if check_range
                        else None
                    )
                    if bad or bad_hashes:
                        outside = count_outside(keys, hashes, bad or set(), bad_hashes or set())
                if not (outside and drop_outside_shard):
                    outside_total += outside
                    extend(
                        map(
                            make,
                            zip(
                                datas,
                                keys,
                                repeat(sequence_number),
                                count(),
                                repeat(None) if hashes is None else hashes,
                                repeat(arrival),
                                repeat(shard_id),
                                repeat(stream_name),
                            ),
                        )
                    )
                    aggregates += 1
                    user_records += len(datas)
                    continue
                user: list = datas  # only its length matters: the aggregate is dropped
            else:
                user, outside = _general(
                    view,
                    pks,
                    sequence_number,
                    arrival,
                    shard_id,
                    stream_name,
                    check_keys,
                    check_range,
                    low,
                    high,
                    low_digest,
                    high_digest,
                )
        except (IndexError, message.DecodeError, MalformedAggregate) as exc:
            malformed += 1
            log.error(
                "malformed KPL aggregate (%s) passed through as one plain record "
                "(stream %s, shard %s, sequence number %s)",
                exc,
                stream_name,
                shard_id,
                sequence_number,
            )
            append(
                make(
                    (
                        data,
                        record["PartitionKey"],
                        sequence_number,
                        0,
                        None,
                        arrival,
                        shard_id,
                        stream_name,
                    )
                )
            )
            continue
        outside_total += outside
        if outside and drop_outside_shard:  # the KCL's rule, asked for: drop it whole
            dropped += 1
            dropped_records += len(user)
            continue
        extend(user)
        aggregates += 1
        user_records += len(user)
    if stats is not None:
        stats.add(
            aggregates=aggregates,
            user_records=user_records,
            aggregates_dropped=dropped,
            user_records_dropped=dropped_records,
            malformed_aggregates=malformed,
            user_records_outside_shard=outside_total,
        )
    return out


#: Input records per :func:`deaggregate` call in :func:`iter_deaggregate`: enough that
#: the call's set-up is nothing per plain record, few enough that a consumer that drops
#: each user record keeps only a few thousand alive.
_CHUNK = 8


def iter_deaggregate(
    records: Iterable[Any],
    starting_hash_key: Optional[Any] = None,
    ending_hash_key: Optional[Any] = None,
    *,
    shard_id: Optional[str] = None,
    stream_name: Optional[str] = None,
    stats: Optional[DeaggregationStats] = None,
    drop_outside_shard: bool = False,
) -> Iterator:
    """:func:`deaggregate` as a generator, for consumers that handle one user record at a
    time: the user records of a few input records at a time, so the memory held is that of
    a few aggregates, not of the whole page. Same arguments, records, order and counts.
    """
    source = iter(records)
    while True:
        chunk = list(islice(source, _CHUNK))
        if not chunk:
            return
        yield from deaggregate(
            chunk,
            starting_hash_key,
            ending_hash_key,
            shard_id=shard_id,
            stream_name=stream_name,
            stats=stats,
            drop_outside_shard=drop_outside_shard,
        )


def _general(
    view: Any,
    pks: list,
    sequence_number: str,
    arrival: Any,
    shard_id: Optional[str],
    stream_name: Optional[str],
    check_keys: bool,
    check_range: bool,
    low: int,
    high: int,
    low_digest: bytes,
    high_digest: bytes,
) -> tuple:
    """(user records, how many lie outside the range) of any aggregate, record by record.

    Raises IndexError, DecodeError or MalformedAggregate for an aggregate that cannot be read.
    """
    md5 = new_md5
    ehks = key_table(view.explicit_hash_key_table)
    if check_keys:
        pk_ok = [low_digest <= md5(k.encode()).digest() <= high_digest for k in pks]
    else:
        pk_ok = [True] * len(pks)
    # Non-numeric keys in the table fail as the fast path's do.
    ehk_ok = [low <= parse_hash_key(k) <= high for k in ehks] if check_range else [True] * len(ehks)
    user: list = []
    append = user.append
    outside = 0
    for sub, raw in enumerate(view.records):
        # Inline: 08 <pk index < 128> 1A <length: 1 or 2 bytes> <data>, the rest parsed.
        if raw[0] == 8 and raw[1] < 128 and raw[2] == 26:
            n = raw[3]
            if n < 128:
                offset, length = 4, n
            else:
                offset, length = 5, (n & 127) | raw[4] << 7
            if raw[offset - 1] < 128 and len(raw) == offset + length:
                pki = raw[1]
                if not pk_ok[pki]:
                    outside += 1
                append(
                    _make(
                        (
                            raw[offset:],
                            pks[pki],
                            sequence_number,
                            sub,
                            None,
                            arrival,
                            shard_id,
                            stream_name,
                        )
                    )
                )
                continue
        parsed = UserRecordMessage.FromString(raw)
        if not parsed.IsInitialized():  # the KCL's Java parser rejects these
            raise MalformedAggregate("a user record lacks a required field")
        pki = parsed.partition_key_index
        if parsed.HasField("explicit_hash_key_index"):
            ehki = parsed.explicit_hash_key_index
            if not ehk_ok[ehki]:
                outside += 1
            ehk: Optional[str] = ehks[ehki]
        else:
            if not pk_ok[pki]:
                outside += 1
            ehk = None
        append(
            _make(
                (parsed.data, pks[pki], sequence_number, sub, ehk, arrival, shard_id, stream_name)
            )
        )
    return user, outside
