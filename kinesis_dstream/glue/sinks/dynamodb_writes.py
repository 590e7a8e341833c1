"""One task's writes to a DynamoDB table: ``BatchWriteItem`` requests of up to 25 items,
paced, retried, never dropped.

- **Requests**: up to 25 puts or 16 MB (DynamoDB's limits). Two rows of the same key in
  one request would be refused by DynamoDB ("Provided list of item keys contains
  duplicates"); the later one replaces the earlier, as writing them one by one would
  leave the table (counted).
- **Pace**: a token bucket of the task's share of the table's write capacity
  (:meth:`~.dynamodb_target.TableShape.units_per_task`), each item costing a write unit
  a started KB (DynamoDB's rule).
- **Throttling** of a call (``ProvisionedThroughputExceededException``...) is retried
  ``dynamodb.output.retry`` times (Glue's option); past that the task fails.
- **UnprocessedItems** are sent again, and again, with backoff, until DynamoDB takes
  them or :data:`UNPROCESSED_BACKOFF`'s time is spent: then the task fails naming the
  table and the count. The batch then runs again (forEachBatch): at least once, as Glue.
- **A row DynamoDB cannot take** (no value for a key attribute, a key of the wrong type,
  empty or over DynamoDB's length, an item over 400 KB, a NaN or a number past
  DynamoDB's range) is not written: counted by reason, the first named, never a silent
  drop; the other rows are written.
- **A request DynamoDB refuses whole** (``ValidationException``: an item it cannot take
  that the checks above did not foresee fails the request's other items with it) is
  sent again an item a request: the item refused again is counted and named with
  DynamoDB's reason, the others are written. Each item is sent alone once: a refusal is
  never retried.

Pure of Spark: the client, the clock and the sleep are given (tests inject them).
"""

from __future__ import annotations

import functools
import random
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from ...backoff import Backoff, call_with_retry, endpoint_of
from ...errors import KinesisServiceError, ThrottledError
from ...token_bucket import TokenBucket
from .dynamodb_types import UnwritableValue, item_size, row_text

#: DynamoDB's limits of one BatchWriteItem and one item.
MAX_REQUEST_ITEMS = 25
MAX_REQUEST_BYTES = 16 * 1024 * 1024
MAX_ITEM_BYTES = 400 * 1024
#: The longest key values (UTF-8 or binary bytes): a partition key's, a sort key's.
MAX_KEY_BYTES = (2048, 1024)
KEY_ROLES = ("partition", "sort")
#: The code of a request DynamoDB refuses for what it holds.
REFUSED = "ValidationException"
#: One write unit a started KB.
WRITE_UNIT_BYTES = 1024
#: Unprocessed items are sent again until DynamoDB takes them or this time is spent
#: (the connector Glue builds on gives up after 10 minutes too).
UNPROCESSED_BACKOFF = Backoff(
    initial_delay_s=0.05, max_delay_s=3.0, max_attempts=1_000_000, max_elapsed_s=600.0
)
#: How one throttled call is retried; its attempts are ``dynamodb.output.retry`` + 1.
THROTTLE_BACKOFF = Backoff(
    initial_delay_s=0.1, max_delay_s=3.0, max_attempts=11, max_elapsed_s=600.0
)
#: The first rows not written are named in full; later ones only counted.
NAMED_SKIPS = 3


@dataclass
class WriteCounts:
    """What one task wrote, and what it could not."""

    written: int = 0
    replaced: int = 0  # rows written over by a later row of the same key in one request
    requests: int = 0
    resent: int = 0  # unprocessed items sent again
    refused_requests: int = 0  # requests refused whole, then sent again an item each
    skipped: Counter = field(default_factory=Counter)  # reason -> rows
    skipped_rows: list = field(default_factory=list)  # the first few, described

    def add(self, other: WriteCounts) -> None:
        self.written += other.written
        self.replaced += other.replaced
        self.requests += other.requests
        self.resent += other.resent
        self.refused_requests += other.refused_requests
        self.skipped.update(other.skipped)
        self.skipped_rows.extend(other.skipped_rows[: max(0, NAMED_SKIPS - len(self.skipped_rows))])


