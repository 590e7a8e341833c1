"""A scripted KCL 3.x leader and Java worker: they write the items as the KCL 3.1.3 does.

No KCL 3.x jar is reachable here, so the tests script the Java side from the KCL's
sources (amazon-kinesis-client v3.1.3):

- ``migration/MigrationState``: the ``Migration3.0`` item in ``<app>-CoordinatorState``
  (key ``key``): ``cv``, ``mb``, ``mts``, ``h``;
- ``leader/DynamoDBLockBasedLeaderDecider`` through the DynamoDB Lock Client: the
  ``Leader`` item (``ownerName``, ``leaseDuration`` as a string of milliseconds,
  ``recordVersionNumber`` a new UUID at each heartbeat); a graceful leave deletes it;
- ``worker/metricstats/WorkerMetricStats``: ``<app>-WorkerMetricStats`` (key ``wid``;
  ``lut`` epoch seconds, ``sts``/``opr`` maps);
- ``leases/dynamodb/DynamoDBLeaseRefresher``: ``assignLease`` (the leader's assignment
  and the handoff's transfer: leaseOwner, REMOVE checkpointOwner, counter + 1, owner
  switches + 1), ``initiateGracefulLeaseHandoff`` (leaseOwner = new, checkpointOwner =
  old, counter unchanged, on condition that the old owner owns it and no handoff runs),
  and the 3.x renewal (counter + 1 on condition of the counter and no checkpointOwner);
- the GSI ``LeaseOwnerToLeaseKeyIndex`` (HASH leaseOwner, RANGE leaseKey, KEYS_ONLY).
"""

from __future__ import annotations

import threading
import time
import uuid
from typing import Any, Optional


