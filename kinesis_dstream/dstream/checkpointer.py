"""Writing the checkpoints the ledger allows, one shard at a time.

Each shard is written on its own: one failure (the lease was lost, DynamoDB throttled
past its retries, ListShards failed while creating child leases) is logged and leaves
the other shards' checkpoints written; the next interval tries again.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from ..errors import CheckpointError, LeaseLostError
from ..esn import ESN_SHARD_END

log = logging.getLogger(__name__)


def write_checkpoints(
    targets: dict, children: dict, coordinator: Any, shard_sync: Any, observer: Any
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


def _create_children(shard_id: str, children: list, shard_sync: Any) -> None:
    log.info("shard %s finished; children %s", shard_id, children)
    if not children:
        return
    try:
        shard_sync.create_child_leases(children)
    except Exception as exc:  # the next shard sync creates them
        log.warning("could not create the child leases of %s now: %s", shard_id, exc)
