"""A few threads that read for many shards, each read when it is due.

A kcl daemon holding a thousand idle shards reads each once a second. With a thread a
shard, each read is also a thread waking from a timed wait and taking its turn of the
GIL among a thousand others: measured on 2 cores, 1,024 threads reading once a second
cost 0.31 ms of CPU a read where 64 threads reading the same shards cost 0.19. A
:class:`ReadPool` keeps the waits in one place instead: a schedule (a heap of due times)
kept by one scheduler thread, and ``threads`` workers that run each step as it falls
due. A step is one read of one shard (:class:`~.prefetch.ShardPrefetch` hands over its
next read with :meth:`ReadPool.call_at`); steps run in due order, at most
:data:`TICK_S` late (the scheduler hands over what fell due since its last look), and
a step due now goes to the workers at once. Steps due together go to a worker in runs
sized from their measured wall time (:data:`RUN_S`): a thread wakes for a few dozen
quick reads, or for each read that waits on the network.

What a worker runs must not wait long: a read has its client's timeouts and its retries'
bounded backoff, and a shard's next read is scheduled, never slept for. A step that
raises is a bug of its owner: logged, and the worker goes on.

The pool owns its threads: :meth:`stop` signals them, drops the steps not yet run and
joins every thread within one deadline (a thread still in a read is reported, and ends
when the read returns). Its owner stops it after the steps' owners have stopped.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import queue
import threading
import time
from typing import Callable, Optional

log = logging.getLogger(__name__)

Step = Callable[[], None]
#: The scheduler's longest wait with nothing scheduled (a stop wakes it at once).
IDLE_WAIT_S = 1.0
#: The scheduler's shortest wait: it wakes at most this often and hands over every step
#: due by then, so however many shards it serves it wakes at most a hundred times a
#: second, not once a read (each wake of a thread costs the interpreter tens of
#: microseconds and a turn of the GIL). A step runs at most this late, never early: 5%
#: of the shortest idle time between a shard's reads Kinesis allows (200 ms).
TICK_S = 0.01
#: A worker is handed the steps due together in runs that should take about this long
#: (from the steps' measured wall time): reads answered in a fraction of a millisecond go
#: a few dozen to a wake, reads that wait on the network one to a worker, as many at a
#: time as there are workers.
RUN_S = 0.005
#: The most steps in one run.
MAX_RUN = 32


class ReadPool:
    """``threads`` workers and one scheduler; see the module. Thread-safe."""

    def __init__(
        self,
        name: str,
        threads: int,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep_until: Optional[Callable[[threading.Event, float], bool]] = None,
    ) -> None:
        if threads < 1:
            raise ValueError(f"a read pool needs at least 1 thread, got {threads}")
        self.name = name
        self.size = threads
        self._clock = clock
        #: Waits up to the given seconds or until the event is set (tests inject time).
        self._sleep_until = sleep_until or (lambda event, seconds: event.wait(seconds))
        self._lock = threading.Lock()
        self._schedule: list = []  # (due, tiebreak, step), under _lock
        self._order = itertools.count()
        self._changed = threading.Event()  # an earlier step, or the stop
        self._ready: queue.SimpleQueue[Optional[tuple]] = queue.SimpleQueue()  # runs of steps
        #: A step's wall time, smoothed (written by the workers; a float, read as is).
        self._step_s = 0.001
        self._stopping = threading.Event()
        self._threads: list = []

    def start(self) -> ReadPool:
        with self._lock:
            if self._threads:
                raise RuntimeError(f"read pool {self.name} was already started")
            self._threads.append(
                threading.Thread(target=self._keep_schedule, name=f"{self.name}-schedule")
            )
            self._threads += [
                threading.Thread(target=self._work, name=f"{self.name}-{n}")
                for n in range(self.size)
            ]
            for thread in self._threads:
                thread.daemon = True
                thread.start()
        return self

    def call_at(self, due: float, step: Step) -> None:
        """Run ``step`` on a worker once the pool's clock reaches ``due``; a stopped pool
        drops it (its owner has stopped too)."""
        if self._stopping.is_set():
            return
        if due <= self._clock():
            self._ready.put((step,))
            return
        with self._lock:
            heapq.heappush(self._schedule, (due, next(self._order), step))
            earliest = self._schedule[0][2] is step
        if earliest:
            self._changed.set()

    def _keep_schedule(self) -> None:
        while not self._stopping.is_set():
            self._changed.clear()  # before looking: a later call_at sets it again
            with self._lock:
                now = self._clock()
                due = []
                while self._schedule and self._schedule[0][0] <= now:
                    due.append(heapq.heappop(self._schedule)[2])
                wait_s = self._schedule[0][0] - now if self._schedule else None
            run = max(1, min(MAX_RUN, int(RUN_S / max(self._step_s, 1e-6))))
            for start in range(0, len(due), run):
                self._ready.put(tuple(due[start : start + run]))
            if wait_s is None:
                self._changed.wait(IDLE_WAIT_S)  # nothing scheduled: real time, bounded
            else:
                self._sleep_until(self._changed, max(wait_s, TICK_S))

    def _work(self) -> None:
        while True:
            run = self._ready.get()
            if run is None:
                return
            for step in run:
                if self._stopping.is_set():
                    return
                started = time.monotonic()
                try:
                    step()
                except Exception:  # the step's owner handles its own errors: this is a bug
                    log.exception("read pool %s: a step failed", self.name)
                self._step_s += 0.1 * (time.monotonic() - started - self._step_s)

    def stop(self, timeout_s: float) -> list:
        """Stop and join every thread within ``timeout_s``; steps not yet run are dropped.

        Returns the names of threads still running (each in a read) at the deadline."""
        deadline = time.monotonic() + max(0.0, timeout_s)
        self._stopping.set()
        self._changed.set()
        with self._lock:
            self._schedule.clear()
            threads = list(self._threads)
        for _ in range(self.size):
            self._ready.put(None)
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        alive = [thread.name for thread in threads if thread.is_alive()]
        if alive:
            log.error(
                "%d thread(s) of read pool %s still in a read %.1fs after the stop; each "
                "ends when its read returns: %s",
                len(alive),
                self.name,
                timeout_s,
                ", ".join(alive),
            )
        return alive

    def threads_alive(self) -> int:
        """Threads of the pool still running (0 once :meth:`stop` joined them)."""
        with self._lock:
            return sum(1 for thread in self._threads if thread.is_alive())
