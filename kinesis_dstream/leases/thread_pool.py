"""A fixed pool of worker threads whose shutdown is bounded in time.

``concurrent.futures.ThreadPoolExecutor`` cannot join its threads with a timeout, and a
lease call may hang until its client times out. This pool owns its threads: ``shutdown``
cancels the calls not yet started, asks every thread to stop, joins each within one
deadline and reports the threads still running (each ends when its call returns).
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from concurrent.futures import Future
from typing import Any, Callable, Optional

log = logging.getLogger(__name__)

_Task = Optional[tuple]  # (future, fn, args), or None: the stop signal for one thread


class ThreadPool:
    """``size`` daemon threads running submitted calls, returning futures."""

    def __init__(self, name: str, size: int) -> None:
        if size < 1:
            raise ValueError(f"a worker pool needs at least 1 thread, got {size}")
        self.name = name
        self.size = size
        self._tasks: queue.SimpleQueue[_Task] = queue.SimpleQueue()
        self._threads: list = []
        self._closed = False
        self._lock = threading.Lock()

    def start(self) -> ThreadPool:
        with self._lock:
            if self._threads or self._closed:
                raise RuntimeError(f"worker pool {self.name} was already started")
            for n in range(self.size):
                thread = threading.Thread(target=self._work, name=f"{self.name}-{n}", daemon=True)
                thread.start()
                self._threads.append(thread)
        return self

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future:
        """Queue ``fn(*args)``; raises RuntimeError once the pool is shut down."""
        future: Future = Future()
        with self._lock:
            if self._closed or not self._threads:
                raise RuntimeError(f"worker pool {self.name} is not running")
            self._tasks.put((future, fn, args))
        return future

    def _work(self) -> None:
        while True:
            task = self._tasks.get()
            if task is None:
                return
            future, fn, args = task
            if not future.set_running_or_notify_cancel():
                continue  # cancelled while queued
            try:
                result = fn(*args)
            except BaseException as exc:  # handed to whoever waits on the future
                future.set_exception(exc)
            else:
                future.set_result(result)

    def shutdown(self, timeout_s: float) -> list:
        """Cancel queued calls, stop every thread, join all within ``timeout_s``.

        Returns the names of threads still running a call at the deadline.
        """
        deadline = time.monotonic() + max(0.0, timeout_s)
        with self._lock:
            if self._closed:
                return [t.name for t in self._threads if t.is_alive()]
            self._closed = True
            while True:  # cancel what no thread has started yet
                try:
                    task = self._tasks.get_nowait()
                except queue.Empty:
                    break
                if task is not None:
                    task[0].cancel()
            for _ in self._threads:
                self._tasks.put(None)
        for thread in self._threads:
            thread.join(timeout=max(0.0, deadline - time.monotonic()))
        alive = [t.name for t in self._threads if t.is_alive()]
        if alive:
            log.error(
                "%d thread(s) of pool %s still in a call after %.1fs; each ends when its "
                "call returns: %s",
                len(alive),
                self.name,
                timeout_s,
                ", ".join(alive),
            )
        return alive
