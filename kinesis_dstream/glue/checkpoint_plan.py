"""Which files of a local Spark checkpoint go to its S3 mirror, and in which order.

Spark's checkpoint of a micro-batch query: ``metadata`` (the query's id), ``sources/``
(a source's initial offset, for sources that keep one), ``offsets/N`` (written before
batch N runs), ``commits/N`` (written once batch N has run and its sink is done),
``state/`` (stateful operators; store version N+1 is batch N's). The mirror copies what
a restart needs to resume after the last committed batch, and never more, so that S3
never holds a ``commits/N`` without its ``offsets/N``, nor an ``offsets/N`` whose batch
has not committed (a batch in progress locally is planned again after a restart from S3,
from where the last committed one ended: its records are read again, none is skipped).

Uploads of one sync go in this order: other files (``metadata``, ``sources/``,
``state/`` up to the committed version), then ``offsets/k``, then ``commits/k``, each in
ascending batch order; then deletes (Spark's own clean-up of old batches), ``commits/k``
before ``offsets/k``. Hidden files (Hadoop's ``.crc`` files, Spark's ``.tmp`` files
before their rename) are never copied.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Optional

#: A local file's signature: (size, modification time in ns). Checkpoint files are
#: written once; a changed signature (a rewritten ``metadata``) is uploaded again.
Signature = tuple

_BATCH_FILE = re.compile(r"^(offsets|commits)/(\d+)$")
_STATE_VERSION = re.compile(r"^(\d+)(?:_[^/]*)?\.(delta|snapshot|zip|changelog)$")


@dataclass(frozen=True)
class SyncPlan:
    """One sync: relative paths to upload (in order), then to delete (in order)."""

    committed: Optional[int]
    uploads: tuple = ()
    deletes: tuple = ()


def batch_of(relative: str) -> Optional[tuple]:
    """``("offsets", 7)`` for ``offsets/7``; None for any other file."""
    match = _BATCH_FILE.match(relative)
    return (match.group(1), int(match.group(2))) if match else None


def last_commit(files: Iterable[str]) -> Optional[int]:
    """The highest N with ``commits/N`` among ``files`` (relative paths)."""
    commits = [b[1] for b in map(batch_of, files) if b is not None and b[0] == "commits"]
    return max(commits, default=None)


def is_mirrored(relative: str, committed: int) -> bool:
    """Whether the file belongs in S3 once batch ``committed`` has committed."""
    if any(part.startswith(".") for part in relative.split("/")):
        return False  # .crc, .tmp
    batch = batch_of(relative)
    if batch is not None:
        return batch[1] <= committed
    if relative.startswith("state/"):
        match = _STATE_VERSION.match(relative.rsplit("/", 1)[-1])
        return match is None or int(match.group(1)) <= committed + 1
    return True


def _upload_rank(relative: str) -> tuple:
    batch = batch_of(relative)
    if batch is None:
        return (0, 0, relative)
    return (1 if batch[0] == "offsets" else 2, batch[1], relative)


def _delete_rank(relative: str) -> tuple:
    batch = batch_of(relative)
    if batch is None:
        return (2, 0, relative)
    return (0 if batch[0] == "commits" else 1, batch[1], relative)


def plan_sync(local: Mapping[str, Signature], uploaded: Mapping[str, Signature]) -> SyncPlan:
    """What to upload and delete so that S3 holds the checkpoint as of the last local
    commit. ``local``: the local checkpoint's files; ``uploaded``: what S3 holds (as this
    mirror put or restored it). Nothing is planned before the first commit."""
    committed = last_commit(local)
    if committed is None:
        return SyncPlan(None)
    wanted = {path: sig for path, sig in local.items() if is_mirrored(path, committed)}
    uploads = [path for path, sig in wanted.items() if uploaded.get(path) != sig]
    # A file Spark deleted locally (its clean-up of old batches) goes from S3 too; one
    # not yet due (an uncommitted batch's offsets) and still local stays where it is.
    deletes = [path for path in uploaded if path not in local]
    return SyncPlan(
        committed,
        tuple(sorted(uploads, key=_upload_rank)),
        tuple(sorted(deletes, key=_delete_rank)),
    )


def local_files(root: str) -> dict:
    """Every file under ``root`` as {relative path with ``/``: signature}."""
    found = {}
    for directory, _, names in os.walk(root):
        for name in names:
            path = os.path.join(directory, name)
            try:
                stat = os.stat(path)
            except FileNotFoundError:  # Spark renamed or deleted it meanwhile
                continue
            relative = os.path.relpath(path, root).replace(os.sep, "/")
            found[relative] = (stat.st_size, stat.st_mtime_ns)
    return found


def restored_path(root: str, prefix: str, key: str, skip: tuple) -> Optional[str]:
    """Where S3 object ``key`` (under ``prefix``) goes in local ``root`` on a restore;
    None for what is not Spark's (a "directory" placeholder, the range ends kept under
    the checkpoint: ``skip``). A key that would leave ``root`` is refused."""
    relative = key[len(prefix) :].lstrip("/") if prefix else key
    if not relative or relative.endswith("/") or relative.split("/", 1)[0] in skip:
        return None
    parts = relative.split("/")
    if any(part in ("", ".", "..") for part in parts):
        raise ValueError(f"checkpoint object {key!r} is not a path inside the checkpoint")
    return os.path.join(root, *parts)
