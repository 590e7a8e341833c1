"""Stream administration: exists, require, create, wait until ACTIVE, list shards.

Every call goes through :func:`~..backoff.call_with_retry` with a short, bounded
:class:`~..backoff.Backoff`, so throttling, 5xx answers and connection errors are retried
and what remains is an error of our tree naming the operation, stream and endpoint.
"""

from __future__ import annotations

import functools
import logging
import time
from typing import Any, Optional

from botocore import xform_name

from ..backoff import Backoff, call_with_retry, endpoint_of
from ..errors import KinesisServiceError, StreamNotActiveError, StreamNotFoundError

log = logging.getLogger(__name__)

#: Admin calls are cheap to repeat; bounded so an unreachable endpoint fails in about a
#: second (refused) or ten (unanswered connects) instead of stalling a job's start.
ADMIN_BACKOFF = Backoff(initial_delay_s=0.1, max_delay_s=1.0, max_attempts=4, max_elapsed_s=10.0)

_ACTIVE_TIMEOUT_S = 60.0
_POLL_S = 0.1


def _call(client: Any, operation: str, stream_name: str, backoff: Backoff, **kwargs: Any) -> Any:
    method = getattr(client, xform_name(operation))
    return call_with_retry(
        functools.partial(method, **kwargs),
        backoff,
        operation=operation,
        stream_name=stream_name,
        client=client,
    )


def stream_exists(client: Any, stream_name: str, *, backoff: Backoff = ADMIN_BACKOFF) -> bool:
    """True if the stream exists (in any status) at the client's endpoint."""
    try:
        _call(client, "DescribeStreamSummary", stream_name, backoff, StreamName=stream_name)
    except StreamNotFoundError:
        return False
    return True


def require_stream(client: Any, stream_name: str, *, backoff: Backoff = ADMIN_BACKOFF) -> None:
    """Raise StreamNotFoundError naming the stream and endpoint if it does not exist."""
    if not stream_exists(client, stream_name, backoff=backoff):
        raise StreamNotFoundError(
            f"stream {stream_name!r} does not exist: is the name, region or endpoint wrong?",
            operation="DescribeStreamSummary",
            stream_name=stream_name,
            code="ResourceNotFoundException",
            **endpoint_of(client),
        )


def ensure_stream(
    client: Any, stream_name: str, shard_count: int, *, backoff: Backoff = ADMIN_BACKOFF
) -> bool:
    """Create the stream if missing and wait until it is ACTIVE. True if it was created."""
    if shard_count < 1:
        raise ValueError(f"shard count must be >= 1, got {shard_count}")
    created = False
    if not stream_exists(client, stream_name, backoff=backoff):
        try:
            _call(
                client,
                "CreateStream",
                stream_name,
                backoff,
                StreamName=stream_name,
                ShardCount=shard_count,
            )
            created = True
        except KinesisServiceError as exc:
            if exc.code != "ResourceInUseException":  # created concurrently: fine
                raise
    wait_active(client, stream_name, backoff=backoff)
    return created


def wait_active(
    client: Any,
    stream_name: str,
    timeout_s: float = _ACTIVE_TIMEOUT_S,
    *,
    backoff: Backoff = ADMIN_BACKOFF,
) -> None:
    """Poll until the stream is ACTIVE; StreamNotActiveError after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while True:
        summary = _call(
            client, "DescribeStreamSummary", stream_name, backoff, StreamName=stream_name
        )
        status = summary["StreamDescriptionSummary"]["StreamStatus"]
        if status == "ACTIVE":
            return
        if time.monotonic() > deadline:
            raise StreamNotActiveError(
                f"stream {stream_name!r} still {status} after {timeout_s:.0f}s",
                operation="DescribeStreamSummary",
                stream_name=stream_name,
                **endpoint_of(client),
            )
        time.sleep(_POLL_S)


def list_shards(
    client: Any,
    stream_name: str,
    *,
    backoff: Backoff = ADMIN_BACKOFF,
    max_results: Optional[int] = None,
) -> list:
    """Every shard of the stream (ListShards entries), following NextToken the AWS way.

    ``max_results`` is the page size (Databricks' maxShardsPerDescribe); None: the
    service's default.
    """
    shards: list = []
    page_size = {} if max_results is None else {"MaxResults": max_results}
    kwargs: dict = {"StreamName": stream_name, **page_size}
    while True:
        page = _call(client, "ListShards", stream_name, backoff, **kwargs)
        shards.extend(page["Shards"])
        token = page.get("NextToken")
        if not token:
            return shards
        # ListShards rejects StreamName beside NextToken
        kwargs = {"NextToken": token, **page_size}


def list_shard_ids(client: Any, stream_name: str, *, backoff: Backoff = ADMIN_BACKOFF) -> list:
    return [shard["ShardId"] for shard in list_shards(client, stream_name, backoff=backoff)]


def child_shard_ids(
    client: Any, stream_name: str, shard_id: str, *, backoff: Backoff = ADMIN_BACKOFF
) -> list:
    """Shards whose parent or adjacent parent is ``shard_id`` (after a split or merge).

    For servers whose GetRecords does not return ``ChildShards`` at shard end.
    """
    return [
        shard["ShardId"]
        for shard in list_shards(client, stream_name, backoff=backoff)
        if shard_id in (shard.get("ParentShardId"), shard.get("AdjacentParentShardId"))
    ]


def latest_iterator(client: Any, stream_name: str, shard_id: str) -> Optional[str]:
    """A LATEST iterator of the shard, or None (logged) when it cannot be had now: the
    caller then starts AT_TIMESTAMP of the moment it pinned as "latest" instead."""
    try:
        response = client.get_shard_iterator(
            StreamName=stream_name, ShardId=shard_id, ShardIteratorType="LATEST"
        )
    except Exception as exc:
        log.warning(
            "stream %s shard %s: no LATEST iterator (%s); reading starts AT_TIMESTAMP "
            "of the pin instead",
            stream_name,
            shard_id,
            exc,
        )
        return None
    return response["ShardIterator"]
