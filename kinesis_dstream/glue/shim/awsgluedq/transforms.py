"""``awsgluedq.transforms``: ``EvaluateDataQuality`` (see docs/glue.md)."""

from kinesis_dstream.glue.studio.dq_node import EvaluateDataQuality

__all__ = ["EvaluateDataQuality"]
