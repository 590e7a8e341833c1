"""Leases in the JVM KCL's table format: model, store, taker, coordinator, shard sync."""
