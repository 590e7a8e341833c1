"""A bounded window of reads: at most ``limit`` pages in flight or waiting to be used.

A round task reads its group of shards through it (:func:`~.executor_read.fetch`, the
reads yielded as they finish), and a batch re-reads a lost block's recorded ranges through
it (:func:`~.batch_read.deliver`, yielded in the recorded order). One rule for both: a
read starts only when an earlier one's result has been yielded and the caller has come
back for the next, so however many shards a task has, it holds at most ``limit`` pages
(up to 10 MiB each) at a time, the one the caller is using included.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Callable, TypeVar

T = TypeVar("T")
R = TypeVar("R")


def read_window(
    read: Callable[[T], R],
    items: Iterable[T],
    limit: int,
    in_order: bool,
    thread_name_prefix: str,
) -> Iterator[tuple[T, R]]:
    """``(item, read(item))`` for each of ``items``, read by at most ``limit`` threads.

    ``in_order``: yielded in the order of ``items``; else as the reads finish (reads
    finished together in the order of ``items``), so a slow read holds one slot while the
    others go on through the rest. A read that raises raises here, when its turn comes.
    Leaving early (the generator closed, the task killed) waits for the reads in flight.
    """
    pending = iter(items)
    first = list(itertools.islice(pending, limit))
    if not first:
        return
    with ThreadPoolExecutor(len(first), thread_name_prefix=thread_name_prefix) as pool:
        # future -> (position in items, item)
        window: dict[Future, tuple[int, T]] = {
            pool.submit(read, item): (n, item) for n, item in enumerate(first)
        }
        started = len(window)
        while window:
            if in_order:
                done = [min(window, key=lambda f: window[f][0])]
            else:
                finished, _ = wait(window, return_when=FIRST_COMPLETED)
                done = sorted(finished, key=lambda f: window[f][0])
            for future in done:
                _, item = window.pop(future)
                yield item, future.result()
                # Only now, the caller done with that page: the bound holds.
                for following in itertools.islice(pending, 1):
                    window[pool.submit(read, following)] = (started, following)
                    started += 1
