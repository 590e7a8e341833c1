"""Per-shard status of a Structured Streaming query, from its checkpoint location.

Spark writes ``offsets/<n>`` (planned batches: ``v1``, the batch metadata, then one line
per source: for this source, its offset JSON) and ``commits/<n>`` (finished ones). The
last committed batch's offset says, per shard, a position (everything up to it is
delivered) or a range whose real end the first reader recorded in the end store
(``metadataPath``): there the shard is consumed through. Nothing is written: a range
whose end is not recorded is reported from its start.
"""

from __future__ import annotations

import os
from datetime import datetime, timezone
from typing import Any, Callable, Optional

from .. import json_text
from ..sql.driver.multi import split_offset
from ..sql.ends.s3 import parse_s3_url
from ..sql.offsets import Offset, ShardRange, range_key
from ..sql.positions import SHARD_END, describe, start_position
from .shards import AppStatus, ShardStatus, probe_lag


class CheckpointLocation:
    """A query's checkpoint directory, local or ``s3://`` (read only)."""

    def __init__(self, location: str, s3: Optional[Callable[[], Any]] = None) -> None:
        self.location = location
        self._s3 = s3
        self._remote = location.startswith(("s3://", "s3a://"))

    def _names(self, folder: str) -> list:
        if not self._remote:
            path = os.path.join(self.location, folder)
            if not os.path.isdir(path):
                return []
            return os.listdir(path)
        assert self._s3 is not None
        bucket, prefix = parse_s3_url(self.location)
        base = f"{prefix.rstrip('/')}/{folder}/" if prefix else f"{folder}/"
        names = []
        for page in self._s3().get_paginator("list_objects_v2").paginate(
            Bucket=bucket, Prefix=base
        ):
            names += [item["Key"][len(base) :] for item in page.get("Contents", [])]
        return names

    def _read(self, folder: str, name: str) -> str:
        if not self._remote:
            with open(os.path.join(self.location, folder, name), encoding="utf-8") as handle:
                return handle.read()
        assert self._s3 is not None
        bucket, prefix = parse_s3_url(self.location)
        key = f"{prefix.rstrip('/')}/{folder}/{name}" if prefix else f"{folder}/{name}"
        return self._s3().get_object(Bucket=bucket, Key=key)["Body"].read().decode("utf-8")

    def last_committed(self) -> tuple:
        """(batch id, [our offsets]) of the last committed batch; ValueError if none."""
        batches = [int(name) for name in self._names("commits") if name.isdigit()]
        if not batches:
            raise ValueError(
                f"no committed batch in {self.location!r}: is it a query's checkpointLocation "
                "(with commits/ and offsets/), and has a batch finished?"
            )
        batch = max(batches)
        lines = self._read("offsets", str(batch)).splitlines()
        offsets = []
        for line in lines[2:]:  # "v1", the batch metadata, then one line per source
            try:
                value = json_text.loads(line)
            except ValueError:  # Spark's own lines, or another source's offset
                continue
            where = f"{self.location.rstrip('/')}/offsets/{batch}"
            if isinstance(value, dict) and value.get("v") == 1 and "stream" in value:
                offsets.append(Offset.from_json(value, where))
            elif isinstance(value, dict) and value.get("v") == 1 and "streams" in value:
                offsets += [Offset.from_json(part, where) for part in split_offset(value, where)]
        if not offsets:
            raise ValueError(f"batch {batch} in {self.location!r} has no Kinesis source offset")
        return batch, offsets


def query_status(
    location: CheckpointLocation,
    kinesis: Any,
    end_store: Any,
    now: Callable[[], datetime] = lambda: datetime.now(timezone.utc),
) -> list:
    """One :class:`~.shards.AppStatus` per stream of the query's last committed batch."""
    batch, offsets = location.last_committed()
    reports = []
    for offset in offsets:
        shards = [
            _shard(offset, shard_id, entry, kinesis, end_store, now)
            for shard_id, entry in offset.shards
        ]
        name = f"{location.location} (batch {batch})"
        reports.append(AppStatus(name, offset.stream, shards, now().isoformat()))
    return reports


def _shard(
    offset: Offset, shard_id: str, entry: Any, kinesis: Any, end_store: Any, now: Callable
) -> ShardStatus:
    note = None
    position = entry
    if isinstance(entry, ShardRange):
        end = end_store.get(range_key(offset, shard_id, entry))
        position = end.next if end is not None else entry.start
        if end is None:
            note = "range end not recorded: from its start"
    start = start_position(position)
    status = ShardStatus(
        shard_id=shard_id,
        owner=None,
        lease_counter=0,
        renewed_s_ago=None,
        checkpoint=describe(position),
        checkpoint_sub=position.get("sub", 0) if isinstance(position, dict) else 0,
        finished=position == SHARD_END,
    )
    if start is None:
        return ShardStatus(**{**status.to_dict(), "millis_behind_latest": 0})
    lag = probe_lag(kinesis, offset.stream, shard_id, start, None, now)
    if note and "lag_note" not in lag:
        lag["lag_note"] = note
    return ShardStatus(**{**status.to_dict(), **lag})
