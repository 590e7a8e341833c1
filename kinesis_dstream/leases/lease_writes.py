"""The rules every write to a held lease follows, and the checkpoint write.

- A write that raised (a timeout) may still have landed: :func:`unsure_write` remembers
  when it was sent, and the next write to that lease (renewal, checkpoint or release)
  first reads it back once (:func:`settle_unanswered`), as the KCL's ``renewLease`` does
  after a lost condition.
- A write that lost its condition may have met a KCL 3.x graceful handoff:
  :func:`handed_off_lease` is the one rule that tells a handoff from a loss.
- :func:`checkpoint_held` writes a held lease's checkpoint under its write lock, after
  settling an unanswered write; :class:`~.coordinator.LeaseCoordinator` calls it.
"""

from __future__ import annotations

import enum
import logging
from typing import Any, Callable, Optional

from ..errors import CheckpointError, DependencyError, LeaseLostError
from ..esn import ExtendedSequenceNumber
from .held import HeldLease, HeldLeases
from .lease import Lease
from .refresher import LeaseRefresher

log = logging.getLogger(__name__)


def unsure_write(entry: HeldLease, sent_at: float, write: Callable[..., Any], *args: Any) -> Any:
    """Run one write to ``entry``'s lease (caller holds its ``write_lock``); if it raises,
    it may still have landed: remember when it was sent, for :func:`settle_unanswered`."""
    try:
        return write(*args)
    except Exception:
        if entry.unsure_since is None:
            entry.unsure_since = sent_at
        raise


class Settled(enum.Enum):
    """What :func:`settle_unanswered` learnt of a lease whose last write got no answer."""

    #: Still ours (the write landed, or did not): write as planned.
    OURS = "ours"
    #: Another worker holds it now.
    LOST = "lost"
    #: A KCL 3.x leader began handing it off (us as checkpoint owner): the entry is
    #: HANDING_OFF with the lease as read, and the caller goes on as after a handoff.
    HANDED_OFF = "handed off"


def settle_unanswered(table: LeaseRefresher, held: HeldLeases, entry: HeldLease) -> Settled:
    """Before writing a lease whose last write got no answer, learn whether it landed.

    The caller holds ``entry.write_lock``. One read, one attempt (raises if it fails, and
    the doubt stays). Unchanged: the write did not land. Owner still ours and the counter
    one on: it landed (only one of our writes from this counter can), so that is the lease
    now, renewed when the first unanswered write was sent. Another owner with us as
    checkpoint owner: a handoff began (the rule of :func:`handed_off_lease`). Anything
    else: not ours.
    """
    since = entry.unsure_since
    if since is None:
        return Settled.OURS
    now = table.get_lease_once(entry.key)
    entry.unsure_since = None
    lease = entry.lease
    if now is None:
        return Settled.LOST
    if now.lease_owner != lease.lease_owner:
        if not _is_handoff_of(entry, now):
            return Settled.LOST
        log.info("lease %s: being handed off to %s (read back)", entry.key, now.lease_owner)
        if not held.hand_off(entry, now, since):
            entry.lease = now  # a stop's release: out of the table, ours under the write lock
        return Settled.HANDED_OFF
    if now.lease_counter == lease.lease_counter:
        return Settled.OURS
    if now.lease_counter != lease.lease_counter + 1:
        return Settled.LOST
    log.info("lease %s: a write that got no answer had landed (read back); still ours", entry.key)
    held.written(entry, now, since)
    return Settled.OURS


def handed_off_lease(table: LeaseRefresher, entry: HeldLease) -> Optional[Lease]:
    """After a write to ``entry``'s lease lost its condition: the one rule (for renewals,
    checkpoints and releases alike) that tells a KCL 3.x graceful handoff from a loss.

    One read. A lease that now names another owner and us as ``checkpointOwner`` (what
    the leader's ``initiateGracefulLeaseHandoff`` writes, counter unchanged) is being
    handed off: returned as read. None: another worker took it, or the handoff we
    already knew of (``entry.lease.checkpoint_owner`` set) ended.
    """
    if entry.lease.checkpoint_owner is not None:
        return None
    now = table.get_lease_once(entry.key)
    return now if now is not None and _is_handoff_of(entry, now) else None


