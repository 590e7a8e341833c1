"""Stopping a long-running command (the local AWS server, the kcl daemon) on a signal."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator


@contextlib.contextmanager
def stop_signals() -> Iterator[threading.Event]:
    """An event set by SIGINT (Ctrl-C) or SIGTERM, installed before anything is printed.

    A process started in the background by a shell script inherits SIGINT as *ignored*,
    and Python then raises no KeyboardInterrupt: Ctrl-C would never stop the server. The
    previous handlers come back on exit.
    """
    stop = threading.Event()
    signals = (signal.SIGINT, signal.SIGTERM)
    previous = {s: signal.signal(s, lambda *_: stop.set()) for s in signals}
    try:
        yield stop
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
