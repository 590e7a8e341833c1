"""Extended sequence numbers: a checkpoint position, ordered the way the KCL orders them.

``AT_TIMESTAMP`` < ``TRIM_HORIZON`` < ``LATEST`` < any numeric sequence number (compared
as integers: Kinesis sequence numbers run to 56 digits, and strings order them wrongly
whenever lengths differ) < ``SHARD_END``. Equal sequence numbers order by sub-sequence
number (a KPL user record's index inside its aggregate).

A sequence number is what Kinesis documents (:func:`is_sequence_number`): ASCII digits
only, so two spellings of one number (``"05"``, Arabic-Indic or fullwidth digits) never equal
``"5"`` here, and never reach a lease table whose readers Kinesis would then refuse.
"""

from __future__ import annotations

from functools import total_ordering
from typing import Optional

AT_TIMESTAMP = "AT_TIMESTAMP"
TRIM_HORIZON = "TRIM_HORIZON"
LATEST = "LATEST"
SHARD_END = "SHARD_END"
#: Sentinel checkpoints and their rank; numeric sequence numbers rank between LATEST and SHARD_END.
_SENTINEL_RANK = {AT_TIMESTAMP: 0, TRIM_HORIZON: 1, LATEST: 2, SHARD_END: 4}
_NUMERIC_RANK = 3
#: The longest sequence number Kinesis's pattern allows (``0|([1-9]\d{0,128})`` in its API
#: reference: ``SequenceNumberRange``, ``GetShardIterator``).
MAX_SEQUENCE_NUMBER_DIGITS = 129
#: The largest sub-sequence number: the Java KCL's is a ``long``.
MAX_SUB_SEQUENCE_NUMBER = 2**63 - 1


def is_sequence_number(text: object) -> bool:
    """Whether ``text`` is a Kinesis sequence number: ``0``, or 1 to 129 ASCII digits
    without a leading zero. The one test of a sequence number from outside the process."""
    return (
        isinstance(text, str)
        and 0 < len(text) <= MAX_SEQUENCE_NUMBER_DIGITS
        and text.isascii()  # str.isdigit alone takes any script's digits
        and text.isdigit()
        and (text[0] != "0" or text == "0")
    )


@total_ordering
class ExtendedSequenceNumber:
    """A sequence number or sentinel plus a sub-sequence number; immutable and hashable."""

    __slots__ = ("_key", "sequence_number", "sub_sequence_number")

    def __init__(self, sequence_number: str, sub_sequence_number: int = 0) -> None:
        if not isinstance(sequence_number, str):
            raise TypeError(f"sequence number must be a str, got {sequence_number!r}")
        if not isinstance(sub_sequence_number, int) or isinstance(sub_sequence_number, bool):
            raise TypeError(f"sub-sequence number must be an int, got {sub_sequence_number!r}")
        if sequence_number in _SENTINEL_RANK:
            key: tuple = (_SENTINEL_RANK[sequence_number], 0, sub_sequence_number)
        elif is_sequence_number(sequence_number):
            key = (_NUMERIC_RANK, int(sequence_number), sub_sequence_number)
        else:
            raise ValueError(
                f"not a sequence number (0, or up to 129 ASCII digits without a leading zero) "
                f"nor one of {', '.join(_SENTINEL_RANK)}: {sequence_number[:200]!r}"
            )
        if not 0 <= sub_sequence_number <= MAX_SUB_SEQUENCE_NUMBER:
            # (never a number's thousands of digits in a message)
            shown = sub_sequence_number if -(2**64) < sub_sequence_number < 2**64 else "more"
            raise ValueError(f"sub-sequence number must be in [0, 2**63 - 1], got {shown}")
        self.sequence_number = sequence_number
        self.sub_sequence_number = sub_sequence_number
        self._key = key

    @property
    def is_sentinel(self) -> bool:
        return self._key[0] != _NUMERIC_RANK

    @property
    def is_shard_end(self) -> bool:
        return self.sequence_number == SHARD_END

    def numeric_key(self) -> Optional[tuple]:
        """``(int(sequence), sub-sequence)`` as the reader uses; None for sentinels."""
        return None if self.is_sentinel else (self._key[1], self.sub_sequence_number)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ExtendedSequenceNumber):
            return NotImplemented
        return self._key == other._key

    def __lt__(self, other: ExtendedSequenceNumber) -> bool:
        if not isinstance(other, ExtendedSequenceNumber):
            return NotImplemented
        return self._key < other._key

    def __hash__(self) -> int:
        return hash(self._key)

    def __repr__(self) -> str:
        return f"ExtendedSequenceNumber({self.sequence_number!r}, {self.sub_sequence_number})"

    def __str__(self) -> str:
        if self.is_sentinel or not self.sub_sequence_number:
            return self.sequence_number
        return f"{self.sequence_number}/{self.sub_sequence_number}"

    def __reduce__(self) -> tuple:
        return (ExtendedSequenceNumber, (self.sequence_number, self.sub_sequence_number))


ESN_AT_TIMESTAMP = ExtendedSequenceNumber(AT_TIMESTAMP)
ESN_TRIM_HORIZON = ExtendedSequenceNumber(TRIM_HORIZON)
ESN_LATEST = ExtendedSequenceNumber(LATEST)
ESN_SHARD_END = ExtendedSequenceNumber(SHARD_END)
