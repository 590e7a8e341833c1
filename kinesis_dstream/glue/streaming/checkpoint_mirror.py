"""A query's checkpoint on S3 where Spark has no S3 filesystem: a local copy, mirrored.

pip-installed PySpark has no Hadoop FileSystem for ``s3://`` or ``s3a://`` (no
hadoop-aws), yet on Glue a checkpoint on S3 is the normal case. Here Spark keeps the
checkpoint in a fresh local directory; at start the S3 prefix is downloaded into it (so
a job resumes on another machine from S3 alone), and a thread uploads it after each
committed batch (:mod:`.checkpoint_plan`: which files, in which order). Where Spark has
a filesystem for the path (hadoop-aws, EMR, Glue), Spark writes there itself and no
mirror runs (:func:`needs_mirror`, the rule S3 output follows too).

What it guarantees: S3 holds the checkpoint as of a committed batch and the offsets the
next batch was planned from (as Spark's own writes would), never a ``commits/N`` of a
batch that did not commit nor an ``offsets/N+1`` before ``commits/N``. A crash (a kill -9, a lost
machine) between a batch's commit and its upload costs that batch: the restart resumes
after the last uploaded commit and runs the batch again (at-least-once, as Glue's
forEachBatch is). A mirror that cannot upload (past its retries) fails the job with one
line naming the object: the local checkpoint never runs ahead of S3 silently.

The thread (owner: :class:`~.foreach_batch.BatchLoop`) looks for a new commit every
:data:`POLL_S`; :meth:`CheckpointMirror.close` stops and joins it (bounded), uploads
what is committed and removes the local directory.

Test hook (tests only): environment variable :data:`HOLD_ENV` = N makes the mirror
stop, before uploading the first sync that holds ``commits/M`` with M >= N, log
:data:`HOLD_LINE` and wait (bounded by :data:`HOLD_MAX_S`), so a test can kill the job
at the moment between a commit and its upload.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import threading
from typing import Any, Optional

from ...aws import ClientSpec
from ...backoff import Backoff, call_with_retry
from ...spark_internals import hadoop_can_write
from ...sql.ends.s3 import is_s3_url, parse_s3_url
from ..errors import GlueError
from .checkpoint_plan import Signature, local_files, plan_sync, restored_path

log = logging.getLogger(__name__)

#: How often the thread looks for a new commit (seconds).
POLL_S = 0.5
#: The longest the thread may take to end once told to (it is then between calls).
JOIN_S = 60.0
#: Retries of each S3 call: bounded, so a mirror that cannot upload fails loudly.
MIRROR_BACKOFF = Backoff(initial_delay_s=0.2, max_delay_s=5.0, max_attempts=8, max_elapsed_s=60.0)
#: What lives under the checkpoint prefix but is not Spark's: never restored or deleted.
NOT_SPARKS = ("kinesis-ends",)
HOLD_ENV = "KINESIS_DSTREAM_TEST_MIRROR_HOLD_BATCH"
HOLD_LINE = "checkpoint mirror: holding batch {batch} between its commit and its upload"
HOLD_MAX_S = 600.0


def needs_mirror(sc: Any, location: str) -> bool:
    """An ``s3://`` or ``s3a://`` checkpoint Spark has no filesystem for."""
    return is_s3_url(location) and not hadoop_can_write(sc, location)


