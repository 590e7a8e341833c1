"""Reading shards: the shard reader (GetRecords, retries, de-aggregation) and listing."""
