"""Read a whole stream back from TRIM_HORIZON: the demo's and tests' ground truth.

Deliberately simple and independent of the library's shard reader, so it can check it.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from ..retrieval.streams import list_shard_ids

# Real Kinesis may return empty pages while still behind; bound them so the loop ends.
_MAX_EMPTY_PAGES = 100


def read_all_records(
    client: Any, stream_name: str, on_page: Optional[Callable[[int], None]] = None
) -> list:
    """Every record now in the stream, shard by shard, as GetRecords returns them;
    ``on_page`` is told each page's record count (progress)."""
    records: list = []
    for shard_id in list_shard_ids(client, stream_name):
        iterator = client.get_shard_iterator(
            StreamName=stream_name, ShardId=shard_id, ShardIteratorType="TRIM_HORIZON"
        )["ShardIterator"]
        empty_pages = 0
        while iterator and empty_pages < _MAX_EMPTY_PAGES:
            page = client.get_records(ShardIterator=iterator, Limit=10000)
            for record in page["Records"]:
                record["ShardId"] = shard_id
            records.extend(page["Records"])
            if on_page is not None:
                on_page(len(page["Records"]))
            empty_pages = 0 if page["Records"] else empty_pages + 1
            if not page["Records"] and page.get("MillisBehindLatest", 0) == 0:
                break
            iterator = page.get("NextShardIterator")
    return records
