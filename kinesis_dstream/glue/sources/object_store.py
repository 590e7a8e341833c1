"""Opening a file a batch read reads, in the process that reads it: local, or S3 through
pyarrow's S3 filesystem (pip-installed PySpark has no S3 filesystem of its own).

pyarrow's filesystem reads objects natively (ranged reads for Parquet and ORC footers,
streams for the text formats, decompressed by extension or by ``compressionType``). It
is configured as every AWS client of the library is, in this process: region
(:func:`~kinesis_dstream.aws.resolve_region`), endpoint (the S3 client's, so
``AWS_ENDPOINT_URL_S3`` / ``AWS_ENDPOINT_URL`` apply) and boto3's default credential
chain; one filesystem a process, made again when the credentials change (a role's
rotate). Credentials are never logged nor passed in options.
"""

from __future__ import annotations

import os
import threading
from typing import Any, Optional

from ...aws import ClientSpec, resolve_region
from ...sql.ends.s3 import is_s3_url, parse_s3_url

#: Attempts of each S3 request (pyarrow's AWS standard retry strategy).
S3_ATTEMPTS = 8
_LOCK = threading.Lock()
_SETTINGS: dict = {}
_FILESYSTEMS: dict = {}


def _settings() -> tuple:
    """(boto3 session, S3 endpoint, region) of this process, resolved once: the session
    keeps its credentials (a role's are refreshed by botocore when they near expiry)."""
    import boto3

    with _LOCK:
        found = _SETTINGS.get(os.getpid())  # a forked worker resolves its own
        if found is None:
            endpoint = ClientSpec("s3").client().meta.endpoint_url
            found = (boto3.session.Session(), endpoint, resolve_region())
            _SETTINGS.clear()
            _SETTINGS[os.getpid()] = found
        return found


def _s3_filesystem() -> Any:
    from pyarrow import fs  # type: ignore[import-untyped]

    session, endpoint, region = _settings()
    credentials = session.get_credentials()
    frozen = credentials.get_frozen_credentials() if credentials is not None else None
    key = (os.getpid(), frozen)
    with _LOCK:
        found = _FILESYSTEMS.get(key)
        if found is None:
            _FILESYSTEMS.clear()  # the old credentials' filesystem: no longer used here
            scheme, _, host = endpoint.partition("://")
            found = fs.S3FileSystem(
                access_key=frozen.access_key if frozen else None,
                secret_key=frozen.secret_key if frozen else None,
                session_token=frozen.token if frozen else None,
                anonymous=frozen is None,
                region=region,
                endpoint_override=host,
                scheme=scheme,
                retry_strategy=fs.AwsStandardS3RetryStrategy(max_attempts=S3_ATTEMPTS),
            )
            _FILESYSTEMS[key] = found
        return found


def _located(path: str) -> tuple:
    """(filesystem, its path) of ``s3://bucket/key`` or a local path."""
    if is_s3_url(path):
        bucket, key = parse_s3_url(path)
        return _s3_filesystem(), f"{bucket}/{key}"
    from pyarrow import fs

    return fs.LocalFileSystem(), path


def open_stream(path: str, compression: Optional[str] = None) -> Any:
    """A sequential input stream of ``path``, decompressed: ``compression`` (pyarrow's
    codec name) or, when None, by the file's extension (``.gz``, ``.bz2``...)."""
    filesystem, located = _located(path)
    return filesystem.open_input_stream(located, compression=compression or "detect")


def open_random(path: str) -> Any:
    """A random-access file of ``path`` (Parquet and ORC read their footer first)."""
    filesystem, located = _located(path)
    return filesystem.open_input_file(located)
