"""The end store a query's options name: a directory, a DynamoDB table or S3.

A source the Glue layer defines carries ``endsLocationFile`` (unless the script names a
store): the DataFrame is defined before ``forEachBatch`` knows its checkpoint, so the
place is resolved here, when the query's reader is built (the source runner and the
planner, both on the driver, after the query starts): the file holds the place
``forEachBatch`` wrote for it (inside its checkpoint). With no file (the frame started by
the script's own ``writeStream``) the documented default directory is used.
"""

from __future__ import annotations

import logging
from typing import Any

from ... import json_text
from ...errors import shown
from ..offsets import MAX_END_BYTES
from .s3 import S3EndStore
from .store import STORE_BACKOFF, DirectoryEndStore, DynamoDBEndStore, EndStore, EndStoreError

log = logging.getLogger(__name__)


def build_end_store(options: Any) -> EndStore:
    """From :class:`~.options.SourceOptions`."""
    store = options.end_store
    if store.kind == "deferred":
        store = resolve_deferred(store)
    backoff = store.backoff or STORE_BACKOFF
    if store.kind == "dynamodb":
        spec = options.connection.client_spec("dynamodb")
        return DynamoDBEndStore(store.table_name, spec, backoff)
    if store.kind == "s3":
        return S3EndStore.from_url(store.path, options.connection.client_spec("s3"), backoff)
    return DirectoryEndStore(store.path)


def resolve_deferred(store: Any) -> Any:
    """The :class:`~..config.end_store_options.EndStoreOptions` a deferred one's file names."""
    from ..config.end_store_options import DEFAULT_STORE_DIR, EndStoreOptions, end_store_at

    try:
        with open(store.path, "rb") as handle:
            data = handle.read(MAX_END_BYTES + 1)
    except FileNotFoundError:
        log.info(
            "range ends in %s: no forEachBatch named a checkpoint for this query",
            DEFAULT_STORE_DIR,
        )
        return EndStoreOptions("local", backoff=store.backoff)
    try:
        value = json_text.loads(data) if len(data) <= MAX_END_BYTES else None
    except ValueError:
        value = None
    place = value.get("metadataPath") if isinstance(value, dict) else None
    if not isinstance(place, str):
        raise EndStoreError(
            f"the range ends' place file {store.path} is not one forEachBatch writes "
            f'({{"metadataPath": "<directory or s3:// URL>"}}); read {shown(data[:200])}'
        )
    return end_store_at(place, f"the range ends' place {shown(place)}", store.backoff)
