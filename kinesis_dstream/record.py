"""The record model: one user record as the consumer sees it."""

from __future__ import annotations

from datetime import datetime
from typing import NamedTuple, Optional

_REPR_DATA_BYTES = 32


class KinesisRecord(NamedTuple):
    """One user record: immutable, picklable and cheap (a named tuple).

    A KPL aggregate yields one ``KinesisRecord`` per user record, all sharing the outer
    ``sequence_number`` and ``approximate_arrival_timestamp``, with ``sub_sequence_number``
    0, 1, 2, ...; a plain record has sub-sequence number 0. ``explicit_hash_key`` is a
    decimal string or None.
    """

    data: bytes
    partition_key: str
    sequence_number: str
    sub_sequence_number: int = 0
    explicit_hash_key: Optional[str] = None
    approximate_arrival_timestamp: Optional[datetime] = None
    shard_id: Optional[str] = None
    stream_name: Optional[str] = None

    def __repr__(self) -> str:
        data = self.data
        shown = repr(data[:_REPR_DATA_BYTES])
        if len(data) > _REPR_DATA_BYTES:
            shown += f"...({len(data)} bytes)"
        return (
            f"KinesisRecord(stream_name={self.stream_name!r}, shard_id={self.shard_id!r}, "
            f"sequence_number={self.sequence_number!r}, "
            f"sub_sequence_number={self.sub_sequence_number}, "
            f"partition_key={self.partition_key!r}, "
            f"explicit_hash_key={self.explicit_hash_key!r}, "
            f"approximate_arrival_timestamp={self.approximate_arrival_timestamp!r}, "
            f"data={shown})"
        )
