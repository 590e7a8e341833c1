"""Stopping a long-running command (the local AWS server, the kcl daemon, a Glue job) on a
signal: SIGINT (Ctrl-C) or SIGTERM."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class StopRequests:
    """Stop requests counted as they arrive (the handler runs in the main thread), for
    a command that answers the first and a later one differently."""

    def __init__(self) -> None:
        self.count = 0
        #: Set at each request; the command clears it once it has answered.
        self.event = threading.Event()

    def _arrived(self, *_: object) -> None:
        self.count += 1
        self.event.set()


@contextlib.contextmanager
def stop_signals(force_on_second: bool = False) -> Iterator[threading.Event]:
    """An event set by SIGINT (Ctrl-C) or SIGTERM, installed before anything is printed.

    A process started in the background by a shell script inherits SIGINT as *ignored*,
    and Python then raises no KeyboardInterrupt: Ctrl-C would never stop the server. The
    previous handlers come back on exit.

    ``force_on_second``: the first signal asks for a graceful stop and puts back the
    system's default action for both signals, so a second one ends the process at once
    (a stop that hangs can always be forced, and the exit is bounded).
    """
    stop = threading.Event()

    def first(*_: object) -> None:
        stop.set()
        if force_on_second:
            for s in SIGNALS:
                signal.signal(s, signal.SIG_DFL)

    with _handled(first):
        yield stop


@contextlib.contextmanager
def counted_stop_signals() -> Iterator[StopRequests]:
    """SIGINT and SIGTERM counted (see :class:`StopRequests`); the previous handlers come
    back on exit."""
    requests = StopRequests()
    with _handled(requests._arrived):
        yield requests


@contextlib.contextmanager
def _handled(handler: object) -> Iterator[None]:
    previous = {s: signal.signal(s, handler) for s in SIGNALS}  # type: ignore[arg-type]
    try:
        yield
    finally:
        for s, old in previous.items():
            signal.signal(s, old)
