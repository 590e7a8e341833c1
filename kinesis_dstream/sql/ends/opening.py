"""The end store a query's options name: a directory, a DynamoDB table or S3."""

from __future__ import annotations

from typing import Any

from .s3 import S3EndStore
from .store import STORE_BACKOFF, DirectoryEndStore, DynamoDBEndStore, EndStore


def build_end_store(options: Any) -> EndStore:
    """From :class:`~.options.SourceOptions`."""
    store = options.end_store
    backoff = store.backoff or STORE_BACKOFF
    if store.kind == "dynamodb":
        spec = options.connection.client_spec("dynamodb")
        return DynamoDBEndStore(store.table_name, spec, backoff)
    if store.kind == "s3":
        return S3EndStore.from_url(store.path, options.connection.client_spec("s3"), backoff)
    return DirectoryEndStore(store.path)
