"""Where the executor-side writer's files go: a local directory or S3.

Each file is opened for one task attempt and ends one of two ways: ``close()`` commits it
(the local file is closed; on S3 the object is put, or its multipart upload completed),
``abort()`` leaves nothing (the local file is removed; on S3 nothing is put, or the
upload is aborted). A failed attempt aborts what it was writing, so it never completes
an object over another attempt's, and never leaves a half-written one.

S3 objects are written with the library's clients (:class:`~kinesis_dstream.aws.ClientSpec`:
region, endpoint and credentials resolved on each executor as everywhere else, never
shipped): one ``PutObject`` for a file under :data:`PART_BYTES`, else a multipart upload
of parts of that size (a file is never held whole in memory). Each call is retried with
:data:`FILE_BACKOFF`.
"""

from __future__ import annotations

import enum
import logging
import os
from dataclasses import dataclass, field
from typing import Any, Optional
from urllib.parse import urlparse

from ...aws import ClientSpec
from ...backoff import Backoff, call_with_retry
from ...sql.ends.s3 import is_s3_url, parse_s3_url

log = logging.getLogger(__name__)

#: S3 parts of a multipart upload (S3's minimum is 5 MiB but for the last).
PART_BYTES = 8 * 1024 * 1024
#: Retries of each S3 call of a file (throttling, unavailability).
FILE_BACKOFF = Backoff(initial_delay_s=0.2, max_delay_s=5.0, max_attempts=8, max_elapsed_s=60.0)


class FileState(enum.Enum):
    OPEN = "open"
    COMMITTED = "committed"  # visible whole
    ABORTED = "aborted"  # nothing of it left


class OutputFile:
    """A file being written, as a binary file object (pyarrow and fastavro write to it).

    ``close()`` commits; ``abort()`` discards. Both are final, and a second call of
    either does nothing; what is written after an abort is discarded (a format writer
    finishing on an aborted file writes into nothing).
    """

    def __init__(self, path: str) -> None:
        #: Where the file is: a local path or ``s3://bucket/key``.
        self.path = path
        self.state = FileState.OPEN
        self._written = 0

    def write(self, data: Any) -> int:
        size = len(memoryview(data).cast("B"))
        if self.state is FileState.ABORTED:
            return size
        if self.state is FileState.COMMITTED:
            raise ValueError(f"{self.path}: write after the file was committed")
        self._write(data)
        self._written += size
        return size

    def tell(self) -> int:
        return self._written

    def flush(self) -> None:
        pass

    def writable(self) -> bool:
        return True

    def readable(self) -> bool:
        return False

    def seekable(self) -> bool:
        return False

    @property
    def closed(self) -> bool:
        return self.state is not FileState.OPEN

    def close(self) -> None:
        """Commit: the file is visible whole."""
        if self.state is FileState.OPEN:
            self._commit()
            self.state = FileState.COMMITTED

    def abort(self) -> None:
        """Discard: nothing of the file is left (errors of the clean-up are raised)."""
        if self.state is FileState.OPEN:
            self.state = FileState.ABORTED
            self._abort()

    def _write(self, data: Any) -> None:
        raise NotImplementedError

    def _commit(self) -> None:
        raise NotImplementedError

    def _abort(self) -> None:
        raise NotImplementedError


class LocalFile(OutputFile):
    def __init__(self, path: str) -> None:
        super().__init__(path)
        self._handle = open(path, "wb")  # noqa: SIM115 (closed by commit or abort)

    def _write(self, data: Any) -> None:
        self._handle.write(data)

    def _commit(self) -> None:
        self._handle.close()

    def _abort(self) -> None:
        self._handle.close()
        delete_local(self.path)


