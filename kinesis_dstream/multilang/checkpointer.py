"""A child's checkpoint requests judged as the KCL's checkpointer judges them.

One :class:`ChildCheckpointer` per child. A checkpoint must lie between the last
checkpoint and the largest position the child was given (the last record of the last
``processRecords``, or ``SHARD_END`` once ``shardEnded`` was sent), else nothing is
written and the child gets ``IllegalArgumentException``, the name the Java
``ShardRecordProcessorCheckpointer`` throws. Store errors map to the names kclpy's
``CheckpointError`` carries: a lost lease is ``ShutdownException``, throttling
``ThrottlingException``, an unavailable store ``KinesisClientLibDependencyException``;
a request while no checkpointer exists (``initialize``, ``leaseLost``) is
``InvalidStateException``, as in the Java ``MultiLangProtocol``.
"""

from __future__ import annotations

import logging
import threading
from typing import Callable, Optional, Union

from ..errors import (
    CheckpointError,
    KinesisServiceError,
    LeaseLostError,
    ThrottledError,
)
from ..esn import ESN_SHARD_END, ExtendedSequenceNumber

log = logging.getLogger(__name__)

ILLEGAL_ARGUMENT = "IllegalArgumentException"
INVALID_STATE = "InvalidStateException"
SHUTDOWN = "ShutdownException"
THROTTLING = "ThrottlingException"
DEPENDENCY = "KinesisClientLibDependencyException"


class ChildCheckpointer:
    """Checkpoint rules for one child; ``write`` persists a position (the lease CAS) and
    ``finish`` writes ``SHARD_END`` with the children. Both raise this library's errors."""

    def __init__(
        self,
        shard_id: str,
        initial: ExtendedSequenceNumber,
        write: Callable[[ExtendedSequenceNumber], object],
        finish: Callable[[], object],
    ) -> None:
        self.shard_id = shard_id
        self._write = write
        self._finish = finish
        self._lock = threading.Lock()
        self.last = initial
        self.largest = initial
        self.lost = False
        self.finished = False
        #: The last position given when the shard ended (None before): checkpointing it
        #: then checkpoints SHARD_END, as the KCL's ``advancePosition`` does.
        self.at_shard_end: Optional[ExtendedSequenceNumber] = None

    def given(self, esn: ExtendedSequenceNumber) -> None:
        """Records up to ``esn`` were handed to the child."""
        with self._lock:
            if self.largest < esn:
                self.largest = esn

    def shard_ended(self) -> None:
        with self._lock:
            self.at_shard_end = self.largest
            self.largest = ESN_SHARD_END

    def lease_lost(self) -> None:
        with self._lock:
            self.lost = True

    def checkpoint(
        self, sequence_number: Optional[str], sub_sequence_number: Union[int, str, None]
    ) -> Optional[str]:
        """Judge and write one request; returns None on success, else the error name.

        Without a sequence number the request is for the largest position given, whatever
        its sub-sequence number, as the Java daemon calls ``checkpoint()`` then. A sequence
        number must be one Kinesis could have given (:func:`~..esn.is_sequence_number`:
        ASCII digits) or a sentinel, the sub-sequence number an int in [0, 2**63 - 1]."""
        with self._lock:  # one request at a time per child (the child blocks anyway)
            if self.lost:
                return SHUTDOWN
            if sequence_number is None:
                target = self.largest
            else:
                try:
                    if isinstance(sub_sequence_number, str):  # another script's digits
                        raise ValueError("a sub-sequence number is ASCII digits")
                    target = ExtendedSequenceNumber(sequence_number, sub_sequence_number or 0)
                except (ValueError, TypeError) as exc:
                    log.warning(
                        "shard %s: refusing checkpoint %r/%r: %s",
                        self.shard_id,
                        sequence_number[:200],
                        sub_sequence_number,
                        exc,
                    )
                    return ILLEGAL_ARGUMENT
            if (
                target < self.last
                or self.largest < target
                or (target.is_sentinel and not target.is_shard_end and sequence_number is not None)
            ):
                log.warning(
                    "shard %s: refusing checkpoint %s: outside [last checkpoint %s, largest "
                    "position given %s]",
                    self.shard_id,
                    target,
                    self.last,
                    self.largest,
                )
                return ILLEGAL_ARGUMENT
            if target.is_sentinel and not target.is_shard_end:
                return None  # nothing read yet: the table already says where to start
            if target == self.at_shard_end and target != self.last:
                # (the KCL writes nothing for the value it last wrote, translated or not)
                target = ESN_SHARD_END
            try:
                if target.is_shard_end:
                    self._finish()
                    self.finished = True
                else:
                    self._write(target)
            except LeaseLostError as exc:
                log.warning("shard %s: checkpoint %s refused: %s", self.shard_id, target, exc)
                self.lost = True
                return SHUTDOWN
            except ThrottledError as exc:
                log.warning("shard %s: checkpoint %s throttled: %s", self.shard_id, target, exc)
                return THROTTLING
            except CheckpointError as exc:
                log.warning("shard %s: checkpoint %s refused: %s", self.shard_id, target, exc)
                return INVALID_STATE
            except KinesisServiceError as exc:
                log.warning("shard %s: checkpoint %s failed: %s", self.shard_id, target, exc)
                return DEPENDENCY
            self.last = target
            return None
