"""A lease: one shard's row in the lease table, in the JVM KCL's attribute format.

The KCL (and so Spark's kinesis-asl) stores one item per shard in a DynamoDB table named
after the application. :class:`Lease` reads and writes exactly its attribute names, so a
table written by a Java worker is read here and vice versa; attributes we do not use
(``pendingCheckpoint*``, ``checkpointOwner``, ``throughputKBps``, ...) are kept in
:attr:`Lease.extra` and never rewritten.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Optional

from boto3.dynamodb.types import TypeDeserializer

from ..esn import ESN_SHARD_END, ESN_TRIM_HORIZON, ExtendedSequenceNumber

log = logging.getLogger(__name__)

LEASE_KEY = "leaseKey"
LEASE_OWNER = "leaseOwner"
LEASE_COUNTER = "leaseCounter"
OWNER_SWITCHES = "ownerSwitchesSinceCheckpoint"
CHECKPOINT = "checkpoint"
CHECKPOINT_SUB = "checkpointSubSequenceNumber"
PARENT_SHARD_IDS = "parentShardId"  # a string set, despite the singular name
CHILD_SHARD_IDS = "childShardIds"
STARTING_HASH_KEY = "startingHashKey"
ENDING_HASH_KEY = "endingHashKey"
#: KCL 3.x: the old owner while a graceful handoff runs (the leader set leaseOwner to the
#: new one), and the lease's throughput as the owner measured it.
CHECKPOINT_OWNER = "checkpointOwner"
THROUGHPUT_KBPS = "throughputKBps"

#: KCL 3.x keeps other kinds of items in the table; only "LEASE" (or no type) is a lease.
ENTITY_TYPE = "entityType"
LEASE_ENTITY = "LEASE"

_OURS = frozenset(
    {
        LEASE_KEY,
        LEASE_OWNER,
        CHECKPOINT_OWNER,
        LEASE_COUNTER,
        OWNER_SWITCHES,
        CHECKPOINT,
        CHECKPOINT_SUB,
        PARENT_SHARD_IDS,
        CHILD_SHARD_IDS,
        STARTING_HASH_KEY,
        ENDING_HASH_KEY,
    }
)
_DESERIALIZE = TypeDeserializer().deserialize


def is_lease_item(item: Mapping[str, Any]) -> bool:
    """False for items KCL 3.x keeps beside leases (worker metrics, coordinator state)."""
    entity = item.get(ENTITY_TYPE)
    return entity is None or entity.get("S") == LEASE_ENTITY


@dataclass(frozen=True)
class Lease:
    """One shard's lease. Immutable: a write returns the lease as the table now holds it."""

    lease_key: str
    lease_counter: int = 0
    lease_owner: Optional[str] = None
    #: KCL 3.x graceful handoff: the worker that still checkpoints (None: no handoff).
    checkpoint_owner: Optional[str] = None
    checkpoint: ExtendedSequenceNumber = ESN_TRIM_HORIZON
    owner_switches_since_checkpoint: int = 0
    parent_shard_ids: frozenset = frozenset()
    child_shard_ids: frozenset = frozenset()
    starting_hash_key: Optional[str] = None
    ending_hash_key: Optional[str] = None
    #: Attributes we do not use, as DynamoDB attribute values; never rewritten.
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def shard_id(self) -> str:
        return self.lease_key  # single-stream mode: the key is the shard id

    @property
    def is_finished(self) -> bool:
        """The shard was read to its end and checkpointed SHARD_END."""
        return self.checkpoint == ESN_SHARD_END

    @property
    def hash_key_range(self) -> Optional[tuple]:
        if self.starting_hash_key is None or self.ending_hash_key is None:
            return None
        return int(self.starting_hash_key), int(self.ending_hash_key)

    @classmethod
    def from_item(cls, item: Mapping[str, Any]) -> Lease:
        """Parse a DynamoDB item (attribute-value format) written by us or the JVM KCL."""
        value = {k: _DESERIALIZE(v) for k, v in item.items() if k in _OURS}
        if LEASE_KEY not in value:
            raise ValueError(f"lease item has no {LEASE_KEY}: {sorted(item)}")
        checkpoint = value.get(CHECKPOINT)
        return cls(
            lease_key=value[LEASE_KEY],
            lease_counter=int(value.get(LEASE_COUNTER, 0)),
            lease_owner=value.get(LEASE_OWNER) or None,
            checkpoint_owner=value.get(CHECKPOINT_OWNER) or None,
            checkpoint=(
                ExtendedSequenceNumber(checkpoint, int(value.get(CHECKPOINT_SUB, 0)))
                if checkpoint
                else ESN_TRIM_HORIZON
            ),
            owner_switches_since_checkpoint=int(value.get(OWNER_SWITCHES, 0)),
            parent_shard_ids=frozenset(value.get(PARENT_SHARD_IDS, ())),
            child_shard_ids=frozenset(value.get(CHILD_SHARD_IDS, ())),
            starting_hash_key=value.get(STARTING_HASH_KEY),
            ending_hash_key=value.get(ENDING_HASH_KEY),
            extra={k: v for k, v in item.items() if k not in _OURS},
        )

    def to_item(self) -> dict:
        """The item for a new lease; unused attributes are not written."""
        item: dict = {
            LEASE_KEY: {"S": self.lease_key},
            LEASE_COUNTER: {"N": str(self.lease_counter)},
            OWNER_SWITCHES: {"N": str(self.owner_switches_since_checkpoint)},
            CHECKPOINT: {"S": self.checkpoint.sequence_number},
            CHECKPOINT_SUB: {"N": str(self.checkpoint.sub_sequence_number)},
        }
        if self.lease_owner:
            item[LEASE_OWNER] = {"S": self.lease_owner}
        if self.parent_shard_ids:  # DynamoDB refuses empty sets
            item[PARENT_SHARD_IDS] = {"SS": sorted(self.parent_shard_ids)}
        if self.child_shard_ids:
            item[CHILD_SHARD_IDS] = {"SS": sorted(self.child_shard_ids)}
        if self.starting_hash_key is not None and self.ending_hash_key is not None:
            item[STARTING_HASH_KEY] = {"S": self.starting_hash_key}
            item[ENDING_HASH_KEY] = {"S": self.ending_hash_key}
        return item


class UnreadableItems:
    """A table's lease items this library cannot read (:meth:`Lease.from_item` refuses
    them: a checkpoint that is no sequence number, which the Java KCL writes as a child
    gave it), skipped by a listing with one warning a key and reason, so one bad item never
    stops the table's workers. Shared by a table's reading threads (one lock)."""

    def __init__(self, table_name: str) -> None:
        self.table_name = table_name
        self._seen: set = set()
        self._lock = threading.Lock()

    def lease_of(self, item: Mapping[str, Any]) -> Optional[Lease]:
        """The item's lease, or None (warned about once) when it cannot be read."""
        try:
            return Lease.from_item(item)
        except ValueError as exc:
            key = item.get(LEASE_KEY, {}).get("S", "?")
            with self._lock:
                first = (key, str(exc)) not in self._seen
                self._seen.add((key, str(exc)))
            if first:
                log.warning(
                    "table %s: lease %s cannot be read (%s); left alone: no worker of this "
                    "library takes or checkpoints it until its item is mended",
                    self.table_name,
                    key,
                    exc,
                )
            return None
