"""The common layout of a KPL user record, read without protobuf.

``08 <partition key index> [10 <explicit hash key index>] 1A <data length> <data>``: what
every KPL and aws-kinesis-agg writer emits. Reading it with a short loop over bytes skips
a protobuf message per user record; anything else (tags, other field orders, longer
varints) makes the split answer None and the caller parses record by record.
"""

from __future__ import annotations

from typing import Any, Optional


def split_common(raws: Any, pks: list) -> Optional[tuple]:
    """(data list, partition key list) if every user record has the common layout, else None.

    The layout: ``08 <partition key index> 1A <data length> <data>``, each varint of at
    most two bytes and nothing after the data. An index past the key table raises
    IndexError (a malformed aggregate), as a full parse would.
    """
    datas: list = []
    keys: list = []
    add_data = datas.append
    add_key = keys.append
    for raw in raws:
        if raw[0] != 8:
            return None
        pki = raw[1]
        if pki < 128:
            at = 2
        else:
            high_bits = raw[2]
            if high_bits > 127:
                return None
            pki = (pki & 127) | high_bits << 7
            at = 3
        if raw[at] != 26:
            return None
        length = raw[at + 1]
        if length < 128:
            at += 2
        else:
            high_bits = raw[at + 2]
            if high_bits > 127:
                return None
            length = (length & 127) | high_bits << 7
            at += 3
        if len(raw) - at != length:
            return None
        add_data(raw[at:])
        add_key(pks[pki])
    return datas, keys, None


def split_keyed(raws: Any, pks: list, ehks: list) -> Optional[tuple]:
    """(data list, partition key list, explicit hash key list) of an aggregate with an
    explicit hash key table, if every user record has the common layout, else None.

    The layout: ``08 <partition key index> [10 <explicit hash key index>] 1A <data length>
    <data>``, each varint of at most two bytes and nothing after the data; a user record
    without the optional field gets None. An index past a table raises IndexError.
    """
    datas: list = []
    keys: list = []
    hashes: list = []
    add_data = datas.append
    add_key = keys.append
    add_hash = hashes.append
    for raw in raws:
        if raw[0] != 8:
            return None
        pki = raw[1]
        if pki < 128:
            at = 2
        else:
            high_bits = raw[2]
            if high_bits > 127:
                return None
            pki = (pki & 127) | high_bits << 7
            at = 3
        tag = raw[at]
        if tag == 16:
            ehki = raw[at + 1]
            if ehki < 128:
                at += 2
            else:
                high_bits = raw[at + 2]
                if high_bits > 127:
                    return None
                ehki = (ehki & 127) | high_bits << 7
                at += 3
            add_hash(ehks[ehki])
            tag = raw[at]
        else:
            add_hash(None)
        if tag != 26:
            return None
        length = raw[at + 1]
        if length < 128:
            at += 2
        else:
            high_bits = raw[at + 2]
            if high_bits > 127:
                return None
            length = (length & 127) | high_bits << 7
            at += 3
        if len(raw) - at != length:
            return None
        add_data(raw[at:])
        add_key(pks[pki])
    return datas, keys, hashes


def count_outside(keys: list, hashes: list, bad_keys: set, bad_hashes: set) -> int:
    """User records whose effective hash key is outside the range: an explicit hash key
    decides when present, else the partition key."""
    return sum(
        1
        for key, hash_key in zip(keys, hashes)
        if (key in bad_keys if hash_key is None else hash_key in bad_hashes)
    )
