"""Writing the checkpoints the ledger allows, one shard at a time.

Each shard is written on its own: one failure (the lease was lost, DynamoDB throttled
past its retries) is logged and leaves the other shards' checkpoints written; the next
interval tries again. A shard's end goes through the lease coordinator's one rule
(:meth:`~..leases.coordinator.LeaseCoordinator.shard_ended`): SHARD_END with the
children, their leases created and taken at once.

:class:`Checkpointer` asks the :class:`~.receiver_state.ReceiverState` for its targets,
writes them with no lock held (a DynamoDB write never holds up a round, a batch or a
lease renewal), then tells the state what was written.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any, Optional, Protocol

from ..errors import CheckpointError, LeaseLostError
from ..esn import ExtendedSequenceNumber
from .receiver_state import ReceiverState


class CheckpointWriter(Protocol):
    """Writes a held shard's checkpoint, or its end (the lease coordinator)."""

    def checkpoint(
        self,
        shard_id: str,
        esn: ExtendedSequenceNumber,
        child_shard_ids: Optional[list] = None,
    ) -> Any: ...

    def shard_ended(self, shard_id: str, child_shard_ids: list) -> Any: ...


class CheckpointObserver(Protocol):
    """Hears of each checkpoint written or refused, and of each pass."""

    def checkpoint_written(self, shard_id: str, seconds: float) -> None: ...

    def checkpoint_refused(self, shard_id: str, position: Any, exc: Exception) -> None: ...

    def checkpoint_pass(
        self, blocked: dict, stalled: list, paused_s: Optional[float] = None
    ) -> None: ...


@dataclass(frozen=True)
class Checkpointer:
    """Writes the positions one receiver's state allows; takes no lock of its own."""

    state: ReceiverState
    coordinator: CheckpointWriter
    observer: CheckpointObserver
    #: A batch whose completion is this late behind a later one is warned about.
    stalled_batch_ms: int

    def checkpoint_now(self) -> int:
        """Write every position the ledger allows and finish ended shards. Returns writes."""
        targets, children = self.state.checkpoint_targets()
        written = write_checkpoints(targets, children, self.coordinator, self.observer)
        self.state.checkpoints_written(written)
        return len(written)

    def checkpoint_pass(self) -> None:
        """One interval's pass: write, then name the blocked shards and stalled batches."""
        self.checkpoint_now()
        blocked, stalled = self.state.stuck(self.stalled_batch_ms)
        self.observer.checkpoint_pass(blocked, stalled, self.state.reading_paused_s())


log = logging.getLogger(__name__)


def write_checkpoints(
    targets: dict,
    children: dict,
    coordinator: CheckpointWriter,
    observer: CheckpointObserver,
) -> list:
    """Write each ``shard -> (generation, position)`` target; returns those written as
    ``(shard, generation, position)``. At SHARD_END the children are recorded on the
    lease and their leases created (or left to the next shard sync if that fails)."""
    written = []
    for shard_id, (generation, position) in sorted(targets.items()):
        started = time.monotonic()
        shard_children = list(children.get(shard_id, ()))
        try:
            if position.is_shard_end:
                coordinator.shard_ended(shard_id, shard_children)
            else:
                coordinator.checkpoint(shard_id, position)
        except (LeaseLostError, CheckpointError) as exc:
            observer.checkpoint_refused(shard_id, position, exc)
            continue
        except Exception as exc:
            log.warning(
                "checkpoint of shard %s at %s failed (retried next interval): %s",
                shard_id,
                position,
                exc,
            )
            continue
        written.append((shard_id, generation, position))
        observer.checkpoint_written(shard_id, time.monotonic() - started)
    return written
