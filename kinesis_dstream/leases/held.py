"""The leases one worker holds, each with its state; one lock and no I/O under it.

A held lease moves through :class:`LeaseState`::

    GAINING ──listener accepts──► WAITING_ON_PARENTS ──parents finished──► READY
       │                  └──────────(parents already known finished)─────────┘
       └──listener fails──► (released, no longer held)

    any state ──a KCL 3.x leader hands it to another worker──► HANDING_OFF
                 (renewed as its checkpoint owner until the transfer; not read again)

and leaves the registry when it is lost, fenced, released or finished. Only READY
leases are read. Self-fencing is judged here: a lease whose last successful write (a
renewal, a take or a checkpoint) was *sent* more than ``failover_time_s`` ago by this
worker's clock is given up, because other workers may already judge it expired.
"""

from __future__ import annotations

import enum
import threading
from dataclasses import dataclass, field
from typing import Callable, Optional

from .lease import Lease


class LeaseState(enum.Enum):
    GAINING = "gaining"  # taken; the lease-gained listener has not accepted it yet
    WAITING_ON_PARENTS = "waiting on parents"  # a parent shard may still have records
    READY = "ready"  # every parent lease is absent or finished: read this shard
    HANDING_OFF = "handing off"  # a KCL 3.x leader moved it: checkpoint, then transfer


_TRANSITIONS = {
    LeaseState.GAINING: {
        LeaseState.WAITING_ON_PARENTS,
        LeaseState.READY,
        LeaseState.HANDING_OFF,
    },
    LeaseState.WAITING_ON_PARENTS: {LeaseState.READY, LeaseState.HANDING_OFF},
    LeaseState.READY: {LeaseState.HANDING_OFF},
    LeaseState.HANDING_OFF: set(),
}


@dataclass(eq=False)
class HeldLease:
    """One held lease. Fields change under the registry's lock; writes to the store for
    this lease (renewal, checkpoint, release) go one at a time under ``write_lock``."""

    lease: Lease
    renewed_at: float  # clock time the last successful write was sent
    state: LeaseState = LeaseState.GAINING
    parents_done: bool = False  # known at take time; decides GAINING's next state
    renewing: bool = False  # a renewal is queued or running
    #: Clock time the first write (renewal, checkpoint, release) that got no answer was
    #: sent: it may have landed, so the next write reads the lease back first. Changed
    #: under ``write_lock`` only.
    unsure_since: Optional[float] = None
    write_lock: threading.Lock = field(default_factory=threading.Lock)
    #: Clock time a KCL 3.x leader started handing it to another worker (HANDING_OFF).
    handoff_since: Optional[float] = None
    #: Clock time it began to wait on its parents, and when the parent checker last read
    #: them (:func:`~.parents.check_parents` reads often at first, then less).
    waiting_since: Optional[float] = None
    parents_read_at: Optional[float] = None

    @property
    def key(self) -> str:
        return self.lease.lease_key


class HeldLeases:
    """Lease key -> :class:`HeldLease`, guarded by one lock; counts for metrics."""

    def __init__(self, failover_time_s: float, clock: Callable[[], float]) -> None:
        self.failover_time_s = failover_time_s
        self._clock = clock
        self._lock = threading.Lock()
        self._held: dict = {}
        #: taken/stolen by our taker, assigned by a KCL 3.x leader, handed off by us
        self._counts = {"taken": 0, "stolen": 0, "assigned": 0, "handed_off": 0, "lost": 0}
        self._closed = False
        #: Changes with every lease added, removed or moved to another state.
        self._version = 0

    @property
    def version(self) -> int:
        """A number that changes whenever the held leases or their states change: a
        reader of :meth:`leases` may skip the copy while it is the same (a daemon looks
        for ready leases without a worker five times a second)."""
        return self._version

    def add(self, entry: HeldLease, *, stolen: bool, assigned: bool = False) -> bool:
        """Hold ``entry``; False once closed (a take that landed while stopping)."""
        with self._lock:
            if self._closed:
                return False
            self._held[entry.key] = entry
            self._counts["assigned" if assigned else "stolen" if stolen else "taken"] += 1
            self._version += 1
            return True

    def get(self, key: str) -> Optional[HeldLease]:
        with self._lock:
            return self._held.get(key)

    def is_current(self, entry: HeldLease) -> bool:
        with self._lock:
            return self._held.get(entry.key) is entry

    def holds(self, key: str) -> bool:
        """Whether ``key`` is held and its last write is within the failover time."""
        now = self._clock()
        with self._lock:
            entry = self._held.get(key)
            return entry is not None and now - entry.renewed_at <= self.failover_time_s

    def keys(self) -> set:
        with self._lock:
            return set(self._held)

    def entries(self, state: Optional[LeaseState] = None) -> list:
        with self._lock:
            return [e for e in self._held.values() if state is None or e.state is state]

    def leases(self, state: Optional[LeaseState] = None) -> dict:
        with self._lock:
            return {
                key: e.lease for key, e in self._held.items() if state is None or e.state is state
            }

    def remove(self, entry: HeldLease, *, lost: bool, handed_off: bool = False) -> bool:
        """Forget ``entry`` if it is still the one held; True if it was."""
        with self._lock:
            if self._held.get(entry.key) is not entry:
                return False
            del self._held[entry.key]
            if lost or handed_off:
                self._counts["handed_off" if handed_off else "lost"] += 1
            self._version += 1
            return True

    def hand_off(self, entry: HeldLease, lease: Lease, since: float) -> bool:
        """A KCL 3.x leader gave ``entry`` to another worker (``lease`` as read: the new
        owner, us as checkpoint owner): HANDING_OFF from ``since``; False if not held."""
        with self._lock:
            if self._held.get(entry.key) is not entry or entry.state is LeaseState.HANDING_OFF:
                return False
            entry.lease = lease
            entry.state = LeaseState.HANDING_OFF
            entry.handoff_since = since
            self._version += 1
            return True

    def close(self) -> list:
        """Refuse new leases; remove and return every held one (at stop)."""
        with self._lock:
            self._closed = True
            entries, self._held = list(self._held.values()), {}
            self._version += 1
            return entries

    def reopen(self) -> None:
        with self._lock:
            self._closed = False

    def claim_for_renewal(self) -> tuple:
        """Mark every lease not already being renewed; returns (claimed, still in flight).

        Least recently renewed first: a lease that missed a pass is renewed first in the
        next one, so a pass that runs long never makes one lease miss two.
        """
        with self._lock:
            claimed = sorted(
                (e for e in self._held.values() if not e.renewing), key=lambda e: e.renewed_at
            )
            for entry in claimed:
                entry.renewing = True
            return claimed, len(self._held) - len(claimed)

    def renewal_done(self, entry: HeldLease) -> None:
        with self._lock:
            entry.renewing = False

    def written(self, entry: HeldLease, lease: Lease, sent_at: float) -> bool:
        """Record a successful write sent at ``sent_at``; False if no longer held."""
        with self._lock:
            if self._held.get(entry.key) is not entry:
                return False
            entry.lease = lease
            entry.renewed_at = max(entry.renewed_at, sent_at)
            return True

    def move(self, entry: HeldLease, state: LeaseState) -> bool:
        """Apply one transition of the table above; False if not held or not allowed."""
        with self._lock:
            if self._held.get(entry.key) is not entry or state not in _TRANSITIONS[entry.state]:
                return False
            entry.state = state
            if state is LeaseState.WAITING_ON_PARENTS:
                entry.waiting_since = self._clock()
            self._version += 1
            return True

    def parent_reads_due(self, interval_s: Optional[Callable[[float], float]] = None) -> list:
        """The leases waiting on parents whose parents should be read now, marked read:
        ``interval_s(seconds waited)`` apart per lease (at once when never read, or after
        :meth:`parents_due_now`); all of them without ``interval_s``."""
        now = self._clock()
        with self._lock:
            due = []
            for entry in self._held.values():
                if entry.state is not LeaseState.WAITING_ON_PARENTS:
                    continue
                waited = now - (entry.waiting_since if entry.waiting_since is not None else now)
                last = entry.parents_read_at
                if interval_s is None or last is None or now - last >= interval_s(waited):
                    entry.parents_read_at = now
                    due.append(entry)
            return due

    def parents_due_now(self) -> None:
        """A parent finished here: every waiting lease is due a read of its parents."""
        with self._lock:
            for entry in self._held.values():
                if entry.state is LeaseState.WAITING_ON_PARENTS:
                    entry.parents_read_at = None

    def fence(self) -> list:
        """Remove and return the entries not renewed within the failover time."""
        now = self._clock()
        with self._lock:
            stale = [e for e in self._held.values() if now - e.renewed_at > self.failover_time_s]
            for entry in stale:
                del self._held[entry.key]
            self._counts["lost"] += len(stale)
            if stale:
                self._version += 1
            return stale

    def counts(self) -> dict:
        with self._lock:
            return dict(self._counts)
