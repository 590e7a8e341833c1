"""The end store on S3: ``metadataPath=s3://bucket/prefix`` (or ``s3a://``, as EMR and Glue
users write it).

Create-if-absent is S3's conditional write: ``PutObject`` with ``If-None-Match: *``
fails with 412 ``PreconditionFailed`` when the key exists, so the first writer of a
range's end wins and every later one reads the winner back. S3 answers 409
``ConditionalRequestConflict`` while another conditional write of the key is in flight:
that one is retried. Reads are strongly consistent (read-after-write), so a refused
writer always finds the winner.

Two guards against an S3-compatible server that does not enforce the condition (one
that ignores the header, or checks then writes without a lock, as moto's server does):
the driver's first write of a query's marker is repeated and must be refused, else the
store is refused; and a writer reads its end back and returns what is stored, so a
racing writer that overwrote it is followed rather than contradicted.

Layout under the prefix is the directory store's: ``<key[:2]>/<key>.json`` for range
ends, ``queries/<query>`` for the driver's markers. The store is a small picklable
description; its client opens lazily in each process from a
:class:`~kinesis_dstream.aws.ClientSpec` (the connection's region and credentials; the
endpoint from ``AWS_ENDPOINT_URL_S3`` / ``AWS_ENDPOINT_URL``, as boto3 reads them).
"""

from __future__ import annotations

import json
import logging
import re
import socket
import threading
from dataclasses import dataclass
from typing import Any, Callable, Optional

from botocore.exceptions import ClientError

from ...aws import ClientSpec
from ...backoff import Backoff, call_with_retry, error_code, is_retriable
from ...errors import KinesisServiceError
from ..offsets import MAX_END_BYTES, RangeEnd
from .store import STORE_BACKOFF, EndStore, EndStoreError

log = logging.getLogger(__name__)

#: URL schemes read as S3 (Hadoop's ``s3a`` is how EMR, Glue and Databricks users write it).
S3_SCHEMES = ("s3", "s3a")
#: DeleteObjects takes at most this many keys a request.
DELETE_BATCH = 1000
_BUCKET = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
_NOT_FOUND = frozenset({"NoSuchKey", "404", "NotFound"})
#: Markers this process has seen: (store, query). A marker is never removed while its
#: query runs, so one look per process and query is enough.
_SEEN_MARKERS: set = set()
_SEEN_LOCK = threading.Lock()


def is_s3_url(url: str) -> bool:
    return url.split("://", 1)[0].lower() in S3_SCHEMES if "://" in url else False


def parse_s3_url(url: str) -> tuple:
    """``s3://bucket/some/prefix/`` -> ("bucket", "some/prefix"); ValueError says why not."""
    scheme, _, rest = url.partition("://")
    if scheme.lower() not in S3_SCHEMES:
        raise ValueError(f"{url!r} is not an s3:// or s3a:// URL")
    bucket, _, prefix = rest.partition("/")
    if not _BUCKET.match(bucket):
        raise ValueError(
            f"{url!r} does not name an S3 bucket (3-63 lower-case letters, digits, dots and "
            "hyphens): write s3://bucket/prefix"
        )
    return bucket, prefix.strip("/")


def _retriable(exc: BaseException) -> bool:
    # 409: another conditional write of the same key is in flight; S3 asks for a retry.
    return is_retriable(exc) or error_code(exc) == "ConditionalRequestConflict"


