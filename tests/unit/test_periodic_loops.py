"""Periodic loops (a lease worker's, a receiver's): a failing pass is retried, and reported
at a bounded rate (an outage of DynamoDB is not a traceback every renewal interval)."""

from __future__ import annotations

import logging
import threading
import time

from kinesis_dstream.periodic import PeriodicLoops
from tests.support.waiting import wait_until

LOGGER = "kinesis_dstream.leases.coordinator"


def test_failing_passes_are_reported_once_with_a_traceback_then_the_recovery(caplog):
    caplog.set_level(logging.INFO, logger=LOGGER)
    passes = []
    lock = threading.Lock()

    def work() -> None:
        with lock:
            passes.append(time.monotonic())
            n = len(passes)
        if n <= 5:
            raise RuntimeError(f"table unreachable (pass {n})")

    loops = PeriodicLoops("lease", "worker-1", "worker worker-1", logging.getLogger(LOGGER))
    loops.spawn("renewer", 0.01, work)
    try:
        wait_until(
            lambda: any("works again" in r.getMessage() for r in caplog.records),
            timeout_s=20,
            what="the loop's line that the renewer works again",
        )
    finally:
        loops.stop(time.monotonic() + 10)
    assert not _alive("lease-renewer-worker-1")
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1, [r.getMessage() for r in errors]
    assert "lease renewer pass of worker worker-1 failed" in errors[0].getMessage()
    assert "table unreachable (pass 1)" in errors[0].getMessage()
    assert errors[0].exc_info is not None  # a bug's traceback is kept
    [recovered] = [r for r in caplog.records if "works again" in r.getMessage()]
    assert "after 5 failure(s) in a row" in recovered.getMessage()
    assert len(passes) >= 6  # the loop went on after every failed pass


def test_a_stop_ends_a_loop_whose_every_pass_fails(caplog):
    caplog.set_level(logging.ERROR, logger=LOGGER)
    failed = threading.Event()

    def work() -> None:
        failed.set()
        raise RuntimeError("still down")

    loops = PeriodicLoops("lease", "worker-2", "worker worker-2", logging.getLogger(LOGGER))
    loops.spawn("taker", 0.01, work)
    try:
        wait_until(failed.is_set, timeout_s=10, what="a failed taker pass")
    finally:
        loops.stop(time.monotonic() + 10)
    assert not _alive("lease-taker-worker-2")
    assert len([r for r in caplog.records if r.levelno >= logging.ERROR]) == 1


def test_a_woken_loop_runs_at_once_and_a_stop_ends_it_through_its_wake():
    """A receiver's checkpointer: an hour's interval, yet a completed shard end runs it now."""
    passes = []
    ran = threading.Event()

    def work() -> None:
        passes.append(time.monotonic())
        ran.set()

    wake = threading.Event()
    loops = PeriodicLoops("kinesis", "stream-1", "stream s", logging.getLogger(LOGGER))
    loops.spawn("checkpointer", 3600.0, work, wake)
    try:
        woken_at = time.monotonic()
        wake.set()
        wait_until(ran.is_set, timeout_s=10, what="the woken pass")
        assert passes[0] - woken_at < 5  # not the hour's interval
    finally:
        loops.stop(time.monotonic() + 10, wake)
    assert not _alive("kinesis-checkpointer-stream-1")
    assert len(passes) == 1


def _alive(name: str) -> bool:
    return any(t.name == name for t in threading.enumerate())