class S3File(OutputFile):
    """One S3 object: put whole when it ends under the store's part size, else uploaded
    in parts; nothing is visible before :meth:`close`."""

    def __init__(self, store: S3Store, key: str) -> None:
        super().__init__(f"s3://{store.bucket}/{key}")
        self._store = store
        self._key = key
        self._buffer = bytearray()
        self._upload_id: Optional[str] = None
        self._parts: list = []

    def _write(self, data: Any) -> None:
        self._buffer += data
        part = self._store.part_bytes
        while len(self._buffer) >= part:
            self._upload_part(bytes(self._buffer[:part]))
            del self._buffer[:part]

    def _upload_part(self, body: bytes) -> None:
        s3, bucket, key = self._store.client(), self._store.bucket, self._key
        if self._upload_id is None:
            self._upload_id = self._store.call(
                "CreateMultipartUpload",
                key,
                lambda: s3.create_multipart_upload(Bucket=bucket, Key=key)["UploadId"],
            )
        number = len(self._parts) + 1
        answer = self._store.call(
            "UploadPart",
            key,
            lambda: s3.upload_part(
                Bucket=bucket, Key=key, UploadId=self._upload_id, PartNumber=number, Body=body
            ),
        )
        self._parts.append({"PartNumber": number, "ETag": answer["ETag"]})

    def _commit(self) -> None:
        s3, bucket, key = self._store.client(), self._store.bucket, self._key
        if self._upload_id is None:
            body = bytes(self._buffer)
            self._store.call(
                "PutObject", key, lambda: s3.put_object(Bucket=bucket, Key=key, Body=body)
            )
        else:
            if self._buffer:
                self._upload_part(bytes(self._buffer))
            parts = {"Parts": self._parts}
            self._store.call(
                "CompleteMultipartUpload",
                key,
                lambda: s3.complete_multipart_upload(
                    Bucket=bucket, Key=key, UploadId=self._upload_id, MultipartUpload=parts
                ),
            )
        self._buffer = bytearray()

    def _abort(self) -> None:
        self._buffer = bytearray()
        if self._upload_id is not None:
            s3, bucket, key = self._store.client(), self._store.bucket, self._key
            upload = self._upload_id
            self._store.call(
                "AbortMultipartUpload",
                key,
                lambda: s3.abort_multipart_upload(Bucket=bucket, Key=key, UploadId=upload),
            )


def delete_local(path: str) -> None:
    try:
        os.remove(path)
    except FileNotFoundError:
        pass


@dataclass(frozen=True)
class LocalStore:
    """Files under a local (or mounted) directory; directories are made as needed."""

    base: str

    def open(self, relative: str) -> OutputFile:
        path = os.path.join(self.base, relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        return LocalFile(path)

    def delete(self, path: str) -> None:
        delete_local(path)


@dataclass(frozen=True)
class S3Store:
    """Objects under ``s3://bucket/prefix`` (S3 has no directories to make)."""

    bucket: str
    prefix: str
    client_spec: ClientSpec = field(default_factory=lambda: ClientSpec("s3"))
    backoff: Backoff = FILE_BACKOFF
    part_bytes: int = PART_BYTES

    def client(self) -> Any:
        return self.client_spec.client()

    def call(self, operation: str, key: str, fn: Any) -> Any:
        """``fn()`` with the retry rule; a failure names the operation and the object."""
        where = f"{operation} of s3://{self.bucket}/{key}"
        return call_with_retry(fn, self.backoff, operation=where, client=self.client())

    def open(self, relative: str) -> OutputFile:
        return S3File(self, "/".join(filter(None, (self.prefix, relative))))

    def delete(self, path: str) -> None:
        bucket, key = parse_s3_url(path)
        s3 = self.client()
        self.call("DeleteObject", key, lambda: s3.delete_object(Bucket=bucket, Key=key))


def open_store(path: str) -> Any:
    """The store of an ``s3://``, ``s3a://`` or local path."""
    if is_s3_url(path):
        bucket, prefix = parse_s3_url(path)
        return S3Store(bucket, prefix)
    parsed = urlparse(path)
    if parsed.scheme in ("", "file"):
        return LocalStore(os.path.abspath(parsed.path if parsed.scheme else path))
    raise ValueError(f"path {path!r}: this writer writes s3://, s3a:// or local paths")
