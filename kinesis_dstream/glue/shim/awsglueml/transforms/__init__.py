"""``awsglueml.transforms``: importable; each transform fails naming itself when applied,
for it runs on Glue's service (a trained ML transform, Glue's detection models)."""

from kinesis_dstream.glue.errors import not_provided
from kinesis_dstream.glue.transforms import GlueTransform


class _ServiceTransform(GlueTransform):
    def __call__(self, *args: object, **kwargs: object) -> object:
        raise not_provided(f"transform {self.name()}", "it runs on AWS Glue's service")


class FindMatches(_ServiceTransform):
    pass


class FindIncrementalMatches(_ServiceTransform):
    pass


class FillMissingValues(_ServiceTransform):
    pass


class EntityDetector(_ServiceTransform):
    pass


__all__ = ["EntityDetector", "FillMissingValues", "FindIncrementalMatches", "FindMatches"]
