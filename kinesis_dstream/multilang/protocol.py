"""The order of messages and replies with one child, as the Java ``MultiLangProtocol``.

Each call writes one message and then reads the child's messages until its ``status``:
a ``checkpoint`` request in between is judged by the :class:`~.checkpointer.
ChildCheckpointer` and answered at once (with the error name on failure); a ``status``
for another action is a :class:`~.messages.ProtocolError`. ``initialize`` and
``leaseLost`` have no checkpointer: a request then is answered ``InvalidStateException``.
What a shard's end, a lost lease and a stop become depends on the child's protocol
version (:mod:`.protocol_version`): a KCL 1.x child gets ``shutdown`` TERMINATE or ZOMBIE,
and ``shutdownRequested`` only if it knows it.

A child that does not answer: with ``timeout_s`` (the properties' ``timeoutInSeconds``)
the call raises :class:`ChildHung` after it, as the Java daemon halts; without it the
call keeps waiting, as the Java daemon does, warning every ``warn_every_s``, until the
``abort`` event is set (a stop), then raises :class:`ChildHung`.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from typing import Any, Callable, Optional

from . import messages
from .checkpointer import INVALID_STATE, ChildCheckpointer
from .messages import CheckpointRequest, ProtocolError, Status
from .protocol_version import DIALECTS, ProtocolVersion

log = logging.getLogger(__name__)

#: How often a wait re-checks its bounds.
_POLL_S = 0.2


class ChildHung(Exception):
    """The child did not answer within the bound."""


class ShardProtocol:
    """One child's conversation. ``send`` writes a message; ``receive(timeout_s)`` returns
    the next message, raises ``queue.Empty`` after the timeout and
    :class:`~.messages.ChildGone` at the end of the child's output."""

    def __init__(
        self,
        shard_id: str,
        send: Callable[[dict], None],
        receive: Callable[[float], Any],
        checkpointer: ChildCheckpointer,
        *,
        timeout_s: Optional[float] = None,
        warn_every_s: float = 60.0,
        abort: Optional[threading.Event] = None,
        clock: Callable[[], float] = time.monotonic,
        version: ProtocolVersion = ProtocolVersion.KCL_2X,
    ) -> None:
        self.shard_id = shard_id
        self.version = version
        self.dialect = DIALECTS[version]
        self._send = send
        self._receive = receive
        self.checkpointer = checkpointer
        self.timeout_s = timeout_s
        self.warn_every_s = warn_every_s
        self.abort = abort or threading.Event()
        self._clock = clock

    def initialize(self, sequence_number: str, sub_sequence_number: int) -> None:
        self._call(
            messages.initialize(self.shard_id, sequence_number, sub_sequence_number),
            checkpoints=False,
        )

    def process_records(self, records: list, millis_behind_latest: Optional[int]) -> None:
        """Hand a non-empty batch of :class:`~..record.KinesisRecord` to the child."""
        from ..esn import ExtendedSequenceNumber

        last = records[-1]
        self.checkpointer.given(
            ExtendedSequenceNumber(last.sequence_number, last.sub_sequence_number)
        )
        self._call(messages.process_records(records, millis_behind_latest), checkpoints=True)

    def lease_lost(self, timeout_s: Optional[float] = None) -> None:
        """``leaseLost``, or KCL 1.x's ``shutdown`` ZOMBIE (checkpoints: ShutdownException)."""
        self.checkpointer.lease_lost()
        dialect = self.dialect
        self._call(
            dialect.lease_lost, checkpoints=dialect.lease_lost_checkpoints, timeout_s=timeout_s
        )

    def shard_ended(self) -> None:
        """``shardEnded``, or KCL 1.x's ``shutdown`` TERMINATE: the child may checkpoint
        ``SHARD_END``."""
        self.checkpointer.shard_ended()
        self._call(self.dialect.shard_end, checkpoints=True)

    def shutdown_requested(self, timeout_s: Optional[float] = None) -> bool:
        """``shutdownRequested`` (the child may checkpoint); False, and nothing sent, for a
        child whose protocol has no such message (KCL 1.x before 1.7.6)."""
        message = self.dialect.shutdown_requested
        if message is None:
            return False
        self._call(message, checkpoints=True, timeout_s=timeout_s)
        return True

    def _call(self, message: dict, *, checkpoints: bool, timeout_s: Optional[float] = None) -> None:
        action = message["action"]
        self._send(message)
        bound = timeout_s if timeout_s is not None else self.timeout_s
        started = self._clock()
        warned_at = started
        while True:
            try:
                reply = self._receive(_POLL_S)
            except queue.Empty:
                now = self._clock()
                if bound is not None and now - started >= bound:
                    raise ChildHung(
                        f"the child of shard {self.shard_id} did not answer {action} within "
                        f"{bound:g}s"
                    ) from None
                if self.abort.is_set():
                    raise ChildHung(
                        f"the child of shard {self.shard_id} had not answered {action} when "
                        "the daemon stopped"
                    ) from None
                if now - warned_at >= self.warn_every_s:
                    warned_at = now
                    log.warning(
                        "the child of shard %s has not answered %s for %.0fs",
                        self.shard_id,
                        action,
                        now - started,
                    )
                continue
            if isinstance(reply, CheckpointRequest):
                if checkpoints:
                    error = self.checkpointer.checkpoint(
                        reply.sequence_number, reply.sub_sequence_number
                    )
                else:
                    log.error(
                        "the child of shard %s asked to checkpoint during %s: no checkpointer then",
                        self.shard_id,
                        action,
                    )
                    error = INVALID_STATE
                self._send(
                    messages.checkpoint_reply(
                        reply.sequence_number, reply.sub_sequence_number, error
                    )
                )
                continue
            if isinstance(reply, Status):
                if reply.response_for != action:
                    raise ProtocolError(
                        f"the child of shard {self.shard_id} answered status for "
                        f"{reply.response_for!r} while {action!r} was pending"
                    )
                return
            raise ProtocolError(
                f"unexpected message from the child of shard {self.shard_id}: {reply!r}"
            )
