"""The end store: write-once records of where each micro-batch range really ended.

Kinesis has no "latest sequence number" call, so the source runner cannot know where a
batch ends before someone reads it. The first executor task that reads a range records
its real end here with a create-if-absent write; a replay of the range (a retried task, a
batch re-run after a crash) finds the record and reads exactly up to it, and the source
runner reads it back to plan the next batch. Keys come from
:func:`~.offsets.range_key`; values are :class:`~.offsets.RangeEnd` JSON.

Stores named by the awslabs connector's options:

- a directory (``metadataCommitterType=HDFS``, the default, ``metadataPath``): local or
  mounted (NFS, EFS, a FUSE-mounted bucket) so the driver and every executor see it.
  Create-if-absent is ``link(2)`` of a fully written temporary file: atomic on POSIX.
- a DynamoDB table (``metadataCommitterType=DYNAMODB``, ``dynamodb.tableName``):
  ``PutItem`` with ``attribute_not_exists``; created on first use (PAY_PER_REQUEST).
- S3 (``metadataPath=s3://bucket/prefix`` or ``s3a://``): ``PutObject`` with
  ``If-None-Match: *``; see :mod:`.endstore_s3`.

:func:`~.opening.build_end_store` opens the one the options name.

A store is a small picklable description; it opens clients lazily in each process.
"""

from __future__ import annotations

import json
import os
import socket
import tempfile
from dataclasses import dataclass
from typing import Any, Optional

from botocore.exceptions import ClientError

from ...aws import ClientSpec
from ...backoff import Backoff, call_with_retry, error_code
from ...errors import KinesisDStreamError, KinesisServiceError
from ..offsets import MAX_END_BYTES, RangeEnd

#: Retries of a store call: bounded, so a store that is down fails the task loudly.
STORE_BACKOFF = Backoff(initial_delay_s=0.1, max_delay_s=2.0, max_attempts=6, max_elapsed_s=30.0)


class EndStoreError(KinesisDStreamError):
    """The end store cannot be used as configured; says which option to change."""


class EndStore:
    """Interface: ``get`` a range's end, ``put_if_absent`` one (returns the winner)."""

    description = ""

    def get(self, key: str) -> Optional[RangeEnd]:
        raise NotImplementedError

    def put_if_absent(self, key: str, end: RangeEnd) -> RangeEnd:
        raise NotImplementedError

    def delete(self, keys: list) -> None:
        raise NotImplementedError

    def mark(self, query: str) -> bool:
        """Leave a marker executors look for; True when it was there already."""
        return True

    def check_marker(self, query: str) -> None:
        """Raise EndStoreError when this process does not see the driver's marker."""


@dataclass(frozen=True)
class DirectoryEndStore(EndStore):
    #: A leading ``~`` (the default's) is each process's home: executors on other
    #: machines, or with another HOME, see another directory and fail their marker check.
    path: str

    @property
    def root(self) -> str:
        return os.path.expanduser(self.path)

    @property
    def description(self) -> str:  # type: ignore[override]
        return f"directory {self.root}"

    def _file(self, key: str) -> str:
        return os.path.join(self.root, key[:2], key + ".json")

    def get(self, key: str) -> Optional[RangeEnd]:
        path = self._file(key)
        try:
            with open(path, "rb") as handle:
                data = handle.read(MAX_END_BYTES + 1)
        except FileNotFoundError:
            return None
        return RangeEnd.from_bytes(data, f"end-store file {path}")

    def put_if_absent(self, key: str, end: RangeEnd) -> RangeEnd:
        target = self._file(key)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=os.path.dirname(target), prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(end.to_json(), handle)
                handle.flush()
                os.fsync(handle.fileno())
            try:
                os.link(temp, target)  # fails if another writer got there first
            except FileExistsError:
                return _existing(self, key)
            except OSError as exc:
                raise EndStoreError(
                    f"cannot record the end of range {key} in {self.root}: link(2) failed "
                    f"({exc.strerror}). The end store needs a filesystem with atomic hard "
                    "links (local, NFS, EFS); many FUSE mounts of object stores have none: "
                    "choose another 'metadataPath' or metadataCommitterType=DYNAMODB"
                ) from exc
            return end
        finally:
            os.unlink(temp)

    def delete(self, keys: list) -> None:
        for key in keys:
            try:
                os.unlink(self._file(key))
            except FileNotFoundError:
                pass

    def _marker(self, query: str) -> str:
        return os.path.join(self.root, "queries", query)

    def mark(self, query: str) -> bool:
        marker = self._marker(query)
        if os.path.exists(marker):
            return True
        os.makedirs(os.path.dirname(marker), exist_ok=True)
        with open(marker, "w", encoding="utf-8") as handle:
            handle.write(socket.gethostname() + "\n")
        return False

    def check_marker(self, query: str) -> None:
        if not os.path.exists(self._marker(query)):
            default = " (the default, in each process's home)" if self.path[:1] == "~" else ""
            raise EndStoreError(
                f"this executor (host {socket.gethostname()}) does not see the end-store "
                f"directory {self.root}{default} that the driver uses (no marker for query "
                f"{query}). On a cluster set option 'metadataPath' to s3://bucket/prefix or a "
                "directory shared by the driver and every executor, or use "
                "metadataCommitterType=DYNAMODB with dynamodb.tableName"
            )


