"""Frames: ``DynamicFrame``, its records and collections, Glue's own types, and the
ingestion-time columns."""
