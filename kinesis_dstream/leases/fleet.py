"""Which KCL fleet the lease table belongs to, and what our worker must do in it.

A KCL 2.x fleet balances leases by count: every worker takes expired leases and steals
(:mod:`.take_rules`). A KCL 3.x fleet does not: one leader (a ``Leader`` lock item) assigns
leases to the workers that publish ``WorkerMetricStats`` and never takes one back from
a worker it does not know, so a worker that steals there costs the Java owner its
records since its last checkpoint. The mode is the ``cv`` of the ``Migration3.0`` item:

- no item (no ``<app>-CoordinatorState`` table) or ``CLIENT_VERSION_2X``: KCL 2.x;
- ``CLIENT_VERSION_UPGRADE_FROM_2X``: 2.x taking, and worker metrics so that the
  migration to 3.x (which waits for every lease owner's metrics) can go on;
- ``CLIENT_VERSION_3X`` / ``CLIENT_VERSION_3X_WITH_ROLLBACK``: a follower: no taking or
  stealing, leases assigned to us are picked up, metrics published; if the ``Leader``
  lock is missing, released or not heartbeaten for its ``leaseDuration`` (the last Java
  worker left), 2.x taking again, so that nothing stays unread.

Layouts follow the KCL 3.1.3 sources: ``migration/MigrationState`` (``cv``),
``leader/DynamoDBLockBasedLeaderDecider`` with the DynamoDB Lock Client (``ownerName``,
``leaseDuration`` in milliseconds as a string, ``recordVersionNumber``, ``isReleased``;
a lock is expired when its record version did not change for its lease duration by the
reader's clock), ``worker/metricstats/WorkerMetricStats`` (key ``wid``; ``lut`` epoch
seconds, ``sts``/``opr`` maps: both empty means "no metrics", balanced by throughput);
3.5 adds ``sup``/``slu`` and, once ``TableMigration3.5`` is PENDING or COMPLETE, keeps
these items in the lease table (``leaseKey``, ``entityType``).
"""

from __future__ import annotations

import enum
import logging
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Optional

from botocore.exceptions import BotoCoreError, ClientError

log = logging.getLogger(__name__)

MIGRATION_KEY = "Migration3.0"
LEADER_KEY = "Leader"
TABLE_MIGRATION_KEY = "TableMigration3.5"
#: ``TableMigration3.5``'s ``tm`` values after which 3.x items live in the lease table.
IN_LEASE_TABLE = frozenset({"TABLE_MIGRATION_STATUS_PENDING", "TABLE_MIGRATION_STATUS_COMPLETE"})
WORKER_METRIC_STATS_ENTITY = "WORKER_METRIC_STATS"
#: The GSI KCL 3.x adds to the lease table: leases by owner (keys only).
OWNER_INDEX = "LeaseOwnerToLeaseKeyIndex"
#: How often the KCL publishes worker metrics; the leader counts a worker whose ``lut``
#: is at most twice that old.
METRICS_INTERVAL_S = 30.0


class FleetMode(enum.Enum):
    KCL2 = "KCL 2.x: take and steal by count"
    KCL2_COMPATIBLE = "KCL 3.x upgrading from 2.x: take and steal, publish worker metrics"
    KCL3 = "KCL 3.x: the leader assigns leases; publish worker metrics"
    KCL3_NO_LEADER = "KCL 3.x with no live leader: take and steal, publish worker metrics"

    @property
    def takes(self) -> bool:
        """Our taker takes and steals (else: only leases assigned to us are held)."""
        return self is not FleetMode.KCL3

    @property
    def publishes_metrics(self) -> bool:
        return self is not FleetMode.KCL2


def mode_for(client_version: Optional[str], leader_alive: bool) -> FleetMode:
    """The mode a ``Migration3.0`` ``cv`` (None: no item) and the leader lock make."""
    if client_version in ("CLIENT_VERSION_3X", "CLIENT_VERSION_3X_WITH_ROLLBACK"):
        return FleetMode.KCL3 if leader_alive else FleetMode.KCL3_NO_LEADER
    if client_version == "CLIENT_VERSION_UPGRADE_FROM_2X":
        return FleetMode.KCL2_COMPATIBLE
    return FleetMode.KCL2


