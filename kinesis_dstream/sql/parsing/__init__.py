"""Glue's payload parsing: payload (the parser), payload_types, payload_avro, decompress,
sample (the records schema inference looks at)."""
