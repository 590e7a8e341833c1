"""Progress of long work a user waits for (producing, reading back, resetting a table).

On a terminal one line is redrawn in place (``\\r``) with a bar when the total is known;
elsewhere (a pipe, a log file, CI) plain lines, at most one per ``interval_s`` and one at
the end, so a log is not flooded.
"""

from __future__ import annotations

import sys
import time
from typing import Any, Callable, Optional

BAR_WIDTH = 24


class Progress:
    """Counts ``done`` towards ``total`` (None: unknown) under ``label``."""

    def __init__(
        self,
        label: str,
        total: Optional[int] = None,
        unit: str = "",
        out: Any = None,
        interval_s: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.label = label
        self.total = total
        self.unit = unit
        self.out = out or sys.stderr
        self.tty = bool(getattr(self.out, "isatty", lambda: False)())
        self.done = 0
        self._interval_s = interval_s
        self._clock = clock
        self._shown_at: Optional[float] = None
        self._closed = False

    def advance(self, n: int = 1) -> None:
        self.done += n
        now = self._clock()
        if self.tty or self._shown_at is None or now - self._shown_at >= self._interval_s:
            self._show()
            self._shown_at = now

    def close(self) -> None:
        """The final count (and, on a terminal, the end of the redrawn line)."""
        if self._closed:
            return
        self._closed = True
        self._show()
        if self.tty:
            print(file=self.out, flush=True)

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _show(self) -> None:
        unit = f" {self.unit}" if self.unit else ""
        if self.total:
            share = min(1.0, self.done / self.total)
            text = f"{self.label}: {self.done:,}/{self.total:,}{unit} ({share:.0%})"
            if self.tty:
                filled = int(share * BAR_WIDTH)
                text = f"{self.label}: [{'#' * filled}{'.' * (BAR_WIDTH - filled)}] " + text[
                    len(self.label) + 2 :
                ]
        else:
            text = f"{self.label}: {self.done:,}{unit}"
        if self.tty:
            print("\r" + text, end="", file=self.out, flush=True)
        else:
            print(text, file=self.out, flush=True)
