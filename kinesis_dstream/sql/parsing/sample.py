"""A sample of a stream's payloads, for Glue's ``inferSchema=true``.

A Spark source has one schema, fixed when the DataFrame is defined (``load()``); Glue
infers it per batch inside foreachBatch. So the source infers it once, from a bounded
sample read on the driver when ``load()`` runs: up to :data:`SAMPLE_RECORDS_PER_SHARD`
user records from the oldest retained record (TRIM_HORIZON) of every open shard of every
stream, at most :data:`SAMPLE_CALLS_PER_SHARD` GetRecords calls each. These records are
only looked at; the query reads from its own starting position as usual.
"""

from __future__ import annotations

import logging
from typing import Any

from ...retrieval.reader import ReaderConfig, ShardReader, StartPosition
from ...retrieval.streams import list_shards
from ..config.options import SourceOptions

log = logging.getLogger(__name__)

SAMPLE_RECORDS_PER_SHARD = 200
SAMPLE_CALLS_PER_SHARD = 3
SAMPLE_RECORDS = 2_000


def sample_payloads(options: SourceOptions) -> list:
    """The data of up to :data:`SAMPLE_RECORDS` user records, oldest first per shard."""
    payloads: list = []
    config = ReaderConfig(min_call_interval_s=0.2, max_records_per_call=SAMPLE_RECORDS_PER_SHARD)
    for stream in options.connection.stream_names:
        client: Any = options.for_stream(stream).connection.client_spec().client()
        for shard in list_shards(client, stream):
            if "EndingSequenceNumber" in shard.get("SequenceNumberRange", {}):
                continue
            reader = ShardReader(
                client, stream, shard["ShardId"], StartPosition.trim_horizon(), config=config
            )
            batch = reader.read(
                max_records=SAMPLE_RECORDS_PER_SHARD, max_calls=SAMPLE_CALLS_PER_SHARD
            )
            payloads += [r.data for r in batch.records]
            if len(payloads) >= SAMPLE_RECORDS:
                return payloads[:SAMPLE_RECORDS]
    log.info("inferring the payload schema from %d sampled records", len(payloads))
    return payloads