def _is_handoff_of(entry: HeldLease, now: Lease) -> bool:
    """``now`` (the lease as read) hands ``entry``'s lease, not yet known to be handed
    off, from us to another owner, with us as checkpoint owner."""
    me = entry.lease.lease_owner
    return (
        entry.lease.checkpoint_owner is None
        and now.checkpoint_owner == me
        and now.lease_owner not in (None, me)
    )


def handoff_begun(table: LeaseRefresher, held: HeldLeases, entry: HeldLease, since: float) -> bool:
    """:func:`handed_off_lease`, and if so the held ``entry`` is HANDING_OFF from ``since``
    with the lease as read: its next writes are guarded by ``checkpointOwner``."""
    now = handed_off_lease(table, entry)
    return now is not None and held.hand_off(entry, now, since)


def write_checkpoint(
    table: LeaseRefresher,
    held: HeldLeases,
    entry: HeldLease,
    esn: ExtendedSequenceNumber,
    child_shard_ids: Optional[list],
    clock: Callable[[], float],
) -> tuple:
    """The checkpoint write itself; the caller holds ``entry.write_lock``. A position
    before the current checkpoint is refused; a successful write counts as a renewal.

    Returns (the lease as written or None, whether this write found a KCL 3.x handoff).
    A write that lost its condition because a handoff began (:func:`handoff_begun`) is
    written again as the lease's checkpoint owner, once: the application's last
    checkpoints belong to the old owner, and the caller tells the handoff listener.
    """
    current = entry.lease.checkpoint
    if esn < current:
        raise CheckpointError(
            f"cannot checkpoint shard {entry.key} at {esn}: it is before the current "
            f"checkpoint {current}"
        )
    children = frozenset(child_shard_ids) if child_shard_ids else None
    handoff = False
    for _ in range(2):
        sent_at = clock()
        written = unsure_write(entry, sent_at, table.checkpoint, entry.lease, esn, children)
        if written is not None:
            held.written(entry, written, sent_at)
            break
        if handoff or not handoff_begun(table, held, entry, sent_at):
            break
        handoff = True
        log.info(
            "lease %s: a checkpoint found the KCL 3.x handoff to %s: written as its "
            "checkpoint owner",
            entry.key,
            entry.lease.lease_owner,
        )
    return written, handoff


def checkpoint_held(
    table: LeaseRefresher,
    held: HeldLeases,
    entry: Optional[HeldLease],
    esn: ExtendedSequenceNumber,
    child_shard_ids: Optional[list],
    clock: Callable[[], float],
    *,
    shard_id: str,
    worker_id: str,
    lock_timeout_s: float,
    on_taken: Callable[[HeldLease, str], None],
) -> tuple:
    """Write ``esn`` to the held ``entry`` (None: not held) under its write lock, after
    settling a write that got no answer. Returns (the lease as written, whether a KCL
    3.x handoff was found). Raises, writing nothing, when the lease is not held, another
    write to it has not returned in ``lock_timeout_s``, or another worker took it (then
    ``on_taken(entry, reason)`` is called first).
    """
    if entry is None:
        raise LeaseLostError(
            f"cannot checkpoint shard {shard_id} at {esn}: worker {worker_id} does not hold "
            "its lease"
        )
    if not entry.write_lock.acquire(timeout=lock_timeout_s):
        raise DependencyError(
            f"cannot checkpoint shard {shard_id} at {esn}: an earlier write to its lease "
            f"has not returned within {lock_timeout_s:.1f}s; nothing was written",
            operation="checkpoint",
            shard_id=shard_id,
        )
    written, handoff = None, False
    try:
        if not held.is_current(entry):
            raise LeaseLostError(
                f"cannot checkpoint shard {shard_id} at {esn}: worker {worker_id} lost its "
                "lease meanwhile; nothing was written"
            )
        settled = settle_unanswered(table, held, entry)
        if settled is not Settled.LOST:  # a handoff read back: written as checkpoint owner
            written, handoff = write_checkpoint(table, held, entry, esn, child_shard_ids, clock)
            handoff = handoff or settled is Settled.HANDED_OFF
    finally:
        entry.write_lock.release()
    if written is None:
        on_taken(entry, "its counter moved: another worker took it")
        raise LeaseLostError(
            f"cannot checkpoint shard {shard_id} at {esn}: the lease was taken by another "
            "worker; nothing was written"
        )
    return written, handoff
