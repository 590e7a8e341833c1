"""Which files of a local Spark checkpoint go to its S3 mirror, and in which order.

Spark's checkpoint of a micro-batch query: ``metadata`` (the query's id), ``sources/``
(a source's initial offset, for sources that keep one), ``offsets/N`` (written before
batch N runs), ``commits/N`` (written once batch N has run and its sink is done),
``state/`` (stateful operators; store version N+1 is batch N's). The mirror copies what
a restart needs to resume after the last committed batch, as Spark's own writes would:
S3 never holds a ``commits/N`` without its ``offsets/N``, nor the offsets of a batch past
the next one; the next batch's ``offsets`` go up once the last commit is there (a batch
in progress when the job dies runs again from those offsets, with the ends its tasks
recorded: exactly its records; a pinned LATEST in ``offsets/0`` is never lost).

Uploads of one sync go in this order: other files (``metadata``, ``sources/``,
``state/`` up to the committed version), then ``offsets/k``, then ``commits/k``, each
in ascending batch order, then the next batch's ``offsets``; then deletes (Spark's own
clean-up of old batches), ``commits/k`` before ``offsets/k``. Hidden files (Hadoop's
``.crc`` files, Spark's ``.tmp`` files before their rename) are never copied.
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
    """Whether the file belongs in S3 once batch ``committed`` has committed (-1: none
    has): the next batch's ``offsets`` too, as Spark writes them before running it."""
    if any(part.startswith(".") for part in relative.split("/")):
        return False  # .crc, .tmp
    batch = batch_of(relative)
    if batch is not None:
        return batch[1] <= (committed + 1 if batch[0] == "offsets" else committed)
    if relative.startswith("state/"):
        match = _STATE_VERSION.match(relative.rsplit("/", 1)[-1])
        return match is None or int(match.group(1)) <= committed + 1
    return True


def _upload_rank(relative: str, committed: int) -> tuple:
    batch = batch_of(relative)
    if batch is None:
        return (0, 0, relative)
    if batch[0] == "offsets":
        # the next batch's offsets only after the last commit: S3 holding offsets/N+1
        # without commits/N would have Spark treat batch N as done and skip it
        return (3 if batch[1] > committed else 1, batch[1], relative)
    return (2, batch[1], relative)


def _delete_rank(relative: str) -> tuple:
    batch = batch_of(relative)
    if batch is None:
        return (2, 0, relative)
    return (0 if batch[0] == "commits" else 1, batch[1], relative)


def plan_sync(local: Mapping[str, Signature], uploaded: Mapping[str, Signature]) -> SyncPlan:
    """What to upload and delete so that S3 holds the checkpoint as of the last local
    commit. ``local``: the local checkpoint's files; ``uploaded``: what S3 holds (as this
    mirror put or restored it). Before the first commit, what batch 0 starts from
    (``metadata``, ``sources/``, ``offsets/0``: a pinned LATEST lives there)."""
    committed = last_commit(local)
    upto = -1 if committed is None else committed
    wanted = {path: sig for path, sig in local.items() if is_mirrored(path, upto)}
    uploads = [path for path, sig in wanted.items() if uploaded.get(path) != sig]
    # A file Spark deleted locally (its clean-up of old batches) goes from S3 too; one
    # not yet due (an uncommitted batch's offsets) and still local stays where it is.
    deletes = [path for path in uploaded if path not in local]
    return SyncPlan(
        committed,
        tuple(sorted(uploads, key=lambda path: _upload_rank(path, upto))),
        tuple(sorted(deletes, key=_delete_rank)),
    )


def local_files(root: str) -> dict:
    """Every file under ``root`` as {relative path with ``/``: signature}, ``commits/``
    listed first: every file a listed commit needs (its offsets, its state) was written
    before it, so the later walk of the rest sees them however Spark goes on meanwhile."""
    found: dict = {}
    commits = os.path.join(root, "commits")
    for top in (commits, root):
        _walk_into(found, root, top, skip=commits if top == root else None)
    return found


def _walk_into(found: dict, root: str, top: str, skip: Optional[str]) -> None:
    for directory, subdirectories, names in os.walk(top):
        if skip is not None and directory == root:
            subdirectories[:] = [d for d in subdirectories if os.path.join(root, d) != skip]
        for name in names:
            path = os.path.join(directory, name)
            try:
                stat = os.stat(path)
            except FileNotFoundError:  # Spark renamed or deleted it meanwhile
                continue
            relative = os.path.relpath(path, root).replace(os.sep, "/")
            found[relative] = (stat.st_size, stat.st_mtime_ns)


def restored_path(root: str, prefix: str, key: str, skip: tuple) -> Optional[str]:
    """Where S3 object ``key`` (under ``prefix``) goes in local ``root`` on a restore;
    None for what is not Spark's (a "directory" placeholder, the range ends kept under
    the checkpoint: ``skip``). A key that would leave ``root``, or holds a NUL (no file
    can be named so), is refused."""
    relative = key[len(prefix) :].lstrip("/") if prefix else key
    if not relative or relative.endswith("/") or relative.split("/", 1)[0] in skip:
        return None
    parts = relative.split("/")
    if any(part in ("", ".", "..") or "\x00" in part for part in parts):
        raise ValueError(f"checkpoint object {key!r} is not a path inside the checkpoint")
    return os.path.join(root, *parts)
