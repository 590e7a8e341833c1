"""What a lease coordinator tells its owner: a lease gained, lost, or being handed off.

createStream's receiver starts and stops a shard's reads on these; the kcl daemon starts
and ends a child process. Each listener is optional and is called outside every lease's
write lock; one that raises never stops the coordinator.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Callable, Optional

from .lease import Lease

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LeaseListeners:
    """The owner's callbacks; None: nobody is told."""

    #: A lease taken (or assigned by a KCL 3.x leader), told on the taker's thread before
    #: it is read. If it raises, the lease is released and not taken again for three
    #: taker passes (the application cannot read it).
    on_lease_gained: Optional[Callable[[Lease], None]] = None
    #: ``(lease key, reason)``: a lease lost, fenced, released, or handed off.
    on_lease_lost: Optional[Callable[[str, str], None]] = None
    #: ``(lease key, new owner)``: a KCL 3.x leader began handing the lease off; the owner
    #: checkpoints and calls :meth:`~.coordinator.LeaseCoordinator.hand_off`. None (or a
    #: listener that raises): the lease is transferred at once.
    on_lease_handoff: Optional[Callable[[str, str], None]] = None

    def tell_lost(self, key: str, reason: str) -> None:
        """Tell the lost listener; a listener that raises is logged, never raised."""
        if self.on_lease_lost is not None:
            try:
                self.on_lease_lost(key, reason)
            except Exception:
                log.exception("lease-lost listener failed for %s", key)