@dataclass(frozen=True)
class S3EndStore(EndStore):
    """Range ends as objects under ``s3://bucket/prefix``; see the module docstring."""

    bucket: str
    prefix: str
    client_spec: ClientSpec
    #: awslabs' metadataNumRetries / metadataRetryIntervalsMs / metadataMaxRetryIntervalMs
    backoff: Backoff = STORE_BACKOFF

    @classmethod
    def from_url(
        cls, url: str, client_spec: ClientSpec, backoff: Backoff = STORE_BACKOFF
    ) -> S3EndStore:
        bucket, prefix = parse_s3_url(url)
        return cls(bucket, prefix, client_spec, backoff)

    @property
    def description(self) -> str:  # type: ignore[override]
        return f"S3 {self._url('')}"

    def _object(self, key: str) -> str:
        return self._join(f"{key[:2]}/{key}.json")

    def _marker(self, query: str) -> str:
        return self._join(f"queries/{query}")

    def _join(self, name: str) -> str:
        return f"{self.prefix}/{name}" if self.prefix else name

    def _url(self, name: str) -> str:
        return f"s3://{self.bucket}/{name}" if name else f"s3://{self.bucket}/{self.prefix}"

    def _call(self, operation: str, name: str, fn: Callable[[Any], Any]) -> Any:
        """``fn(client)`` with the store's retries; errors name bucket, key and operation."""
        client = self.client_spec.client()
        try:
            return call_with_retry(
                lambda: fn(client),
                self.backoff,
                operation=f"{operation} {self._url(name)}",
                client=client,
                retriable=_retriable,
            )
        except KinesisServiceError as exc:
            if exc.code == "NoSuchBucket":
                raise EndStoreError(
                    f"the end store's bucket {self.bucket!r} does not exist at "
                    f"{client.meta.endpoint_url}: create it, or point option 'metadataPath' "
                    f"at an existing bucket ({operation} {self._url(name)})"
                ) from exc
            raise

    def _read(self, name: str) -> Optional[bytes]:
        def get(client: Any) -> Optional[bytes]:
            try:
                body = client.get_object(Bucket=self.bucket, Key=name)["Body"]
            except ClientError as exc:
                if error_code(exc) in _NOT_FOUND:
                    return None
                raise
            with body:  # a range end or a marker: small; more is not one of ours
                return body.read(MAX_END_BYTES + 1)

        return self._call("GetObject", name, get)

    def _create(self, name: str, body: bytes) -> bool:
        """Write ``name`` unless it exists: True when this call created it."""

        def put(client: Any) -> bool:
            try:
                client.put_object(Bucket=self.bucket, Key=name, Body=body, IfNoneMatch="*")
                return True
            except ClientError as exc:
                if error_code(exc) == "PreconditionFailed":
                    return False
                raise

        return self._call("PutObject", name, put)

    def get(self, key: str) -> Optional[RangeEnd]:
        name = self._object(key)
        data = self._read(name)
        if data is None:
            return None
        return RangeEnd.from_bytes(data, f"end-store object {self._url(name)}")

    def put_if_absent(self, key: str, end: RangeEnd) -> RangeEnd:
        name = self._object(key)
        if self._create(name, json.dumps(end.to_json()).encode("utf-8")):
            stored = self.get(key)  # read-after-write: ours, unless the server let a racer in
            if stored is None or stored == end:
                return end
            log.warning(
                "the end of range %s in %s was overwritten after this write was accepted: the "
                "server does not make If-None-Match writes atomic; following the stored end",
                key,
                self.description,
            )
            return stored
        existing = self.get(key)
        if existing is None:
            raise EndStoreError(
                f"the end of range {key} ({self._url(name)}) was refused as already recorded, "
                "then could not be read back: is something deleting range ends (a lifecycle "
                "rule on the bucket?)"
            )
        return existing

    def delete(self, keys: list) -> None:
        names = [self._object(key) for key in keys]
        for start in range(0, len(names), DELETE_BATCH):
            batch = names[start : start + DELETE_BATCH]

            def delete(client: Any, batch: list = batch) -> Any:
                objects = [{"Key": name} for name in batch]
                request = {"Objects": objects, "Quiet": True}
                return client.delete_objects(Bucket=self.bucket, Delete=request)

            errors = self._call("DeleteObjects", batch[0], delete).get("Errors", [])
            if errors:
                shown = ", ".join(f"{e.get('Key')} ({e.get('Code')})" for e in errors[:5])
                raise EndStoreError(
                    f"DeleteObjects in bucket {self.bucket!r} failed for {len(errors)} of "
                    f"{len(batch)} range ends: {shown}"
                )

    def mark(self, query: str) -> bool:
        name = self._marker(query)
        if not self._create(name, (socket.gethostname() + "\n").encode("utf-8")):
            return True
        # The marker is new: a second conditional write must be refused, else the server
        # ignores If-None-Match and range ends could silently overwrite each other.
        if self._create(name, b"probe\n"):
            raise EndStoreError(
                f"the S3 server at {self.client_spec.client().meta.endpoint_url} accepted a "
                f"second If-None-Match write of {self._url(name)}: it does not support "
                "conditional writes, which the end store needs. Use AWS S3 (or a server that "
                "refuses such writes with 412), another 'metadataPath', or "
                "metadataCommitterType=DYNAMODB"
            )
        return False

    def check_marker(self, query: str) -> None:
        with _SEEN_LOCK:
            if (self, query) in _SEEN_MARKERS:
                return
        name = self._marker(query)
        if self._read(name) is None:
            endpoint = self.client_spec.client().meta.endpoint_url
            raise EndStoreError(
                f"this executor (host {socket.gethostname()}) does not see the end-store "
                f"marker {self._url(name)} that the driver wrote (S3 endpoint here: "
                f"{endpoint}): the executors reach another S3 or account than the driver. "
                "Set option 'metadataPath' to an s3:// path both reach, with the same "
                "AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL and credentials on the executors "
                "(spark.executorEnv.*), or use metadataCommitterType=DYNAMODB"
            )
        with _SEEN_LOCK:
            _SEEN_MARKERS.add((self, query))