@dataclass(frozen=True)
class LeaderLock:
    """The ``Leader`` item as the DynamoDB Lock Client wrote it."""

    owner: str
    record_version: str
    lease_duration_s: float
    released: bool

    @classmethod
    def from_item(cls, item: dict) -> LeaderLock:
        def text(name: str) -> str:
            value = item.get(name) or {}
            return value.get("S") or value.get("N") or ""

        try:
            duration_s = float(text("leaseDuration") or 120_000) / 1000.0
        except ValueError:
            duration_s = 120.0
        released = text("isReleased") == "1"
        return cls(text("ownerName"), text("recordVersionNumber"), duration_s, released)


class LeaderWatch:
    """Judges the leader alive as the Lock Client does: a lock is expired when its
    ``recordVersionNumber`` has not changed for ``leaseDuration`` by our clock (the item
    holds no time); a missing or released lock means no leader."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._seen: Optional[tuple] = None  # (record version, clock time first seen)

    def alive(self, lock: Optional[LeaderLock]) -> bool:
        if lock is None or lock.released:
            self._seen = None
            return False
        now = self._clock()
        if self._seen is None or self._seen[0] != lock.record_version:
            self._seen = (lock.record_version, now)
        return now - self._seen[1] <= lock.lease_duration_s


class LeaseThroughput:
    """Bytes read per lease, turned into KB/s at each renewal (the KCL 3.x leader
    balances by ``throughputKBps``). Thread-safe."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._bytes: dict = {}  # lease key -> (bytes since last rate, since)

    def note(self, lease_key: str, nbytes: int) -> None:
        with self._lock:
            total, since = self._bytes.get(lease_key, (0, self._clock()))
            self._bytes[lease_key] = (total + nbytes, since)

    def rate_kbps(self, lease_key: str) -> float:
        now = self._clock()
        with self._lock:
            total, since = self._bytes.get(lease_key, (0, now))
            self._bytes[lease_key] = (0, now)
        elapsed = now - since
        return total / 1024.0 / elapsed if elapsed > 0 else 0.0


