"""The tests' one polling loop: wait for a positive event, with a bound and a message."""

from __future__ import annotations

import time
from typing import Callable, Optional


def wait_until(
    predicate: Callable[[], object],
    timeout_s: float,
    what: str,
    *,
    interval_s: float = 0.1,
    failed: Optional[Callable[[], object]] = None,
    detail: Optional[Callable[[], str]] = None,
) -> object:
    """Poll ``predicate`` every ``interval_s`` until it returns something true; return that.

    Past ``timeout_s`` fail naming ``what``, with ``detail()`` (a process's log tail, say)
    after it. ``failed`` is asked before each poll: a true answer (a query's exception, a
    process that exited) is a failure at once, not a wait for the bound.
    """
    deadline = time.monotonic() + timeout_s
    while True:
        reason = failed() if failed is not None else None
        if reason:
            raise AssertionError(f"while waiting for {what}: {reason}")
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            extra = f"\n{detail()}" if detail is not None else ""
            raise AssertionError(f"not within {timeout_s:g} s: {what}{extra}")
        time.sleep(interval_s)


def seconds_until(
    predicate: Callable[[], object], timeout_s: float, what: str, *, interval_s: float = 0.05
) -> float:
    """How many seconds ``predicate`` took to come true, by :func:`wait_until` (its bound
    and message), polled finely enough to measure a failover."""
    started = time.monotonic()
    wait_until(predicate, timeout_s, what, interval_s=interval_s)
    return time.monotonic() - started
