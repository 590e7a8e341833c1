"""The streaming loop: ``forEachBatch`` with Glue's semantics, each batch's counts, and the
query's checkpoint (its S3 mirror and the sources' range ends)."""
