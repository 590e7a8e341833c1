"""``awsgluedq`` as kinesis_dstream provides it (see docs/glue.md): Glue Data Quality's
Evaluate Data Quality transform on a batch."""
