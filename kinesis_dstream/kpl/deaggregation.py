"""KPL de-aggregation, as the KCL does it but for two deliberate differences.

Format: ``F3 89 9A C2`` + protobuf ``AggregatedRecord`` + MD5 (16 bytes) of the protobuf
bytes. The KCL's rules (``AggregatorUtil.deaggregate``), which :func:`deaggregate` keeps
but for the two differences below:

- data shorter than the magic, another magic, nothing after the magic but the digest,
  a wrong MD5 or a protobuf that does not parse: the record is a plain record;
- user records keep the outer sequence number and arrival time and get sub-sequence
  numbers 0, 1, 2, ...; an explicit hash key applies only when its index field is present;
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

Decoding: upb (protobuf's C backend) splits the aggregate into its key tables and each
user record's bytes; the common record layouts (partition key index < 128, no explicit
hash key, data under 16 KiB) are read inline, anything else by a full protobuf parse.
This measured fastest (README, ``benchmarks/bench_aggregation.py``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any, Optional

from google.protobuf import message

from ..record import KinesisRecord
from .format import (
    DIGEST_SIZE,
    MAGIC,
    MAX_HASH_KEY,
    DeaggregationStats,
    _AggregatedRecordView,
    _Malformed,
    _new_md5,
    _Record,
)

log = logging.getLogger(__name__)


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
    high = int(ending_hash_key) if ending_hash_key is not None else MAX_HASH_KEY
    # Every MD5 is in [0, 2**128 - 1]: partition keys need hashing only for a narrower range.
    check_keys = low > 0 or high < MAX_HASH_KEY
    check_range = starting_hash_key is not None or ending_hash_key is not None
    low_digest = low.to_bytes(16, "big") if check_keys else b""
    high_digest = high.to_bytes(16, "big") if check_keys else b""
    md5 = _new_md5
    new = tuple.__new__
    out: list = []
    aggregates = user_records = dropped = dropped_records = malformed = outside_total = 0
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
        outside = 0  # user records of this aggregate outside the shard's range
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
                            outside += 1
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
                        outside += 1
                    ehk: Optional[str] = ehks[ehki]
                else:
                    if not pk_ok[pki]:
                        outside += 1
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
        outside_total += outside
        if outside and drop_outside_shard:  # the KCL's rule, asked for: drop it whole
            dropped += 1
            dropped_records += len(user)
            continue
        out.extend(user)
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


def _parse_hash_key(explicit_hash_key: str) -> int:
    try:
        return int(explicit_hash_key)
    except ValueError:
        raise _Malformed(f"explicit hash key {explicit_hash_key!r} is not a number") from None
