"""Per-shard status of a leasing application (createStream or ``kinesis-dstream kcl``).

For each lease: its owner, when its counter last moved (renewal, seen across polls),
its checkpoint, whether the shard is finished, and how far the application is behind:
one small read through :class:`~..retrieval.reader.ShardReader` from just after the
checkpoint (a checkpoint inside a KPL aggregate resumes at its next sub-record, as the
application would), giving Kinesis's MillisBehindLatest and the arrival time of the
next unprocessed record. A checkpoint at LATEST has nothing unprocessed by definition;
AT_TIMESTAMP is reported without lag (the lease does not hold the timestamp).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable, Optional

from ..errors import KinesisDStreamError
from ..leases.lease import Lease
from ..retrieval.config import ReaderConfig
from ..retrieval.reader import ShardReader
from ..retrieval.start import StartPosition

#: Pages a lag probe may take: an empty page can precede records (Kinesis skips gaps).
PROBE_CALLS = 5


@dataclass(frozen=True)
class ShardStatus:
    """One shard of an application, as seen from outside."""

    shard_id: str
    owner: Optional[str]
    lease_counter: int
    #: Seconds since this command saw the counter move (None: not seen move yet).
    renewed_s_ago: Optional[float]
    checkpoint: str
    checkpoint_sub: int
    finished: bool
    parents: tuple = ()
    #: Kinesis's MillisBehindLatest just after the checkpoint (None: not measured).
    millis_behind_latest: Optional[int] = None
    #: The next unprocessed record's arrival (ISO 8601, UTC), and its age in ms.
    next_record_arrival: Optional[str] = None
    next_record_age_ms: Optional[int] = None
    #: Why the lag is not known (an error, AT_TIMESTAMP), else None.
    lag_note: Optional[str] = None

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class AppStatus:
    """Every shard's status and the totals."""

    application: str
    stream: str
    shards: list = field(default_factory=list)
    taken_at: str = ""

    @property
    def totals(self) -> dict:
        lags = [s.millis_behind_latest for s in self.shards if s.millis_behind_latest is not None]
        owners = {s.owner for s in self.shards if s.owner and not s.finished}
        return {
            "shards": len(self.shards),
            "finished": sum(s.finished for s in self.shards),
            "unowned": sum(1 for s in self.shards if not s.owner and not s.finished),
            "workers": len(owners),
            "max_millis_behind_latest": max(lags) if lags else None,
            "lag_unknown": sum(
                1 for s in self.shards if not s.finished and s.millis_behind_latest is None
            ),
        }

    def to_dict(self) -> dict:
        return {
            "application": self.application,
            "stream": self.stream,
            "taken_at": self.taken_at,
            "totals": self.totals,
            "shards": [s.to_dict() for s in self.shards],
        }


class RenewalWatch:
    """When each lease's counter last moved, across polls (``--watch``)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._seen: dict = {}  # lease key -> (counter, clock time it was first seen)
        self._moved: dict = {}  # lease key -> clock time the counter was seen moving

    def renewed_s_ago(self, lease: Lease) -> Optional[float]:
        now = self._clock()
        seen = self._seen.get(lease.lease_key)
        if seen is not None and seen[0] != lease.lease_counter:
            self._moved[lease.lease_key] = now
        if seen is None or seen[0] != lease.lease_counter:
            self._seen[lease.lease_key] = (lease.lease_counter, now)
        moved = self._moved.get(lease.lease_key)
        return None if moved is None else now - moved


def application_status(
    application: str,
    stream: str,
    leases: list,
    kinesis: Any,
    renewals: Optional[RenewalWatch] = None,
    now: Callable[[], datetime] = lambda: datetime.now(timezone.utc),
) -> AppStatus:
    """Each lease's status, its lag probed through the read core."""
    renewals = renewals or RenewalWatch()
    shards = [_shard_status(lease, stream, kinesis, renewals, now) for lease in leases]
    return AppStatus(application, stream, shards, now().isoformat())


def _shard_status(
    lease: Lease,
    stream: str,
    kinesis: Any,
    renewals: RenewalWatch,
    now: Callable[[], datetime],
) -> ShardStatus:
    status = ShardStatus(
        shard_id=lease.lease_key,
        owner=lease.lease_owner,
        lease_counter=lease.lease_counter,
        renewed_s_ago=renewals.renewed_s_ago(lease),
        checkpoint=lease.checkpoint.sequence_number,
        checkpoint_sub=lease.checkpoint.sub_sequence_number,
        finished=lease.is_finished,
        parents=tuple(sorted(lease.parent_shard_ids)),
    )
    if lease.is_finished:
        return _with(status, millis_behind_latest=0)
    if lease.checkpoint.sequence_number == "AT_TIMESTAMP":
        return _with(status, lag_note="starts AT_TIMESTAMP: not measured")
    start = StartPosition.from_checkpoint(lease.checkpoint)
    assert start is not None  # finished leases returned above
    return _with(
        status, **probe_lag(kinesis, stream, lease.lease_key, start, lease.hash_key_range, now)
    )


def probe_lag(
    kinesis: Any,
    stream: str,
    shard_id: str,
    start: StartPosition,
    hash_key_range: Optional[tuple] = None,
    now: Callable[[], datetime] = lambda: datetime.now(timezone.utc),
) -> dict:
    """How far behind a consumer at ``start`` is: one small read through the read core
    (MillisBehindLatest, and the next record's arrival and age), as ShardStatus fields."""
    reader = ShardReader(
        kinesis,
        stream,
        shard_id,
        start,
        hash_key_range=hash_key_range,
        config=ReaderConfig(max_records_per_call=1),
    )
    try:
        batch = reader.read(max_records=1, max_calls=PROBE_CALLS)
    except KinesisDStreamError as exc:
        return {"lag_note": f"not measured: {exc}"}
    finally:
        reader.close()
    if not batch.records:
        return {"millis_behind_latest": batch.millis_behind_latest}
    arrival = batch.records[0].approximate_arrival_timestamp
    return {
        "millis_behind_latest": batch.millis_behind_latest,
        "next_record_arrival": arrival.isoformat() if arrival else None,
        "next_record_age_ms": (int((now() - arrival).total_seconds() * 1000) if arrival else None),
    }


def _with(status: ShardStatus, **changes: Any) -> ShardStatus:
    return ShardStatus(**{**status.to_dict(), **changes})
