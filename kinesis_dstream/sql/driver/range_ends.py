"""Where the ranges of a committed offset really ended, as the runner reads them back.

Each range's end was recorded in the end store by the task that first read it. The
runner reads it back (once; then from its cache) to know each shard's next position. A
range with no recorded end was read by no task and is fixed as empty, so a later task
reads nothing either; unless the store in use is not the one earlier batches wrote to
(its query marker was missing): then going on would deliver a committed batch's records
again, and that is an error naming what to restore.
"""

from __future__ import annotations

import logging
from typing import Any

from ...backoff import RetryLog
from ..ends.store import EndStore, EndStoreError
from ..offsets import Offset, RangeEnd, range_key
from ..positions import describe

log = logging.getLogger(__name__)


class RangeEnds:
    """The recorded ends of one stream's ranges; lives in the runner process."""

    def __init__(self, store: EndStore, stream: str) -> None:
        self.store = store
        self.stream = stream
        self._ends: dict = {}  # range key -> RangeEnd, as resolved
        self._marked: dict = {}  # query -> its marker existed before this process
        self._created: set = set()  # queries this process started
        self._planned: set = set()  # range keys this process planned
        #: Ends of committed ranges a clean-up could not delete (they stay in the store).
        self.ends_not_deleted = 0
        self._delete_failures = RetryLog(
            log, f"deleting old range ends of stream {stream!r} from {store.description}"
        )

    def mark(self, query: str, created: bool = False) -> None:
        """Note the query's marker in the store (``created``: this process started it)."""
        if created:
            self._created.add(query)
        if query not in self._marked:
            self._marked[query] = self.store.mark(query)

    def planned(self, end: Offset) -> None:
        """The ranges of an offset this process planned (their ends may not exist yet)."""
        self._planned.update(range_key(end, s, r) for s, r in end.ranges().items())

    def end_of(self, start: Offset, shard_id: str, entry: Any) -> tuple:
        """(the recorded end of ``entry``, True if it was read from the store just now)."""
        key = range_key(start, shard_id, entry)
        end = self._ends.get(key)
        if end is not None:
            return end, False
        end = self.store.get(key)
        if end is None:
            self._check_missing(start, shard_id, entry, key)
            # no task read this range (e.g. a plan that never scanned the source):
            # fix it as empty, so a task that reads it later reads nothing either
            log.warning(
                "no recorded end for the range of shard %s from %s in %s; fixing it as empty",
                shard_id,
                describe(entry.start),
                self.store.description,
            )
            end = self.store.put_if_absent(key, RangeEnd(0, entry.start))
        self._ends[key] = end
        return end, True

    def forget(self, keys: list) -> None:
        """Delete committed ranges' ends that no replay can need any more. A delete that
        fails (a role without the store's delete permission, an outage) is counted in
        :attr:`ends_not_deleted` and reported at a bounded rate, never raised: the query
        goes on and the ends stay in the store."""
        for key in keys:
            self._ends.pop(key, None)
        try:
            self.store.delete(keys)
        except Exception as exc:
            self.ends_not_deleted += len(keys)
            self._delete_failures.failed(exc)
        else:
            self._delete_failures.succeeded()

    def _check_missing(self, start: Offset, shard_id: str, entry: Any, key: str) -> None:
        """Fail when a range's end is missing because the end store was lost.

        A task records a range's end before it yields a record, so with the store intact
        a missing end means no task read the range. But when this process had to create
        the query's marker, the store it sees is not the one earlier batches wrote to
        (deleted, or ``metadataPath`` changed): fixing the range as empty would read its
        records again, after a committed batch delivered them.
        """
        if self._marked.get(start.query, True) or start.query in self._created:
            return
        if key in self._planned:
            return
        raise EndStoreError(
            f"the end of range {key} (stream {self.stream!r}, shard {shard_id}, "
            f"{describe(entry.start)}) is missing from the end store "
            f"({self.store.description}), and this store held no marker for query "
            f"{start.query}: the store earlier batches wrote to was lost or option "
            "'metadataPath' (or 'dynamodb.tableName') changed. Restore it, point the option "
            "back at it, or start over with a new checkpointLocation; going on would deliver "
            "a committed batch's records again"
        )