class TableWriter:
    """Puts items into ``table`` in paced ``BatchWriteItem`` requests; :meth:`flush` at
    the end sends the last one. ``keys``: the table's key attributes (name -> ``S``,
    ``N`` or ``B``), the partition key first."""

    def __init__(
        self,
        client: Any,
        table: str,
        keys: dict,
        units_per_s: float,
        retry: int = THROTTLE_BACKOFF.max_attempts - 1,
        unprocessed: Backoff = UNPROCESSED_BACKOFF,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        rng: Callable[[], float] = random.random,
    ) -> None:
        self.client = client
        self.table = table
        self.keys = keys
        self.counts = WriteCounts()
        self._pace = TokenBucket(units_per_s, clock=clock)
        self._throttle = Backoff(
            initial_delay_s=THROTTLE_BACKOFF.initial_delay_s,
            max_delay_s=THROTTLE_BACKOFF.max_delay_s,
            max_attempts=retry + 1,
            max_elapsed_s=THROTTLE_BACKOFF.max_elapsed_s,
        )
        self._unprocessed = unprocessed
        self._sleep = sleep
        self._clock = clock
        self._rng = rng
        self._pending: dict = {}  # key values -> (item, size)
        self._pending_bytes = 0

    def put_all(self, items: Iterable[Any]) -> None:
        for item in items:
            self.put(item)

    def put(self, item: Any) -> None:
        """Queue ``item`` (a DynamoDB item, or an :class:`UnwritableValue` standing for a
        row that has none); a full request goes out first."""
        if isinstance(item, UnwritableValue):
            self._skip("a value with no DynamoDB attribute", str(item))
            return
        problem = self._key_problem(item)
        size = item_size(item)
        if problem is None and size > MAX_ITEM_BYTES:
            problem = f"item of {size} bytes, over DynamoDB's 400 KB"
        if problem is not None:
            self._skip(problem, item_text(item))
            return
        key = tuple(next(iter(item[name].values())) for name in self.keys)
        if key in self._pending:
            self.counts.replaced += 1
            self._pending_bytes -= self._pending.pop(key)[1]
        elif (
            len(self._pending) >= MAX_REQUEST_ITEMS
            or self._pending_bytes + size > MAX_REQUEST_BYTES
        ):
            self.flush()
        self._pending[key] = (item, size)
        self._pending_bytes += size

    def flush(self) -> None:
        """Send what is queued (paced, retried: see the module)."""
        if not self._pending:
            return
        items = [item for item, _ in self._pending.values()]
        units = sum(-(-size // WRITE_UNIT_BYTES) or 1 for _, size in self._pending.values())
        self._pending, self._pending_bytes = {}, 0
        wait = self._pace.take(units)
        if wait > 0:
            self._sleep(wait)
        self._send([{"PutRequest": {"Item": item}} for item in items])

    def _send(self, requests: list) -> None:
        started = self._clock()
        retry = 0
        while True:
            try:
                answer = call_with_retry(
                    functools.partial(
                        self.client.batch_write_item, RequestItems={self.table: requests}
                    ),
                    self._throttle,
                    operation=f"BatchWriteItem to table {self.table}",
                    client=self.client,
                    sleep=self._sleep,
                    clock=self._clock,
                    rng=self._rng,
                )
            except KinesisServiceError as exc:
                if exc.code != REFUSED:
                    raise
                self._refused(requests, exc)
                return
            self.counts.requests += 1
            left = (answer.get("UnprocessedItems") or {}).get(self.table) or []
            self.counts.written += len(requests) - len(left)
            if not left:
                return
            elapsed = self._clock() - started
            budget = self._unprocessed
            if elapsed >= budget.max_elapsed_s or retry + 1 >= budget.max_attempts:
                raise ThrottledError(
                    f"BatchWriteItem to table {self.table}: {len(left)} items still unprocessed "
                    f"after {retry + 1} attempts in {elapsed:.0f} s; the batch fails and runs "
                    "again (nothing is dropped)",
                    operation="BatchWriteItem",
                    code="UnprocessedItems",
                    **endpoint_of(self.client),
                )
            self.counts.resent += len(left)
            self._sleep(self._unprocessed.delay_s(retry, self._rng))
            retry += 1
            requests = left

    def _refused(self, requests: list, exc: KinesisServiceError) -> None:
        """DynamoDB refused ``requests`` whole: each sent again alone, so only the item
        it cannot take is left out (counted and named with DynamoDB's reason)."""
        self.counts.requests += 1
        if len(requests) > 1:
            self.counts.refused_requests += 1
            for request in requests:
                self._send([request])
            return
        reason = dynamodb_message(exc)
        self._skip(
            f"refused by DynamoDB ({REFUSED}: {reason})",
            item_text(requests[0]["PutRequest"]["Item"]),
        )

    def _key_problem(self, item: dict) -> Optional[str]:
        for (name, kind), limit, role in zip(self.keys.items(), MAX_KEY_BYTES, KEY_ROLES):
            attribute = item.get(name)
            if attribute is None:
                return f"no value for key attribute {name!r}"
            if kind not in attribute:
                return f"key attribute {name!r} is not of the table's type {kind}"
            if kind in ("S", "B"):
                value = attribute[kind]
                size = len(value.encode("utf-8")) if kind == "S" else len(value)
                if size == 0:
                    return f"key attribute {name!r} is empty"
                if size > limit:
                    return f"{role} key {name!r} over DynamoDB's {limit} bytes"
        return None

    def _skip(self, reason: str, row: str) -> None:
        self.counts.skipped[reason] += 1
        if len(self.counts.skipped_rows) < NAMED_SKIPS:
            self.counts.skipped_rows.append(f"{reason}: {row}")


def item_text(item: dict) -> str:
    """An item's attributes as one short line for a log."""
    return row_text((k, next(iter(v.values()))) for k, v in item.items())


def dynamodb_message(exc: KinesisServiceError) -> str:
    """DynamoDB's own words for a refusal (its error message), else the error's."""
    cause = exc.__cause__
    response = getattr(cause, "response", None)
    if isinstance(response, dict):
        message = (response.get("Error") or {}).get("Message")
        if message:
            return str(message)
    return str(exc)
