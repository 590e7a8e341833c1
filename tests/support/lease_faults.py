"""Fault injection by wrapping a lease store (the KCL's test habit), never by mocking.

:class:`FaultyRefresher` wraps any :class:`~kinesis_dstream.leases.refresher.
LeaseRefresher` and lets a test make chosen calls of a named method raise, or hang until
released; every other call goes to the real store, which stays the ground truth.
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

#: A hung call gives up after this long, so a test that forgets to release leaves no
#: thread behind for long; tests release their hangs well before.
HANG_LIMIT_S = 30.0


@dataclass
class _Rule:
    method: str
    calls: Optional[set]  # 1-based call numbers, None: every call
    error: Optional[Callable[[], BaseException]] = None
    release: Optional[threading.Event] = None  # a hang until set
    entered: threading.Event = field(default_factory=threading.Event)
    key: Optional[str] = None  # only calls about this lease key

    def matches(self, method: str, n: int, key: Optional[str]) -> bool:
        if method != self.method or (self.key is not None and key != self.key):
            return False
        return self.calls is None or n in self.calls


class FaultyRefresher:
    """A lease store whose chosen calls raise or hang; counts every call per method."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls: Counter = Counter()
        self._rules: list = []
        self._lock = threading.Lock()

    def fail(
        self,
        method: str,
        error: Callable[[], BaseException],
        *,
        on_call: Optional[int] = None,
        key: Optional[str] = None,
    ) -> _Rule:
        """``method``'s ``on_call``-th call (1-based; every call if None) raises ``error()``.

        With ``key``, only calls about that lease count and fail.
        """
        rule = _Rule(method, None if on_call is None else {on_call}, error=error, key=key)
        with self._lock:
            self._rules.append(rule)
        return rule

    def hang(self, method: str, *, on_call: Optional[int] = None, key: Optional[str] = None):
        """``method``'s matching calls block until the returned rule's ``release`` is set."""
        rule = _Rule(
            method,
            None if on_call is None else {on_call},
            release=threading.Event(),
            key=key,
        )
        with self._lock:
            self._rules.append(rule)
        return rule

    def heal(self) -> None:
        """Remove every rule and release every hang."""
        with self._lock:
            rules, self._rules = self._rules, []
        for rule in rules:
            if rule.release is not None:
                rule.release.set()

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.inner, name)
        if not callable(attr):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            key = _lease_key(args)
            with self._lock:
                self.calls[name] += 1
                n = self.calls[(name, key)] = self.calls[(name, key)] + 1
                rules = [
                    r for r in self._rules if r.matches(name, n if r.key else self.calls[name], key)
                ]
            for rule in rules:
                rule.entered.set()
                if rule.release is not None:
                    rule.release.wait(HANG_LIMIT_S)
                if rule.error is not None:
                    raise rule.error()
            return attr(*args, **kwargs)

        return call


def _lease_key(args: tuple) -> Optional[str]:
    if not args:
        return None
    first = args[0]
    return first if isinstance(first, str) else getattr(first, "lease_key", None)
