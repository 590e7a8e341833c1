"""boto3 client creation that follows the AWS SDK's own configuration conventions.

Region: the explicit argument, else ``AWS_REGION``, else ``AWS_DEFAULT_REGION`` or the
shared config profile (boto3's own chain). Endpoint: the explicit argument, else
botocore's ``AWS_ENDPOINT_URL_<SERVICE>`` / ``AWS_ENDPOINT_URL`` (boto3 applies them when
no endpoint is given). Credentials: explicit keys, else boto3's default chain.

botocore's own retries are turned off: callers retry with a :class:`~.backoff.Backoff`
so that attempts and time are bounded by one policy the user can configure.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from typing import Any, Optional

import boto3
from botocore.config import Config

DEFAULT_CONNECT_TIMEOUT_S = 5.0
DEFAULT_READ_TIMEOUT_S = 30.0


def resolve_region(region_name: Optional[str] = None) -> str:
    """The region to use, or a ValueError that says where a region may come from."""
    if region_name:
        return region_name
    region = os.environ.get("AWS_REGION") or boto3.session.Session().region_name
    if not region:
        raise ValueError(
            "no AWS region: pass region_name, or set AWS_REGION / AWS_DEFAULT_REGION, "
            "or a region in the shared AWS config file"
        )
    return region


def create_client(
    service: str,
    *,
    region_name: Optional[str] = None,
    endpoint_url: Optional[str] = None,
    aws_access_key_id: Optional[str] = None,
    aws_secret_access_key: Optional[str] = None,
    aws_session_token: Optional[str] = None,
    max_pool_connections: int = 10,
    read_timeout_s: float = DEFAULT_READ_TIMEOUT_S,
) -> Any:
    """A boto3 client for ``service`` with botocore retries off and bounded timeouts."""
    if (aws_access_key_id is None) != (aws_secret_access_key is None):
        raise ValueError(
            "aws_access_key_id and aws_secret_access_key go together: give both or neither"
        )
    session = boto3.session.Session(
        aws_access_key_id=aws_access_key_id,
        aws_secret_access_key=aws_secret_access_key,
        aws_session_token=aws_session_token,
    )
    config = Config(
        retries={"total_max_attempts": 1},
        connect_timeout=DEFAULT_CONNECT_TIMEOUT_S,
        read_timeout=read_timeout_s,
        max_pool_connections=max_pool_connections,
    )
    return session.client(
        service,
        region_name=resolve_region(region_name),
        endpoint_url=endpoint_url or None,
        config=config,
    )


@dataclass(frozen=True)
class ClientSpec:
    """How to build a client, not the client: picklable into Spark tasks, holds no secret.

    Credentials come from boto3's default chain where the client is built (environment,
    profiles, container or instance role), so none travels in a task or a checkpoint.
    :meth:`client` builds one client per spec per process and reuses it, so an executor's
    Python worker pays for client creation once, not once per task.
    """

    service: str
    region_name: Optional[str] = None
    endpoint_url: Optional[str] = None

    def client(self) -> Any:
        key = (os.getpid(), self)  # a forked worker must not reuse its parent's client
        with _CLIENTS_LOCK:
            client = _CLIENTS.get(key)
            if client is None:
                client = create_client(
                    self.service, region_name=self.region_name, endpoint_url=self.endpoint_url
                )
                _CLIENTS[key] = client
            return client


#: Per-process client cache for ClientSpec.client; boto3 clients are thread-safe.
_CLIENTS: dict = {}
_CLIENTS_LOCK = threading.Lock()
