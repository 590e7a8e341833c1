"""Which files a batch read reads: Glue's ``paths``, ``recurse``, ``exclusions``,
``excludeStorageClasses`` and bounds, listed on the driver; then the read's groups.

A path naming an object (or a local file) is that file; any other path is a folder:
its files, and with ``recurse`` those of every folder below it. As Hadoop's listing (and
so Spark's and Glue's), names starting with ``_`` or ``.`` (``_SUCCESS``, ``.crc``) and
folder markers are not data, nor is any file in a folder so named below the path given
(``_spark_metadata/``, ``_temporary/``, ``.hidden/``): one rule (:func:`is_hidden_below`)
for S3 and local paths. ``exclusions`` are Glue's glob patterns (the crawlers'
"Include and Exclude Patterns": ``*`` within a name, ``**`` across folders, ``?``,
``[abc]``, ``[!abc]``, ``{a,b}``), matched against a file's path below the path given,
its key and its whole URL. Files are read in path order; ``boundedFiles`` and
``boundedSize`` keep the first files within the bound.

S3 is listed with ``ListObjectsV2`` through the library's clients (region, endpoint and
credentials as everywhere: ``AWS_ENDPOINT_URL_S3``...), each page retried with
:data:`LIST_BACKOFF`; a missing bucket is one line naming it.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Optional
from urllib.parse import urlparse

from ...aws import ClientSpec
from ...backoff import Backoff, call_with_retry
from ...errors import KinesisServiceError
from ...sql.ends.s3 import is_s3_url, parse_s3_url
from ..errors import GlueError
from .s3_options import AUTO_GROUP_FILES, S3Read

log = logging.getLogger(__name__)

#: Retries of each listing call (throttling, unavailability).
LIST_BACKOFF = Backoff(initial_delay_s=0.2, max_delay_s=5.0, max_attempts=8, max_elapsed_s=60.0)


@dataclass(frozen=True)
class FileEntry:
    """One file to read: ``s3://bucket/key`` or a local absolute path; ``version`` tells
    one content of it from another (an S3 ETag, a local file's change time in ns)."""

    path: str
    size: int
    modified_ms: int
    version: str = ""


def is_hidden(name: str) -> bool:
    """Hadoop's rule for what is not data: ``_x``, ``.x``, folder markers."""
    return not name or name.startswith(("_", ".")) or name.endswith("_$folder$")


def is_hidden_below(relative: str) -> bool:
    """Whether a file at ``relative`` (its path below the path given, ``/``-separated; a
    file given by name: its name) is not data: its name or a folder's on the way is
    hidden (:func:`is_hidden`), as Hadoop's listing never enters such a folder."""
    *folders, name = relative.split("/")
    return is_hidden(name) or any(is_hidden(folder) for folder in folders if folder)


@lru_cache(maxsize=256)
def glob_regex(pattern: str) -> Any:
    """Glue's glob ``pattern`` as a compiled regular expression (whole-string match)."""
    out, i, depth = [], 0, 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        if c == "*":
            if pattern.startswith("**", i):
                out.append(".*")
                i += 2
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = pattern.find("]", i + 2)
            if end < 0:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : end]
                negate = body.startswith("!")
                body = body[1:] if negate else body
                out.append("[" + ("^" if negate else "") + body.replace("\\", "\\\\") + "]")
                i = end
        elif c == "{":
            out.append("(?:")
            depth += 1
        elif c == "}" and depth:
            out.append(")")
            depth -= 1
        elif c == "," and depth:
            out.append("|")
        else:
            out.append(re.escape(c))
        i += 1
    if depth:
        raise GlueError(f"s3 connection_options exclusions: {pattern!r} has an unclosed '{{'")
    try:
        return re.compile("".join(out), re.DOTALL)
    except re.error as exc:
        raise GlueError(f"s3 connection_options exclusions: {pattern!r}: {exc}") from None


def is_excluded(patterns: tuple, base: str, path: str) -> bool:
    """Whether ``path`` (a file under the path given, ``base``) matches a pattern."""
    relative = path[len(base) :].lstrip("/") if path.startswith(base) else path
    key = path.split("://", 1)[1].split("/", 1)[-1] if "://" in path else path
    return any(
        glob_regex(p).fullmatch(candidate) for p in patterns for candidate in (relative, key, path)
    )


def list_files(read: S3Read, client_spec: Optional[ClientSpec] = None) -> list:
    """The files of ``read``, in path order, excluded and bounded (see the module)."""
    found: dict = {}
    for given in read.paths:
        if is_s3_url(given):
            entries = _list_s3(given, read.recurse, client_spec or ClientSpec("s3"))
        else:
            entries = _list_local(given, read.recurse)
        base = given.rstrip("/")
        for entry in entries:
            if is_hidden_below(entry.relative) or is_excluded(read.exclusions, base, entry.path):
                continue
            if entry.storage_class in read.storage_classes:
                continue
            found.setdefault(
                entry.path, FileEntry(entry.path, entry.size, entry.modified_ms, entry.version)
            )
    files = [found[p] for p in sorted(found)]
    return _bounded(files, read)


