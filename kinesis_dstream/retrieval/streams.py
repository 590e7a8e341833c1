"""Stream administration used by the demos and tests: exists, create, wait until ACTIVE."""

from __future__ import annotations

import time
from typing import Any

from botocore.exceptions import ClientError

from ..backoff import error_code
from ..errors import StreamNotFoundError

_ACTIVE_TIMEOUT_S = 60.0
_POLL_S = 0.1


def stream_exists(client: Any, stream_name: str) -> bool:
    try:
        client.describe_stream_summary(StreamName=stream_name)
    except ClientError as exc:
        if error_code(exc) == "ResourceNotFoundException":
            return False
        raise
    return True


def require_stream(client: Any, stream_name: str) -> None:
    """Raise StreamNotFoundError naming the stream and endpoint if it does not exist."""
    if not stream_exists(client, stream_name):
        raise StreamNotFoundError(
            f"stream {stream_name!r} does not exist at {client.meta.endpoint_url} "
            f"(region {client.meta.region_name})",
            operation="DescribeStreamSummary",
            stream_name=stream_name,
            code="ResourceNotFoundException",
        )


def ensure_stream(client: Any, stream_name: str, shard_count: int) -> bool:
    """Create the stream if missing and wait until it is ACTIVE. True if it was created."""
    if shard_count < 1:
        raise ValueError(f"shard count must be >= 1, got {shard_count}")
    created = False
    if not stream_exists(client, stream_name):
        try:
            client.create_stream(StreamName=stream_name, ShardCount=shard_count)
            created = True
        except ClientError as exc:
            if error_code(exc) != "ResourceInUseException":  # created concurrently: fine
                raise
    wait_active(client, stream_name)
    return created


def wait_active(client: Any, stream_name: str, timeout_s: float = _ACTIVE_TIMEOUT_S) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        summary = client.describe_stream_summary(StreamName=stream_name)
        status = summary["StreamDescriptionSummary"]["StreamStatus"]
        if status == "ACTIVE":
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"stream {stream_name!r} still {status} after {timeout_s:.0f}s")
        time.sleep(_POLL_S)


def list_shards(client: Any, stream_name: str) -> list:
    """Every shard of the stream (ListShards entries), following NextToken the AWS way."""
    shards: list = []
    kwargs: dict = {"StreamName": stream_name}
    while True:
        page = client.list_shards(**kwargs)
        shards.extend(page["Shards"])
        token = page.get("NextToken")
        if not token:
            return shards
        kwargs = {"NextToken": token}  # ListShards rejects StreamName beside NextToken


def list_shard_ids(client: Any, stream_name: str) -> list:
    return [shard["ShardId"] for shard in list_shards(client, stream_name)]


def child_shard_ids(client: Any, stream_name: str, shard_id: str) -> list:
    """Shards whose parent or adjacent parent is ``shard_id`` (after a split or merge).

    For servers whose GetRecords does not return ``ChildShards`` at shard end.
    """
    return [
        shard["ShardId"]
        for shard in list_shards(client, stream_name)
        if shard_id in (shard.get("ParentShardId"), shard.get("AdjacentParentShardId"))
    ]