class FleetWatch:
    """Reads the fleet's mode (:meth:`poll`, each taker pass) and publishes this
    worker's ``WorkerMetricStats`` (:meth:`publish_metrics`) where the mode needs it.

    Errors reading the state keep the last mode (logged): a blip must not turn a
    follower into a taker. No lock is held during a call.
    """

    def __init__(
        self,
        dynamodb: Any,
        application_name: str,
        lease_table: str,
        worker_id: str,
        *,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self._client = dynamodb
        self.coordinator_table = f"{application_name}-CoordinatorState"
        self.metrics_table = f"{application_name}-WorkerMetricStats"
        self.lease_table = lease_table
        self.worker_id = worker_id
        self._wall = wall_clock
        self._leader = LeaderWatch(clock)
        self.mode = FleetMode.KCL2
        self.client_version: Optional[str] = None
        self.leader: Optional[str] = None
        self._in_lease_table = False
        self._failures_seen: set = set()
        self.metrics_published = 0

    def poll(self) -> FleetMode:
        """Read ``Migration3.0``, ``TableMigration3.5`` and ``Leader``; the mode now."""
        try:
            state = self._items(
                self.coordinator_table, "key", (MIGRATION_KEY, TABLE_MIGRATION_KEY, LEADER_KEY)
            )
            migration, table_migration, leader = (
                state.get(k) for k in (MIGRATION_KEY, TABLE_MIGRATION_KEY, LEADER_KEY)
            )
            if migration is None or leader is None:  # KCL 3.5 moves them to the lease table
                moved = self._items(self.lease_table, "leaseKey", (MIGRATION_KEY, LEADER_KEY))
                migration = migration or moved.get(MIGRATION_KEY)
                leader = leader or moved.get(LEADER_KEY)
        except (ClientError, BotoCoreError) as exc:
            # Once per kind of error (say an IAM policy without the state table), then
            # quietly: the poll runs every renewal interval.
            code = (
                exc.response.get("Error", {}).get("Code") if isinstance(exc, ClientError) else None
            )
            kind = code or type(exc).__name__
            level = logging.DEBUG if kind in self._failures_seen else logging.WARNING
            self._failures_seen.add(kind)
            log.log(
                level, "could not read the KCL fleet state (keeping %s): %s", self.mode.name, exc
            )
            return self.mode
        version = ((migration or {}).get("cv") or {}).get("S")
        lock = LeaderLock.from_item(leader) if leader else None
        mode = mode_for(version, self._leader.alive(lock))
        status = ((table_migration or {}).get("tm") or {}).get("S")
        self._in_lease_table = status in IN_LEASE_TABLE
        if mode is not self.mode or version != self.client_version:
            log.warning(
                "worker %s: lease table %s is in %s (Migration3.0 cv=%s, leader %s)",
                self.worker_id,
                self.lease_table,
                mode.value,
                version,
                lock.owner if lock else None,
            )
        self.mode, self.client_version = mode, version
        self.leader = lock.owner if lock else None
        return mode

    def publish_metrics(self) -> bool:
        """Write our ``WorkerMetricStats`` (no metrics: balanced by throughput) where the
        KCL's leader reads it; nothing in a KCL 2.x fleet. False if it could not."""
        if not self.mode.publishes_metrics:
            return False
        now = int(self._wall())
        fields = {
            "lut": {"N": str(now)},
            "sts": {"M": {}},
            "opr": {"M": {}},
            "sup": {"N": "1"},  # KCL 3.5: this worker supports the lease-table layout
            "slu": {"N": str(now)},
        }
        try:
            if self._in_lease_table:
                fields["entityType"] = {"S": WORKER_METRIC_STATS_ENTITY}
                self._set(self.lease_table, {"leaseKey": {"S": self.worker_id}}, fields)
            else:
                self._set(self.metrics_table, {"wid": {"S": self.worker_id}}, fields)
        except (ClientError, BotoCoreError) as exc:
            log.warning("could not publish WorkerMetricStats of %s: %s", self.worker_id, exc)
            return False
        self.metrics_published += 1
        return True

    def assigned_keys(self) -> Optional[list]:
        """Keys of the leases whose owner is us, by the KCL 3.x GSI
        ``LeaseOwnerToLeaseKeyIndex`` (eventually consistent: the caller reads each
        lease again). None when the table has no such index (then scan)."""
        keys: list = []
        kwargs: dict = {
            "TableName": self.lease_table,
            "IndexName": OWNER_INDEX,
            "KeyConditionExpression": "#owner = :me",
            "ExpressionAttributeNames": {"#owner": "leaseOwner"},
            "ExpressionAttributeValues": {":me": {"S": self.worker_id}},
        }
        while True:
            try:
                page = self._client.query(**kwargs)
            except ClientError as exc:
                if exc.response.get("Error", {}).get("Code") in (
                    "ValidationException",
                    "ResourceNotFoundException",
                    "AccessDeniedException",
                ):
                    return None  # no index (a table the KCL 3.x did not create), or no right
                raise
            keys += [item["leaseKey"]["S"] for item in page.get("Items", [])]
            if not page.get("LastEvaluatedKey"):
                return keys
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def _items(self, table: str, key_name: str, keys: tuple) -> dict:
        """key -> item for the ``keys`` that exist in ``table``; {} at once when the table
        does not (a KCL 2.x fleet has no coordinator-state table: one call, not three)."""
        found = {}
        for key in keys:
            try:
                answer = self._client.get_item(
                    TableName=table, Key={key_name: {"S": key}}, ConsistentRead=True
                )
            except ClientError as exc:
                if exc.response.get("Error", {}).get("Code") == "ResourceNotFoundException":
                    return {}  # no such table: a KCL 2.x fleet (or 3.5 after migration)
                raise
            if "Item" in answer:
                found[key] = answer["Item"]
        return found

    def _set(self, table: str, key: dict, fields: dict) -> None:
        names = {f"#f{n}": name for n, name in enumerate(fields)}
        values = {f":f{n}": value for n, value in enumerate(fields.values())}
        self._client.update_item(
            TableName=table,
            Key=key,
            UpdateExpression="SET " + ", ".join(f"#f{n} = :f{n}" for n in range(len(fields))),
            ExpressionAttributeNames=names,
            ExpressionAttributeValues=values,
        )