def create_kcl3_tables(dynamodb: Any, app: str, lease_table: str) -> None:
    """The tables a KCL 3.x fleet has: coordinator state, worker metrics, the lease
    table with its owner index."""
    for name, key in ((f"{app}-CoordinatorState", "key"), (f"{app}-WorkerMetricStats", "wid")):
        dynamodb.create_table(
            TableName=name,
            KeySchema=[{"AttributeName": key, "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": key, "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
    dynamodb.create_table(
        TableName=lease_table,
        KeySchema=[{"AttributeName": "leaseKey", "KeyType": "HASH"}],
        AttributeDefinitions=[
            {"AttributeName": "leaseKey", "AttributeType": "S"},
            {"AttributeName": "leaseOwner", "AttributeType": "S"},
        ],
        GlobalSecondaryIndexes=[
            {
                "IndexName": "LeaseOwnerToLeaseKeyIndex",
                "KeySchema": [
                    {"AttributeName": "leaseOwner", "KeyType": "HASH"},
                    {"AttributeName": "leaseKey", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "KEYS_ONLY"},
            }
        ],
        BillingMode="PAY_PER_REQUEST",
    )


class ScriptedLeader:
    """The leader's writes, one call each; :meth:`start` heartbeats the lock."""

    def __init__(self, dynamodb: Any, app: str, lease_table: str, worker_id: str) -> None:
        self.dynamodb = dynamodb
        self.state_table = f"{app}-CoordinatorState"
        self.metrics_table = f"{app}-WorkerMetricStats"
        self.lease_table = lease_table
        self.worker_id = worker_id
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None

    def set_client_version(self, version: str = "CLIENT_VERSION_3X") -> None:
        now = int(time.time() * 1000)
        self.dynamodb.put_item(
            TableName=self.state_table,
            Item={
                "key": {"S": "Migration3.0"},
                "cv": {"S": version},
                "mb": {"S": self.worker_id},
                "mts": {"N": str(now)},
                "h": {"L": []},
            },
        )

    def heartbeat(self, lease_duration_ms: int = 120_000) -> None:
        self.dynamodb.put_item(
            TableName=self.state_table,
            Item={
                "key": {"S": "Leader"},
                "ownerName": {"S": self.worker_id},
                "leaseDuration": {"S": str(lease_duration_ms)},
                "recordVersionNumber": {"S": str(uuid.uuid4())},
            },
        )

    def start(self, interval_s: float = 1.0) -> ScriptedLeader:
        self.heartbeat()
        self._thread = threading.Thread(target=self._beat, args=(interval_s,), name="kcl3-leader")
        self._thread.start()
        return self

    def _beat(self, interval_s: float) -> None:
        while not self._stop.wait(interval_s):
            self.heartbeat()

    def leave(self) -> None:
        """A graceful leave: stop heartbeating, release the lock by deleting it."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10)
            assert not self._thread.is_alive()
        self.dynamodb.delete_item(TableName=self.state_table, Key={"key": {"S": "Leader"}})

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10)

    # -- the lease assignment manager's writes ---------------------------------------------

    def lease(self, key: str) -> dict:
        return self.dynamodb.get_item(
            TableName=self.lease_table, Key={"leaseKey": {"S": key}}, ConsistentRead=True
        )["Item"]

    def assign(self, key: str, owner: str) -> None:
        """``assignLease``: the leader gives a lease to ``owner`` (counter + 1)."""
        counter = self.lease(key)["leaseCounter"]["N"]
        self.dynamodb.update_item(
            TableName=self.lease_table,
            Key={"leaseKey": {"S": key}},
            UpdateExpression="SET leaseOwner = :owner REMOVE checkpointOwner "
            "ADD leaseCounter :one, ownerSwitchesSinceCheckpoint :one",
            ConditionExpression="leaseCounter = :counter",
            ExpressionAttributeValues={
                ":owner": {"S": owner},
                ":one": {"N": "1"},
                ":counter": {"N": counter},
            },
        )

    def initiate_handoff(self, key: str, old_owner: str, new_owner: str) -> None:
        """``initiateGracefulLeaseHandoff``: counter unchanged."""
        self.dynamodb.update_item(
            TableName=self.lease_table,
            Key={"leaseKey": {"S": key}},
            UpdateExpression="SET leaseOwner = :new, checkpointOwner = :old",
            ConditionExpression="leaseOwner = :old AND attribute_not_exists(checkpointOwner)",
            ExpressionAttributeValues={":new": {"S": new_owner}, ":old": {"S": old_owner}},
        )

    def metrics_of(self, worker_id: str) -> Optional[dict]:
        return self.dynamodb.get_item(
            TableName=self.metrics_table, Key={"wid": {"S": worker_id}}, ConsistentRead=True
        ).get("Item")


class ScriptedJavaWorker:
    """A KCL 3.x worker's lease side: publishes its metrics and renews what it owns (as
    the 3.x renewer: counter + 1 on condition of the counter and no checkpointOwner)."""

    def __init__(self, dynamodb: Any, app: str, lease_table: str, worker_id: str) -> None:
        self.dynamodb = dynamodb
        self.app = app
        self.lease_table = lease_table
        self.worker_id = worker_id
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"kcl3-worker-{worker_id}")

    def start(self) -> ScriptedJavaWorker:
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(0.5):
            self.dynamodb.put_item(
                TableName=f"{self.app}-WorkerMetricStats",
                Item={
                    "wid": {"S": self.worker_id},
                    "lut": {"N": str(int(time.time()))},
                    "sts": {"M": {"C": {"L": [{"N": "20"}]}}},
                    "opr": {"M": {"C": {"L": [{"N": "100"}]}}},
                },
            )
            for item in self.dynamodb.scan(TableName=self.lease_table, ConsistentRead=True)[
                "Items"
            ]:
                if item.get("leaseOwner", {}).get("S") != self.worker_id:
                    continue
                try:
                    self.dynamodb.update_item(
                        TableName=self.lease_table,
                        Key={"leaseKey": item["leaseKey"]},
                        UpdateExpression="ADD leaseCounter :one",
                        ConditionExpression="leaseCounter = :counter AND "
                        "attribute_not_exists(checkpointOwner)",
                        ExpressionAttributeValues={
                            ":one": {"N": "1"},
                            ":counter": item["leaseCounter"],
                        },
                    )
                except self.dynamodb.exceptions.ConditionalCheckFailedException:
                    pass

    def leave(self) -> None:
        """Stop renewing (its leases expire), as a worker that went away."""
        self._stop.set()
        self._thread.join(10)
        assert not self._thread.is_alive()
