"""A fake clock for code that takes its clock and its sleep as arguments."""

from __future__ import annotations


class FakeTime:
    """A clock that the code's sleeps advance: waits are recorded in ``sleeps``, never
    slept."""

    def __init__(self, now: float = 0.0) -> None:
        self.now = now
        self.sleeps: list = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds
