"""Parent readiness: a child shard is read only once every parent shard is finished.

This keeps per-partition-key order across splits and merges. A held lease waits
(:attr:`~.held.LeaseState.WAITING_ON_PARENTS`) until each parent lease is absent or at
``SHARD_END``. The taker's scan answers for free when every parent is in it and
finished; otherwise consistent reads decide, on the coordinator's parent-checker thread
and never in a renewal, each lease's reads on their own so that a failed read only
delays that child. A lease that has just begun to wait has its parents read often
(:meth:`~.timing.LeaseTimings.parent_read_interval_s`), so a child whose last parent
another worker finishes starts within a fraction of a second; one finished here wakes
the checker at once.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from .held import HeldLeases, LeaseState
from .lease import Lease
from .refresher import LeaseRefresher

log = logging.getLogger(__name__)


def parents_finished(lease: Lease, scanned: Mapping[str, Lease]) -> bool:
    """Every parent lease is in the scan and finished.

    A parent absent from a scan is not judged: a scan is not a snapshot, so it may have
    missed a parent created during it. :func:`check_parents` decides with a read.
    """
    return all(p in scanned and scanned[p].is_finished for p in lease.parent_shard_ids)


def ready_from_scan(held: HeldLeases, scanned: Mapping[str, Lease]) -> None:
    """Move waiting leases whose parents the scan shows finished to READY."""
    for entry in held.entries(LeaseState.WAITING_ON_PARENTS):
        if parents_finished(entry.lease, scanned) and held.move(entry, LeaseState.READY):
            log.info("lease %s is ready: its parent shards are finished", entry.key)


def check_parents(table: LeaseRefresher, held: HeldLeases, entries: list) -> None:
    """Read the parents of the waiting leases ``entries``; READY once each is absent or
    finished."""
    finished: dict = {}  # parent key -> finished, shared by this check's leases
    for entry in entries:
        try:
            for parent in sorted(entry.lease.parent_shard_ids):
                if parent not in finished:
                    lease = table.get_lease(parent)
                    finished[parent] = lease is None or lease.is_finished
        except Exception as exc:  # this child waits for the next check; nothing else does
            log.warning("could not read the parents of lease %s: %s", entry.key, exc)
            continue
        done = all(finished[p] for p in entry.lease.parent_shard_ids)
        if done and held.move(entry, LeaseState.READY):
            log.info("lease %s is ready: its parent shards are finished", entry.key)
