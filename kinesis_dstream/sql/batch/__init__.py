"""Batch reads of a stream's history: ``spark.read.format("kinesis")`` between two positions."""
