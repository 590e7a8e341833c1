"""Writing the checkpoints the ledger allows, one shard at a time.

Each shard is written on its own: one failure (the lease was lost, DynamoDB throttled
past its retries, ListShards failed while creating child leases) is logged and leaves
the other shards' checkpoints written; the next interval tries again.

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
from ..esn import ESN_SHARD_END, ExtendedSequenceNumber
from .receiver_state import ReceiverState


class CheckpointWriter(Protocol):
    """Writes a held shard's checkpoint (the lease coordinator)."""

    def checkpoint(
        self,
        shard_id: str,
        esn: ExtendedSequenceNumber,
        child_shard_ids: Optional[list] = None,
    ) -> Any: ...


class ChildLeases(Protocol):
    """Creates the leases of a finished shard's children (the shard sync)."""

    def create_child_leases(self, child_shard_ids: list) -> Any: ...


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
    shard_sync: ChildLeases
    observer: CheckpointObserver
    #: A batch whose completion is this late behind a later one is warned about.
    stalled_batch_ms: int

    def checkpoint_now(self) -> int:
        """Write every position the ledger allows and finish ended shards. Returns writes."""
        targets, children = self.state.checkpoint_targets()
        written = write_checkpoints(
            targets, children, self.coordinator, self.shard_sync, self.observer
        )
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
    shard_sync: ChildLeases,
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
                coordinator.checkpoint(shard_id, ESN_SHARD_END, shard_children)
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
        if position.is_shard_end:
            _create_children(shard_id, shard_children, shard_sync)
    return written


def _create_children(shard_id: str, children: list, shard_sync: ChildLeases) -> None:
    log.info("shard %s finished; children %s", shard_id, children)
    if not children:
        return
    try:
        shard_sync.create_child_leases(children)
    except Exception as exc:  # the next shard sync creates them
        log.warning("could not create the child leases of %s now: %s", shard_id, exc)
