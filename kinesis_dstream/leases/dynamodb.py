"""The lease table in DynamoDB: every write a compare-and-swap on ``leaseCounter``.

One table per application (and so per stream), hash key ``leaseKey``, on-demand
capacity, as the KCL creates it. Creating a lease is conditional on it not existing;
renewing, taking, evicting, checkpointing and deleting are conditional on the counter
the caller last saw (and, where it matters, on the owner). A write that loses a race
returns None: the caller's view is stale, nothing was written. Throttling and 5xx
answers are retried with a :class:`~.backoff.Backoff`: renewals and releases with a
short one that fits a failover third (see :mod:`.timing`), the rest with a patient one.

A retried write can lose its condition to its own first attempt (applied, but the
answer was lost to a timeout). As the KCL does, such a loss is checked by reading the
lease back: if it holds exactly what our write would have written, the write won.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from dataclasses import replace
from typing import Any, Callable, Optional

from botocore import xform_name

from ..backoff import Backoff, call_with_retry
from ..errors import KinesisServiceError, LeaseTableError
from ..esn import ExtendedSequenceNumber
from .conditions import counter_update, guard
from .lease import (
    CHECKPOINT,
    CHECKPOINT_OWNER,
    CHECKPOINT_SUB,
    CHILD_SHARD_IDS,
    LEASE_COUNTER,
    LEASE_KEY,
    LEASE_OWNER,
    OWNER_SWITCHES,
    THROUGHPUT_KBPS,
    Lease,
    UnreadableItems,
    is_lease_item,
)
from .timing import LeaseTimings

log = logging.getLogger(__name__)

#: Scans, takes, checkpoints and table calls: well inside a failover period (10 s).
DEFAULT_LEASE_BACKOFF = Backoff(
    initial_delay_s=0.05, max_delay_s=1.0, max_attempts=6, max_elapsed_s=3.0
)
#: Renewals and releases: inside the default failover time's renewal timeout.
DEFAULT_RENEW_BACKOFF = LeaseTimings.from_failover().renew_backoff
#: One attempt: the read-back that checks a retried write must not retry itself.
_READ_BACK = Backoff(max_attempts=1)
#: Leases per Scan page: the lease client's read timeout (half a second at the default
#: failover time) applies to every call, so a page must return within it however big
#: the table; ten round trips for a thousand leases, once per taker pass, cost little.
SCAN_PAGE_LEASES = 100
_CONDITION_FAILED = "ConditionalCheckFailedException"
_TABLE_WAIT_S = 120.0


class LeaseTable:
    """Reads and conditionally writes the leases of one application's table."""

    def __init__(
        self,
        client: Any,
        table_name: str,
        *,
        backoff: Backoff = DEFAULT_LEASE_BACKOFF,
        renew_backoff: Backoff = DEFAULT_RENEW_BACKOFF,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not table_name:
            raise ValueError("the lease table name (the application name) must not be empty")
        self.client = client
        self.table_name = table_name
        self._backoff = backoff
        self._renew_backoff = renew_backoff
        self._sleep = sleep
        self._writes = 0
        self._writes_lock = threading.Lock()
        self._unreadable = UnreadableItems(table_name)

    @property
    def writes(self) -> int:
        """Conditional writes made so far (won or lost): the lease table's write load."""
        with self._writes_lock:
            return self._writes

    @property
    def max_concurrency(self) -> Optional[int]:
        """The client's HTTP connection pool: more calls at once would queue or reconnect."""
        config = getattr(getattr(self.client, "meta", None), "config", None)
        return getattr(config, "max_pool_connections", None)

    def _count_write(self) -> None:
        with self._writes_lock:
            self._writes += 1

    def _call(
        self,
        operation: str,
        lease_key: Optional[str] = None,
        *,
        backoff: Optional[Backoff] = None,
        on_retry: Optional[Callable[[BaseException], None]] = None,
        **kwargs: Any,
    ) -> Any:
        method = getattr(self.client, xform_name(operation))
        return call_with_retry(
            functools.partial(method, TableName=self.table_name, **kwargs),
            backoff or self._backoff,
            operation=f"{operation} on lease table {self.table_name!r}",
            shard_id=lease_key,
            sleep=self._sleep,
            on_retry=on_retry,
            client=self.client,
        )

    # -- the table ----------------------------------------------------------------------

    def exists(self) -> bool:
        """True if the table exists; one with another key schema raises LeaseTableError."""
        try:
            self._check_schema(self._describe())
        except KinesisServiceError as exc:
            if exc.code == "ResourceNotFoundException":
                return False
            raise
        return True

    def _describe(self) -> dict:
        return self._call("DescribeTable")["Table"]

    def create_if_missing(self, timeout_s: float = _TABLE_WAIT_S) -> bool:
        """Create the table (on-demand) unless it exists; wait until ACTIVE. True if created.

        A table that exists with another key schema raises :class:`LeaseTableError`.
        """
        created = False
        if not self.exists():
            try:
                self._call(
                    "CreateTable",
                    AttributeDefinitions=[{"AttributeName": LEASE_KEY, "AttributeType": "S"}],
                    KeySchema=[{"AttributeName": LEASE_KEY, "KeyType": "HASH"}],
                    BillingMode="PAY_PER_REQUEST",
                )
                created = True
                log.info("created lease table %s", self.table_name)
            except KinesisServiceError as exc:
                if exc.code != "ResourceInUseException":  # another worker created it
                    raise
        deadline = time.monotonic() + timeout_s
        while True:
            table = self._describe()
            self._check_schema(table)
            if table.get("TableStatus") == "ACTIVE":
                return created
            if time.monotonic() > deadline:
                raise LeaseTableError(
                    f"lease table {self.table_name!r} still {table.get('TableStatus')} "
                    f"after {timeout_s:.0f}s"
                )
            time.sleep(0.1)

    def _check_schema(self, table: dict) -> None:
        keys = [(k["AttributeName"], k["KeyType"]) for k in table.get("KeySchema", [])]
        if keys != [(LEASE_KEY, "HASH")]:
            raise LeaseTableError(
                f"table {self.table_name!r} exists but is not a lease table: its key schema "
                f"is {keys}, a KCL lease table has only the hash key {LEASE_KEY!r}; "
                "use another application name"
            )

    # -- reads ----------------------------------------------------------------------------

    def list_leases(self) -> list:
        """Every lease, by a consistent paginated scan; other KCL item types are skipped,
        and so is a lease item this library cannot read (a checkpoint that is no sequence
        number, which the Java KCL writes as a child gave it): one warning a key and
        reason, the other leases go on (one bad item never stops the table's workers)."""
        leases = []
        kwargs: dict = {"ConsistentRead": True, "Limit": SCAN_PAGE_LEASES}
        while True:
            page = self._call("Scan", **kwargs)
            for item in page.get("Items", []):
                if is_lease_item(item):
                    lease = self._unreadable.lease_of(item)
                    if lease is not None:
                        leases.append(lease)
            start = page.get("LastEvaluatedKey")
            if not start:
                return sorted(leases, key=lambda lease: lease.lease_key)
            kwargs["ExclusiveStartKey"] = start

    def get_lease_once(self, lease_key: str) -> Optional[Lease]:
        """One consistent read, one attempt (within the lease client's read timeout)."""
        return self.get_lease(lease_key, backoff=_READ_BACK)

    def get_lease(self, lease_key: str, *, backoff: Optional[Backoff] = None) -> Optional[Lease]:
        item = self._call(
            "GetItem", lease_key, backoff=backoff, Key=_key(lease_key), ConsistentRead=True
        ).get("Item")
        if not item or not is_lease_item(item):
            return None
        try:
            return Lease.from_item(item)
        except ValueError as exc:
            raise LeaseTableError(
                f"table {self.table_name!r}: lease {lease_key} cannot be read ({exc})"
            ) from None

    # -- conditional writes ---------------------------------------------------------------

    def create_lease(self, lease: Lease) -> bool:
        """Write a new lease if none exists with its key. False if one already does."""
        return self._conditional(
            "PutItem",
            lease.lease_key,
            Item=lease.to_item(),
            ConditionExpression="attribute_not_exists(#key)",
            ExpressionAttributeNames={"#key": LEASE_KEY},
        )

    def renew(
        self, lease: Lease, throughput_kbps: Optional[float] = None
    ) -> Optional[Lease]:
        """Bump the counter of a lease we own; None if it moved or changed owner.

        In a KCL 3.x fleet the owner also writes the lease's ``throughputKBps`` (the
        leader balances by it). While we hand the lease off (``checkpoint_owner`` is us)
        the guard is ``checkpointOwner`` instead of ``leaseOwner``, as the KCL renews a
        lease during its graceful shutdown. Uses the short renewal budget: a renewal that
        fails is retried by the next renewal pass, a third of a failover period later.
        """
        set_ = {}
        if throughput_kbps is not None:
            set_[THROUGHPUT_KBPS] = {"N": f"{throughput_kbps:.6f}"}
        return self._update(lease, set_=set_, backoff=self._renew_backoff, **guard(lease))

    def take(self, lease: Lease, owner: str) -> Optional[Lease]:
        """Make ``owner`` the owner (taking an expired lease or stealing one); a KCL 3.x
        handoff left unfinished (``checkpointOwner``) ends with it."""
        switches = lease.owner_switches_since_checkpoint + (lease.lease_owner != owner)
        return self._update(
            lease,
            set_={LEASE_OWNER: {"S": owner}, OWNER_SWITCHES: {"N": str(switches)}},
            remove=(CHECKPOINT_OWNER,),
            changes={
                "lease_owner": owner,
                "owner_switches_since_checkpoint": switches,
                "checkpoint_owner": None,
            },
        )

    def evict(self, lease: Lease) -> Optional[Lease]:
        """Remove the owner (a graceful release) so another worker may take it at once."""
        return self._update(
            lease,
            set_={},
            remove=(LEASE_OWNER, CHECKPOINT_OWNER),
            owner_must_be=lease.lease_owner,
            changes={"lease_owner": None, "checkpoint_owner": None},
            backoff=self._renew_backoff,
        )

    def transfer(self, lease: Lease) -> Optional[Lease]:
        """End a KCL 3.x graceful handoff as its old owner: the lease goes to the owner
        the leader named (``lease.lease_owner``) and ``checkpointOwner`` goes (the KCL's
        ``assignLease``, conditional on both owners)."""
        switches = lease.owner_switches_since_checkpoint + 1
        return self._update(
            lease,
            set_={OWNER_SWITCHES: {"N": str(switches)}},
            remove=(CHECKPOINT_OWNER,),
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
        """Record ``esn`` (and, at shard end, the children) on a lease we own (or hand
        off: then ``checkpointOwner`` must still be us)."""
        set_: dict = {
            CHECKPOINT: {"S": esn.sequence_number},
            CHECKPOINT_SUB: {"N": str(esn.sub_sequence_number)},
            OWNER_SWITCHES: {"N": "0"},
        }
        changes: dict = {"checkpoint": esn, "owner_switches_since_checkpoint": 0}
        if child_shard_ids:
            set_[CHILD_SHARD_IDS] = {"SS": sorted(child_shard_ids)}
            changes["child_shard_ids"] = frozenset(child_shard_ids)
        return self._update(lease, set_=set_, changes=changes, **guard(lease))

    def reset_checkpoint(self, lease: Lease, esn: ExtendedSequenceNumber) -> Optional[Lease]:
        """Rewrite a stopped application's checkpoint and free the lease (operator reset)."""
        return self._update(
            lease,
            set_={
                CHECKPOINT: {"S": esn.sequence_number},
                CHECKPOINT_SUB: {"N": str(esn.sub_sequence_number)},
                OWNER_SWITCHES: {"N": "0"},
            },
            remove=(LEASE_OWNER,),
            changes={"checkpoint": esn, "owner_switches_since_checkpoint": 0, "lease_owner": None},
        )

    def delete(self, lease: Lease) -> bool:
        """Delete a lease if its counter has not moved since the caller read it."""
        return self._conditional(
            "DeleteItem",
            lease.lease_key,
            Key=_key(lease.lease_key),
            ConditionExpression="#counter = :expected",
            ExpressionAttributeNames={"#counter": LEASE_COUNTER},
            ExpressionAttributeValues={":expected": {"N": str(lease.lease_counter)}},
        )

    def _update(
        self,
        lease: Lease,
        *,
        set_: dict,
        remove: tuple = (),
        owner_must_be: Optional[str] = None,
        checkpoint_owner_must_be: Optional[str] = None,
        changes: Optional[dict] = None,
        backoff: Optional[Backoff] = None,
    ) -> Optional[Lease]:
        """One UpdateItem: SET ``set_`` and counter+1, REMOVE ``remove``, if unchanged."""
        expressions = counter_update(
            lease.lease_counter,
            set_=set_,
            remove=remove,
            owner_must_be=owner_must_be,
            checkpoint_owner_must_be=checkpoint_owner_must_be,
        )
        retried: list = []
        won = self._conditional(
            "UpdateItem",
            lease.lease_key,
            backoff=backoff,
            on_retry=retried.append,
            Key=_key(lease.lease_key),
            **expressions,
        )
        written = replace(lease, lease_counter=lease.lease_counter + 1, **(changes or {}))
        if won:
            return written
        if retried and self._holds(written):
            log.info(
                "write to lease %s lost its condition after a retry, but the table holds "
                "what it wrote: an earlier attempt landed (recovered)",
                lease.lease_key,
            )
            return written
        return None

    def _holds(self, written: Lease) -> bool:
        """The table holds ``written``'s counter, owner and checkpoint (one read, no retry)."""
        now = self.get_lease_once(written.lease_key)
        return (
            now is not None
            and now.lease_counter == written.lease_counter
            and now.lease_owner == written.lease_owner
            and now.checkpoint == written.checkpoint
        )

    def _conditional(
        self,
        operation: str,
        lease_key: str,
        *,
        backoff: Optional[Backoff] = None,
        on_retry: Optional[Callable[[BaseException], None]] = None,
        **kwargs: Any,
    ) -> bool:
        """One conditional write: True if it landed, False if its condition failed."""
        self._count_write()
        try:
            self._call(operation, lease_key, backoff=backoff, on_retry=on_retry, **kwargs)
        except KinesisServiceError as exc:
            if exc.code == _CONDITION_FAILED:
                return False
            raise
        return True


def _key(lease_key: str) -> dict:
    return {LEASE_KEY: {"S": lease_key}}