class CheckpointMirror:
    """The local directory Spark checkpoints into, and its S3 copy."""

    def __init__(self, location: str, client_spec: Optional[ClientSpec] = None) -> None:
        try:
            self.bucket, self.prefix = parse_s3_url(location)
        except ValueError as exc:
            raise GlueError(f"forEachBatch: checkpointLocation: {exc}") from None
        self.location = location
        self.client_spec = client_spec or ClientSpec("s3")
        self.local_dir = tempfile.mkdtemp(prefix="kinesis_dstream-checkpoint-")
        #: What S3 holds, as this mirror put or restored it: {relative path: signature}.
        self.uploaded: dict = {}
        #: The last batch whose commit S3 holds.
        self.committed: Optional[int] = None
        #: Why the mirror stopped uploading (the thread's error), once it has.
        self.error: Optional[BaseException] = None
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._hold = _hold_batch()

    # -- S3 ------------------------------------------------------------------------

    def _key(self, relative: str) -> str:
        return f"{self.prefix}/{relative}" if self.prefix else relative

    def _call(self, method: str, where: str, **kwargs: Any) -> Any:
        """``client.<method>(Bucket=..., **kwargs)`` with the mirror's retries; a failure
        is one line naming the call and the object (``where``: its key or prefix)."""
        client = self.client_spec.client()
        name = f"{method} of s3://{self.bucket}/{where}"
        try:
            return call_with_retry(
                lambda: getattr(client, method)(Bucket=self.bucket, **kwargs),
                MIRROR_BACKOFF,
                operation=name,
                client=client,
            )
        except Exception as exc:  # past the retries, or not retriable: one line, the object
            raise GlueError(f"checkpoint mirror of {self.location}: {name} failed: {exc}") from None

    def restore(self) -> int:
        """Download the S3 checkpoint into the (fresh) local directory; the file count."""
        prefix = self._key("")
        pages = []
        token: dict = {}
        while True:
            page = self._call("list_objects_v2", prefix, Prefix=prefix, **token)
            pages.extend(page.get("Contents", []))
            if not page.get("IsTruncated"):
                break
            token = {"ContinuationToken": page["NextContinuationToken"]}
        for entry in pages:
            key = entry["Key"]
            try:
                path = restored_path(self.local_dir, prefix, key, NOT_SPARKS)
            except ValueError as exc:
                raise GlueError(f"checkpoint mirror of {self.location}: {exc}") from None
            if path is None:
                continue
            body = self._call("get_object", key, Key=key)["Body"].read()
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as handle:
                handle.write(body)
        self.uploaded = local_files(self.local_dir)
        self.committed = plan_sync(self.uploaded, {}).committed
        log.info(
            "checkpoint %s: %d files restored into %s%s",
            self.location,
            len(self.uploaded),
            self.local_dir,
            "" if self.committed is None else f" (last committed batch {self.committed})",
        )
        return len(self.uploaded)

    def sync(self) -> None:
        """Upload what the local checkpoint holds up to its last commit; delete what Spark
        deleted. Raises GlueError when S3 refuses past the retries."""
        plan = plan_sync(local_files(self.local_dir), self.uploaded)
        if not plan.uploads and not plan.deletes:
            return
        if self._hold is not None and plan.committed is not None and plan.committed >= self._hold:
            self._hold = None
            log.warning(
                HOLD_LINE.format(batch=plan.committed) + " (pid %d; %s, a test hook)",
                os.getpid(),
                HOLD_ENV,
            )
            self._stop.wait(HOLD_MAX_S)
        for relative in plan.uploads:
            path = os.path.join(self.local_dir, *relative.split("/"))
            try:
                with open(path, "rb") as handle:
                    body = handle.read()
                signature: Signature = (len(body), os.stat(path).st_mtime_ns)
            except FileNotFoundError:  # Spark's clean-up removed it meanwhile
                continue
            key = self._key(relative)
            self._call("put_object", key, Key=key, Body=body)
            self.uploaded[relative] = signature
        for relative in plan.deletes:
            key = self._key(relative)
            self._call("delete_object", key, Key=key)
            self.uploaded.pop(relative, None)
        if plan.committed != self.committed:
            self.committed = plan.committed
            log.info("checkpoint %s: batch %s uploaded", self.location, plan.committed)

    # -- the thread ------------------------------------------------------------------

    def start(self) -> None:
        self._thread = threading.Thread(
            target=self._run, name="kinesis-dstream-checkpoint-mirror", daemon=True
        )
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(POLL_S):
            try:
                self.sync()
            except BaseException as exc:  # handed to the owner, which fails the job
                self.error = exc
                log.error("checkpoint mirror stopped: %s", exc)
                return

    def check(self) -> None:
        """Raise the thread's error, if it has one (the owner calls this between waits)."""
        if self.error is not None:
            raise GlueError(
                f"{self.error} (the local checkpoint {self.local_dir} has batches S3 does "
                "not; they run again at the next start)"
            ) from None

    def discard(self) -> None:
        """Remove the local copy (a restore that failed: nothing ran on it)."""
        shutil.rmtree(self.local_dir, ignore_errors=True)

    def close(self) -> None:
        """Stop and join the thread, upload what is committed, remove the local copy."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(JOIN_S)
            if self._thread.is_alive():
                raise GlueError(
                    f"checkpoint mirror of {self.location}: its thread did not end within "
                    f"{JOIN_S:g} s; the local checkpoint {self.local_dir} is kept"
                )
        self.check()
        self._hold = None
        self.sync()
        shutil.rmtree(self.local_dir, ignore_errors=True)


def _hold_batch() -> Optional[int]:
    value = os.environ.get(HOLD_ENV, "").strip()
    return int(value) if value else None