def _bounded(files: list, read: S3Read) -> list:
    kept: list = []
    total = 0
    for entry in files:
        if read.bounded_files is not None and len(kept) >= read.bounded_files:
            break
        if read.bounded_bytes is not None and kept and total + entry.size > read.bounded_bytes:
            break
        kept.append(entry)
        total += entry.size
    if len(kept) < len(files):
        log.info("boundedFiles/boundedSize: reading %d of %d files", len(kept), len(files))
    return kept


def file_groups(files: list, read: S3Read) -> list:
    """The read's tasks: one file each, or (``groupFiles`` ``inPartition``, or past
    :data:`AUTO_GROUP_FILES` files unless ``none``) files packed up to ``groupSize``."""
    grouped = read.grouping == "inpartition" or (
        read.grouping == "auto" and len(files) > AUTO_GROUP_FILES
    )
    if not grouped:
        return [[f] for f in files]
    groups: list = []
    size = 0
    for entry in files:
        if not groups or size + entry.size > read.group_bytes:
            groups.append([])
            size = 0
        groups[-1].append(entry)
        size += entry.size
    return groups


@dataclass(frozen=True)
class _Listed:
    path: str
    size: int
    modified_ms: int
    storage_class: str = "STANDARD"
    version: str = ""
    #: The path below the path given (a file given by name: its name).
    relative: str = ""


def _list_s3(url: str, recurse: bool, client_spec: ClientSpec) -> list:
    try:
        bucket, prefix = parse_s3_url(url)
    except ValueError as exc:
        raise GlueError(f"s3 connection_options paths: {exc}") from None
    client = client_spec.client()
    if prefix and not url.endswith("/"):
        # an object named by the path is the first key of its prefix (keys sort bytewise)
        first = _pages(client, bucket, prefix, None, max_keys=1)
        if first and first[0].path == f"s3://{bucket}/{prefix}":
            return [dataclasses.replace(first[0], relative=prefix.rsplit("/", 1)[-1])]
    folder = f"{prefix}/" if prefix else ""
    return _pages(client, bucket, folder, None if recurse else "/")


def _pages(
    client: Any, bucket: str, prefix: str, delimiter: Optional[str], max_keys: int = 0
) -> list:
    """The objects under ``prefix`` (their ``relative`` path: the key after it)."""
    kwargs: dict = {"Bucket": bucket, "Prefix": prefix}
    if max_keys:
        kwargs["MaxKeys"] = max_keys
    if delimiter:
        kwargs["Delimiter"] = delimiter
    found: list = []
    while True:
        page = _call(client, bucket, prefix, kwargs)
        for item in page.get("Contents", []):
            if item["Key"].endswith("/"):
                continue  # a folder marker
            found.append(
                _Listed(
                    f"s3://{bucket}/{item['Key']}",
                    int(item.get("Size", 0)),
                    int(item["LastModified"].timestamp() * 1000),
                    str(item.get("StorageClass") or "STANDARD").upper(),
                    str(item.get("ETag") or ""),
                    item["Key"][len(prefix) :],
                )
            )
        if max_keys or not page.get("IsTruncated"):
            return found
        kwargs["ContinuationToken"] = page["NextContinuationToken"]


def _call(client: Any, bucket: str, prefix: str, kwargs: dict) -> dict:
    where = f"ListObjectsV2 of s3://{bucket}/{prefix}"
    try:
        return call_with_retry(
            lambda: client.list_objects_v2(**kwargs), LIST_BACKOFF, operation=where, client=client
        )
    except KinesisServiceError as exc:
        if exc.code == "NoSuchBucket":
            raise GlueError(
                f"s3 connection_options paths: bucket {bucket!r} does not exist at "
                f"{client.meta.endpoint_url}"
            ) from None
        raise


def _list_local(given: str, recurse: bool) -> list:
    parsed = urlparse(given)
    if parsed.scheme not in ("", "file"):
        raise GlueError(
            f"s3 connection_options paths: {given!r} is neither s3:// (s3a://) nor a local path"
        )
    path = os.path.abspath(parsed.path if parsed.scheme else given)
    if os.path.isfile(path):
        return [_local_entry(path, os.path.basename(path))]
    if not os.path.isdir(path):
        raise GlueError(f"s3 connection_options paths: {given!r} does not exist")
    found: list = []
    for folder, dirs, names in os.walk(path):
        # a hidden folder's files are left out by list_files; not walking it saves the time
        dirs[:] = sorted(d for d in dirs if not is_hidden(d)) if recurse else []
        for name in sorted(names):
            full = os.path.join(folder, name)
            found.append(_local_entry(full, os.path.relpath(full, path).replace(os.sep, "/")))
    return found


def _local_entry(path: str, relative: str) -> _Listed:
    stat = os.stat(path)
    return _Listed(
        path,
        stat.st_size,
        int(stat.st_mtime * 1000),
        version=str(stat.st_mtime_ns),
        relative=relative,
    )
