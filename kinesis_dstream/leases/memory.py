"""A lease store in memory, with exactly the lease table's conditional semantics.

For tests of the lease protocol without servers: the same conditions as
:class:`~.dynamodb.LeaseTable` (create if absent; renew, evict and checkpoint if counter
and owner are unchanged; take and reset if the counter is unchanged; delete if the
counter is unchanged), the same counting of writes won or lost, and the same error for a
missing table. One lock makes every call atomic, like a single DynamoDB item write.
"""

from __future__ import annotations

import threading
from dataclasses import replace
from typing import Any, Optional

from ..errors import StreamNotFoundError
from ..esn import ExtendedSequenceNumber
from .conditions import guard
from .lease import Lease

_NOT_FOUND = "ResourceNotFoundException"


class InMemoryLeaseRefresher:
    """A thread-safe :class:`~.refresher.LeaseRefresher` holding leases in a dict."""

    max_concurrency: Optional[int] = None  # no client connection pool to queue on

    def __init__(self, table_name: str = "in-memory", *, exists: bool = True) -> None:
        if not table_name:
            raise ValueError("the lease table name (the application name) must not be empty")
        self.table_name = table_name
        self._exists = exists
        self._leases: dict = {}
        self._writes = 0
        self._lock = threading.Lock()

    @property
    def writes(self) -> int:
        with self._lock:
            return self._writes

    # -- the table ----------------------------------------------------------------------

    def exists(self) -> bool:
        with self._lock:
            return self._exists

    def create_if_missing(self, timeout_s: float = 0.0) -> bool:
        with self._lock:
            created, self._exists = not self._exists, True
            return created

    def _check_exists(self, operation: str, lease_key: Optional[str] = None) -> None:
        if not self._exists:  # what call_with_retry makes of ResourceNotFoundException
            raise StreamNotFoundError(
                f"not found: lease table {self.table_name!r} does not exist",
                operation=f"{operation} on lease table {self.table_name!r}",
                shard_id=lease_key,
                code=_NOT_FOUND,
            )

    # -- reads ----------------------------------------------------------------------------

    def list_leases(self) -> list:
        with self._lock:
            self._check_exists("Scan")
            return [self._leases[key] for key in sorted(self._leases)]

    def get_lease(self, lease_key: str) -> Optional[Lease]:
        with self._lock:
            self._check_exists("GetItem", lease_key)
            return self._leases.get(lease_key)

    # -- conditional writes ---------------------------------------------------------------

    def create_lease(self, lease: Lease) -> bool:
        with self._lock:
            self._check_exists("PutItem", lease.lease_key)
            self._writes += 1
            if lease.lease_key in self._leases:
                return False
            self._leases[lease.lease_key] = lease
            return True

    def get_lease_once(self, lease_key: str) -> Optional[Lease]:
        return self.get_lease(lease_key)

    def renew(self, lease: Lease, throughput_kbps: Optional[float] = None) -> Optional[Lease]:
        return self._update(lease, **guard(lease))

    def take(self, lease: Lease, owner: str) -> Optional[Lease]:
        switches = lease.owner_switches_since_checkpoint + (lease.lease_owner != owner)
        return self._update(
            lease,
            changes={
                "lease_owner": owner,
                "owner_switches_since_checkpoint": switches,
                "checkpoint_owner": None,
            },
        )

    def evict(self, lease: Lease) -> Optional[Lease]:
        return self._update(
            lease,
            owner_must_be=lease.lease_owner,
            changes={"lease_owner": None, "checkpoint_owner": None},
        )

    def transfer(self, lease: Lease) -> Optional[Lease]:
        switches = lease.owner_switches_since_checkpoint + 1
        return self._update(
            lease,
            owner_must_be=lease.lease_owner,
            checkpoint_owner_must_be=lease.checkpoint_owner,
            changes={"checkpoint_owner": None, "owner_switches_since_checkpoint": switches},
        )

    def checkpoint(
        self,
        lease: Lease,
        esn: ExtendedSequenceNumber,
        child_shard_ids: Optional[frozenset] = None,
    ) -> Optional[Lease]:
        changes: dict = {"checkpoint": esn, "owner_switches_since_checkpoint": 0}
        if child_shard_ids:
            changes["child_shard_ids"] = frozenset(child_shard_ids)
        return self._update(lease, changes=changes, **guard(lease))

    def reset_checkpoint(self, lease: Lease, esn: ExtendedSequenceNumber) -> Optional[Lease]:
        return self._update(
            lease,
            changes={"checkpoint": esn, "owner_switches_since_checkpoint": 0, "lease_owner": None},
        )

    def delete(self, lease: Lease) -> bool:
        with self._lock:
            self._check_exists("DeleteItem", lease.lease_key)
            self._writes += 1
            stored = self._leases.get(lease.lease_key)
            if stored is None or stored.lease_counter != lease.lease_counter:
                return False
            del self._leases[lease.lease_key]
            return True

    def _update(
        self,
        lease: Lease,
        *,
        owner_must_be: Optional[str] = None,
        checkpoint_owner_must_be: Optional[str] = None,
        changes: Optional[dict[str, Any]] = None,
    ) -> Optional[Lease]:
        """Counter + 1 and ``changes``, if the counter (and owner, when given) match.

        As in DynamoDB, a missing item fails the counter condition, and an owner
        condition is applied only when the caller's lease names an owner.
        """
        with self._lock:
            self._check_exists("UpdateItem", lease.lease_key)
            self._writes += 1
            stored = self._leases.get(lease.lease_key)
            if stored is None or stored.lease_counter != lease.lease_counter:
                return None
            if owner_must_be is not None and stored.lease_owner != owner_must_be:
                return None
            if (
                checkpoint_owner_must_be is not None
                and stored.checkpoint_owner != checkpoint_owner_must_be
            ):
                return None
            counter = lease.lease_counter + 1
            self._leases[lease.lease_key] = replace(
                stored, lease_counter=counter, **(changes or {})
            )
            return replace(lease, lease_counter=counter, **(changes or {}))
