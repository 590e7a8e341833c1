"""A recorded range read again, exactly: createStream's recomputed blocks and the
source's replayed batches both need it."""

from __future__ import annotations

from collections.abc import Iterator

from ..errors import RecordsLostError
from .reader import ShardReader


def replay_range(
    reader: ShardReader, until: tuple, records: int, what: str, *, max_records: int
) -> Iterator[list]:
    """Read a recorded range again: chunks of user records from the reader's start
    (the range's first record) through ``until``, its last, inclusive.

    Raises :class:`~..errors.RecordsLostError` naming ``what`` (the stream, shard and
    range) when the replay does not give exactly ``records`` records ending at ``until``:
    records were trimmed (past the stream's retention) since the range was first read.
    Used by ``createStream``'s recomputed blocks and the source's replayed batches.
    """
    delivered = 0
    try:
        while reader.last_delivered is None or reader.last_delivered < until:
            batch = reader.read(max_records=max_records, until=until)
            if not batch.records:
                break  # caught up or at the shard's end before the recorded last record
            delivered += len(batch.records)
            yield batch.records
    finally:
        reader.close()
    if delivered != records or reader.last_delivered != until:
        raise RecordsLostError(
            f"replaying {what} gave {delivered} records where the first read gave "
            f"{records}: records were trimmed (past the stream's retention) since it "
            "was first read"
        )
