"""Where the source's executors record each range's real end: the end store the options
name (the awslabs connector's ``metadataCommitterType``, ``metadataPath``,
``dynamodb.tableName``; the Glue layer's place file), checked when the options are."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Optional

from ...backoff import Backoff
from ...errors import shown
from ..ends.s3 import is_s3_url, parse_s3_url
from .connection import OptionError

#: Expanded in each process: shared by the driver and executors only if they share a home.
DEFAULT_STORE_DIR = os.path.join("~", ".kinesis_dstream", "sql-ends")


@dataclass(frozen=True)
class EndStoreOptions:
    """Where executors record each range's real end (see :mod:`..ends.store`)."""

    #: "local" (a directory), "s3" (path is s3://bucket/prefix), "dynamodb", or
    #: "deferred" (path is a file naming the place when the query starts: the Glue layer's
    #: default inside the query's checkpoint, see :mod:`..ends.opening`)
    kind: str = "local"
    path: str = DEFAULT_STORE_DIR
    table_name: Optional[str] = None
    #: The awslabs connector's metadataNumRetries / metadataRetryIntervalsMs / ...Max...
    backoff: Optional[Backoff] = None


def end_store_options(found: dict, backoff: Optional[Backoff]) -> EndStoreOptions:
    """The end store the canonical options name (awslabs' ``metadataCommitterType``,
    ``metadataPath``, ``dynamodb.tableName``; the Glue layer's ``endsLocationFile``), its
    calls retried with ``backoff`` (the ``metadata*Retr*`` options)."""
    kind = str(found.get("metadataCommitterType", ("", "HDFS"))[1]).strip().upper()
    if kind not in ("HDFS", "DYNAMODB"):
        key = found["metadataCommitterType"][0]
        raise OptionError(f"option {key!r} must be HDFS or DYNAMODB, got {shown(kind)}")
    if kind == "DYNAMODB":
        if "dynamodbTableName" not in found:
            raise OptionError(
                "option 'metadataCommitterType'=DYNAMODB needs option 'dynamodb.tableName'"
            )
        if "metadataPath" in found:
            raise OptionError("option 'metadataPath' applies only to metadataCommitterType=HDFS")
        table = str(found["dynamodbTableName"][1])
        return EndStoreOptions("dynamodb", table_name=table, backoff=backoff)
    if "dynamodbTableName" in found:
        raise OptionError("option 'dynamodb.tableName' needs metadataCommitterType=DYNAMODB")
    if "metadataPath" in found:
        key, value = found["metadataPath"]
        return end_store_at(str(value), f"option {key!r}", backoff)
    if "endsLocationFile" in found:  # the Glue layer's: resolved when the query starts
        path = str(found["endsLocationFile"][1]).strip()
        return EndStoreOptions("deferred", path=path, backoff=backoff)
    return EndStoreOptions("local", backoff=backoff)


def end_store_at(
    path: str, where: str = "option 'metadataPath'", backoff: Optional[Backoff] = None
) -> EndStoreOptions:
    """The end store at ``path`` as ``metadataPath`` names one: a directory or S3."""
    path = path.strip()
    if path.startswith("file://"):
        path = path[len("file://") :]
    if is_s3_url(path):
        try:
            bucket, prefix = parse_s3_url(path)
        except ValueError as exc:
            raise OptionError(f"{where}: {exc}") from None
        return EndStoreOptions("s3", path=f"s3://{bucket}/{prefix}", backoff=backoff)
    if "://" in path:
        raise OptionError(
            f"{where}: {shown(path)} is neither S3 nor a local or mounted directory; this "
            "pure-Python source writes range ends to S3 (s3://bucket/prefix, or s3a://), to "
            "a directory every executor and the driver see (NFS, EFS), or to DynamoDB "
            "(metadataCommitterType=DYNAMODB, dynamodb.tableName=...)"
        )
    path = os.path.abspath(os.path.expanduser(path))
    return EndStoreOptions("local", path=path, backoff=backoff)
