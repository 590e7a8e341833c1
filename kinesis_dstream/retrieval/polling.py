"""The polling transport: one shard's pages through GetShardIterator and GetRecords.

One GetShardIterator per reader, then ``NextShardIterator`` from page to page; GetRecords
paced to at most one call per ``min_call_interval_s`` per shard (Kinesis allows 5 a second
per shard, shared by every consumer); throttling and unavailability retried with one
:class:`~..backoff.Backoff`; an expired iterator re-made AFTER the last record received
(every record of a page reaches the reader whole, so no restart inside an aggregate is
needed here: that case is a read's *start*, :class:`~.start.StartPosition`).
"""

from __future__ import annotations

import functools
from typing import Optional

from ..backoff import call_with_retry, is_throttling
from ..errors import DependencyError, KinesisServiceError
from . import lean_get_records
from .config import ReaderConfig
from .transport import Page, ShardTransport

#: Error codes meaning "this iterator is no longer usable": make a new one.
ITERATOR_GONE = frozenset({"ExpiredIteratorException"})
#: Fresh iterators one page may take after expiries before it gives up (a loop that
#: keeps expiring is a clock or service problem to report, not to spin on).
MAX_ITERATOR_RENEWALS_PER_PAGE = 3


class PollingTransport(ShardTransport):
    """GetRecords pages of one shard; not thread-safe (one reader owns it)."""

    def __init__(self, config: ReaderConfig, iterator: Optional[str] = None) -> None:
        self._config = config
        #: A shard iterator to continue from (a previous read's), else made from ``start``.
        self._iterator: Optional[str] = iterator
        #: The iterator the last page was read with (None before the first page): where
        #: that page began, so another reader can read the same records from it.
        self.page_iterator: Optional[str] = None
        self._last_call_at: Optional[float] = None
        self.iterators_renewed = 0
        #: GetRecords calls answered with throttling (then retried).
        self.throttles = 0

    @property
    def iterator(self) -> Optional[str]:
        """The iterator the next page comes from (None before the first, or at end)."""
        return self._iterator

    def _where(self, operation: str) -> dict:
        return {
            "operation": operation,
            "stream_name": self.stream_name,
            "shard_id": self.shard_id,
            "client": self.client,
        }

    def _new_iterator(self) -> str:
        args = self.resume_position().iterator_args()
        self.calls += 1
        response = call_with_retry(
            functools.partial(
                self.client.get_shard_iterator,
                StreamName=self.stream_name,
                ShardId=self.shard_id,
                **args,
            ),
            self._config.backoff,
            sleep=self._sleep,
            clock=self._clock,
            **self._where("GetShardIterator"),
        )
        return response["ShardIterator"]

    def _count_retry(self, exc: BaseException) -> None:
        if is_throttling(exc):
            self.throttles += 1

    def _pace(self) -> None:
        if self._last_call_at is not None:
            wait = self._config.min_call_interval_s - (self._clock() - self._last_call_at)
            if wait > 0:
                self._sleep(wait)
        self._last_call_at = self._clock()

    def next_page(self, limit: int) -> Page:
        renewals = 0
        while True:
            if self._iterator is None:
                self._iterator = self._new_iterator()
            self._pace()
            self.calls += 1
            try:
                response = call_with_retry(
                    functools.partial(
                        lean_get_records.get_records, self.client, self._iterator, limit
                    ),
                    self._config.backoff,
                    sleep=self._sleep,
                    clock=self._clock,
                    on_retry=self._count_retry,
                    **self._where("GetRecords"),
                )
                break
            except KinesisServiceError as exc:
                if exc.code not in ITERATOR_GONE:
                    raise
                if renewals >= MAX_ITERATOR_RENEWALS_PER_PAGE:  # retried on a later read
                    raise DependencyError(
                        f"{renewals + 1} shard iterators in a row expired before use",
                        code=exc.code,
                        operation="GetRecords",
                        stream_name=self.stream_name,
                        shard_id=self.shard_id,
                        endpoint=exc.endpoint,
                        region=exc.region,
                    ) from exc
                self._iterator = None
                self.iterators_renewed += 1
                renewals += 1
        records = response["Records"]
        if records:
            self._received_through = records[-1]["SequenceNumber"]
        self.page_iterator = self._iterator
        self._iterator = response.get("NextShardIterator")
        millis = response.get("MillisBehindLatest")
        ended = self._iterator is None
        children = None
        if ended and "ChildShards" in response:
            children = tuple(child["ShardId"] for child in response["ChildShards"])
        return Page(records, millis, at_tip=not millis, shard_ended=ended, children=children)
