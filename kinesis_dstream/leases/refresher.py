"""What the lease protocol needs from a lease store (the KCL's ``LeaseRefresher``).

:class:`~.dynamodb.LeaseTable` implements it on DynamoDB, and
:class:`~.memory.InMemoryLeaseRefresher` in memory for tests. Every write is
conditional: creating on the key being absent; renewing, taking, evicting, checkpointing
and deleting on the counter the caller last saw (and, where it matters, on the owner).
A write that loses a race returns None (False for create and delete) and writes nothing:
the caller's view was stale. Store failures raise errors of :mod:`kinesis_dstream.errors`.
"""

from __future__ import annotations

from typing import Optional, Protocol, runtime_checkable

from ..esn import ExtendedSequenceNumber
from .lease import Lease


@runtime_checkable
class LeaseRefresher(Protocol):
    """Reads and conditionally writes the leases of one application."""

    table_name: str

    @property
    def writes(self) -> int:
        """Conditional writes made so far (won or lost): the store's write load."""
        ...

    @property
    def max_concurrency(self) -> Optional[int]:
        """Calls that may run at once without queueing in the client (None: no limit)."""
        ...

    def exists(self) -> bool:
        """The store (table) exists."""
        ...

    def create_if_missing(self, timeout_s: float = ...) -> bool:
        """Create the store unless it exists and wait until usable; True if created."""
        ...

    def list_leases(self) -> list[Lease]:
        """Every lease, sorted by key, read consistently."""
        ...

    def get_lease(self, lease_key: str) -> Optional[Lease]:
        """One lease read consistently, or None if absent."""
        ...

    def get_lease_once(self, lease_key: str) -> Optional[Lease]:
        """:meth:`get_lease` in one attempt, no retry: a check inside a renewal's budget."""
        ...

    def create_lease(self, lease: Lease) -> bool:
        """Write a new lease unless one exists with its key (then False)."""
        ...

    def renew(self, lease: Lease, throughput_kbps: Optional[float] = None) -> Optional[Lease]:
        """Counter + 1 if counter and owner (``checkpointOwner`` while handing off) are
        unchanged; in a KCL 3.x fleet also the lease's throughput."""
        ...

    def transfer(self, lease: Lease) -> Optional[Lease]:
        """End a KCL 3.x handoff: the lease stays with ``lease.lease_owner`` (the new
        owner), ``checkpointOwner`` goes, if counter and both owners are unchanged."""
        ...

    def take(self, lease: Lease, owner: str) -> Optional[Lease]:
        """Make ``owner`` the owner (counter + 1) if the counter is unchanged."""
        ...

    def evict(self, lease: Lease) -> Optional[Lease]:
        """Remove the owner (counter + 1) if counter and owner are unchanged."""
        ...

    def checkpoint(
        self,
        lease: Lease,
        esn: ExtendedSequenceNumber,
        child_shard_ids: Optional[frozenset] = None,
    ) -> Optional[Lease]:
        """Record ``esn`` (and children at shard end) if counter and owner are unchanged."""
        ...

    def reset_checkpoint(self, lease: Lease, esn: ExtendedSequenceNumber) -> Optional[Lease]:
        """Rewrite the checkpoint and remove the owner if the counter is unchanged."""
        ...

    def delete(self, lease: Lease) -> bool:
        """Delete the lease if its counter is unchanged."""
        ...