@dataclass(frozen=True)
class DynamoDBEndStore(EndStore):
    table_name: str
    client_spec: ClientSpec
    #: awslabs' metadataNumRetries / metadataRetryIntervalsMs / metadataMaxRetryIntervalMs
    backoff: Backoff = STORE_BACKOFF

    @property
    def description(self) -> str:  # type: ignore[override]
        return f"DynamoDB table {self.table_name}"

    def _call(self, operation: str, **kwargs: Any) -> Any:
        client = self.client_spec.client()
        return call_with_retry(
            lambda: getattr(client, operation)(TableName=self.table_name, **kwargs),
            self.backoff,
            operation=operation,
            stream_name=self.table_name,
        )

    def ensure_table(self) -> None:
        client = self.client_spec.client()
        try:
            client.describe_table(TableName=self.table_name)
            return
        except ClientError as exc:
            if error_code(exc) != "ResourceNotFoundException":
                raise
        try:
            client.create_table(
                TableName=self.table_name,
                KeySchema=[{"AttributeName": "rangeKey", "KeyType": "HASH"}],
                AttributeDefinitions=[{"AttributeName": "rangeKey", "AttributeType": "S"}],
                BillingMode="PAY_PER_REQUEST",
            )
        except ClientError as exc:
            if error_code(exc) != "ResourceInUseException":
                raise
        client.get_waiter("table_exists").wait(TableName=self.table_name)

    def get(self, key: str) -> Optional[RangeEnd]:
        item = self._call("get_item", Key={"rangeKey": {"S": key}}, ConsistentRead=True).get("Item")
        if item is None:
            return None
        text = item.get("end", {}).get("S", "")  # a string attribute, as put_if_absent writes
        return RangeEnd.from_bytes(
            text, f"end-store item {key} of DynamoDB table {self.table_name}"
        )

    def put_if_absent(self, key: str, end: RangeEnd) -> RangeEnd:
        if self._create({"rangeKey": {"S": key}, "end": {"S": json.dumps(end.to_json())}}):
            return end
        return _existing(self, key)

    def mark(self, query: str) -> bool:
        item = {"rangeKey": {"S": f"query/{query}"}, "end": {"S": socket.gethostname()}}
        return not self._create(item)

    def _create(self, item: dict) -> bool:
        """Write ``item`` if its key is absent (retried as every store call is); False if
        it was there. A retry after an attempt that landed unanswered finds its own item:
        the same answer as a loser's, and the caller reads back what is recorded."""
        try:
            self._call("put_item", Item=item, ConditionExpression="attribute_not_exists(rangeKey)")
        except KinesisServiceError as exc:
            if exc.code != "ConditionalCheckFailedException":
                raise
            return False
        return True

    def delete(self, keys: list) -> None:
        for key in keys:
            self._call("delete_item", Key={"rangeKey": {"S": key}})


def _existing(store: EndStore, key: str) -> RangeEnd:
    """The end another writer recorded first under ``key``."""
    existing = store.get(key)
    if existing is None:
        raise EndStoreError(
            f"the end of range {key} in {store.description} was refused as already "
            "recorded, then could not be read back: is something deleting range ends, or "
            "is the store not consistent (read-after-write)?"
        )
    return existing
