"""Where a shard read starts: an iterator type with its argument, or a checkpoint.

A :class:`StartPosition` is a small frozen value that travels into Spark tasks; resuming
from a checkpoint starts AT its sequence number and drops every user record at or before
it (``drop_through``): that is how a KPL aggregate is resumed mid-way. Moved out of
``reader.py`` (which re-exports both names) to keep that module to reading.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Optional

from ..esn import ExtendedSequenceNumber, is_sequence_number

ITERATOR_TYPES = (
    "TRIM_HORIZON",
    "LATEST",
    "AT_TIMESTAMP",
    "AT_SEQUENCE_NUMBER",
    "AFTER_SEQUENCE_NUMBER",
)


#: Sub-sequence number meaning "every user record of this outer record is consumed".
WHOLE_RECORD = 2**31 - 1


def esn_key(sequence_number: str, sub_sequence_number: int = 0) -> tuple:
    """Sort key of a numeric extended sequence number: integers, never strings."""
    return (int(sequence_number), sub_sequence_number)


def records_after(users: list, esn: tuple) -> list:
    """The user records whose ESN is after ``esn``: what is left of a partly read aggregate."""
    return [u for u in users if esn_key(u.sequence_number, u.sub_sequence_number) > esn]


def records_through(users: list, esn: tuple) -> list:
    """The user records whose ESN is at or before ``esn`` (an inclusive range end)."""
    return [u for u in users if esn_key(u.sequence_number, u.sub_sequence_number) <= esn]


def consumed_through(last_raw_sequence: int, last_delivered: Optional[tuple]) -> tuple:
    """The ESN a whole page is consumed through.

    The last user record delivered if it came from the page's last raw record, else the
    whole last raw record (its user records were dropped or outside the hash range).
    """
    if last_delivered is not None and last_delivered[0] == last_raw_sequence:
        return last_delivered
    return (last_raw_sequence, WHOLE_RECORD)


@dataclass(frozen=True)
class StartPosition:
    """Where a reader starts. Build one with the class methods."""

    iterator_type: str
    sequence_number: Optional[str] = None
    timestamp: Optional[datetime] = None
    #: Drop user records at or before this (sequence, sub-sequence): checkpoint resume.
    drop_through: Optional[tuple] = None

    def __post_init__(self) -> None:
        if self.iterator_type not in ITERATOR_TYPES:
            raise ValueError(
                f"unknown iterator type {self.iterator_type!r}; "
                f"accepted: {', '.join(ITERATOR_TYPES)}"
            )
        needs_sequence = self.iterator_type in ("AT_SEQUENCE_NUMBER", "AFTER_SEQUENCE_NUMBER")
        if needs_sequence and not is_sequence_number(self.sequence_number):
            raise ValueError(
                f"{self.iterator_type} needs a numeric sequence number (ASCII digits), "
                f"got {str(self.sequence_number)[:200]!r}"
            )
        if self.iterator_type == "AT_TIMESTAMP" and self.timestamp is None:
            raise ValueError("AT_TIMESTAMP needs a timestamp")

    @classmethod
    def trim_horizon(cls) -> StartPosition:
        return cls("TRIM_HORIZON")

    @classmethod
    def latest(cls) -> StartPosition:
        return cls("LATEST")

    @classmethod
    def at_timestamp(cls, timestamp: datetime) -> StartPosition:
        if timestamp.tzinfo is None:
            raise ValueError(f"AT_TIMESTAMP needs a timezone-aware datetime, got {timestamp!r}")
        return cls("AT_TIMESTAMP", timestamp=timestamp)

    @classmethod
    def at_sequence_number(cls, sequence_number: str) -> StartPosition:
        return cls("AT_SEQUENCE_NUMBER", sequence_number)

    @classmethod
    def after_sequence_number(cls, sequence_number: str) -> StartPosition:
        return cls("AFTER_SEQUENCE_NUMBER", sequence_number)

    @classmethod
    def at_esn(cls, sequence_number: str, sub_sequence_number: int = 0) -> StartPosition:
        """Start exactly at (sequence, sub-sequence): a recorded range's first record."""
        if sub_sequence_number == 0:
            return cls.at_sequence_number(sequence_number)
        return cls(
            "AT_SEQUENCE_NUMBER",
            sequence_number,
            drop_through=esn_key(sequence_number, sub_sequence_number - 1),
        )

    @classmethod
    def after_checkpoint(cls, sequence_number: str, sub_sequence_number: int = 0) -> StartPosition:
        """Resume after a checkpoint: AT its sequence number, dropping ESNs <= it (so the
        record read first proves the position is still retained)."""
        return cls(
            "AT_SEQUENCE_NUMBER",
            sequence_number,
            drop_through=esn_key(sequence_number, sub_sequence_number),
        )

    @classmethod
    def from_checkpoint(
        cls, checkpoint: ExtendedSequenceNumber, timestamp: Optional[datetime] = None
    ) -> Optional[StartPosition]:
        """Where to read a leased shard from; None at SHARD_END (nothing left to read).

        A numeric checkpoint resumes after it; the sentinels start where they say, and
        AT_TIMESTAMP needs the application's ``timestamp``.
        """
        if checkpoint.is_shard_end:
            return None
        if not checkpoint.is_sentinel:
            return cls.after_checkpoint(checkpoint.sequence_number, checkpoint.sub_sequence_number)
        if checkpoint.sequence_number == "AT_TIMESTAMP":
            if timestamp is None:
                raise ValueError("the lease's checkpoint is AT_TIMESTAMP: give the timestamp")
            return cls.at_timestamp(timestamp)
        return cls(checkpoint.sequence_number)

    def iterator_args(self) -> dict:
        """GetShardIterator's arguments for this start."""
        return self._as("ShardIteratorType", "StartingSequenceNumber")

    def starting_position(self) -> dict:
        """SubscribeToShard's ``StartingPosition`` for this start."""
        return self._as("Type", "SequenceNumber")

    def _as(self, type_key: str, sequence_key: str) -> dict:
        args: dict = {type_key: self.iterator_type}
        if self.sequence_number is not None:
            args[sequence_key] = self.sequence_number
        if self.timestamp is not None:
            args["Timestamp"] = self.timestamp
        return args
