"""``awsglue.transforms``: the field transforms, and every other Glue transform as a
name that fails at once, naming itself, when a script applies it.

Signatures as aws-glue-libs has them (``ApplyMapping.apply(frame, mappings,
case_sensitive=False, transformation_ctx="", info="", stageThreshold=0,
totalThreshold=0)``...); ``transformation_ctx``, ``info`` and the error thresholds
belong to DynamicFrame error records and job bookmarks, which a DataFrame-backed frame
does not have: they are accepted and have no effect.
"""

from __future__ import annotations

from typing import Any

from . import fields
from .errors import not_provided


class GlueTransform:
    """Base of Glue's transforms: ``Transform.apply(...)`` calls a new instance."""

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        return cls()(*args, **kwargs)

    @classmethod
    def name(cls) -> str:
        return cls.__name__

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise not_provided(f"transform {self.name()}")

    def __repr__(self) -> str:
        return f"<Transform: {self.name()}>"


class ApplyMapping(GlueTransform):
    def __call__(
        self,
        frame: Any,
        mappings: Any,
        case_sensitive: bool = False,
        transformation_ctx: str = "",
        info: str = "",
        stageThreshold: int = 0,
        totalThreshold: int = 0,
    ) -> Any:
        return frame.apply_mapping(
            mappings, case_sensitive, transformation_ctx, info, stageThreshold, totalThreshold
        )


class SelectFields(GlueTransform):
    def __call__(
        self,
        frame: Any,
        paths: Any,
        transformation_ctx: str = "",
        info: str = "",
        stageThreshold: int = 0,
        totalThreshold: int = 0,
    ) -> Any:
        return frame.select_fields(paths, transformation_ctx, info, stageThreshold, totalThreshold)


class DropFields(GlueTransform):
    def __call__(
        self,
        frame: Any,
        paths: Any,
        transformation_ctx: str = "",
        info: str = "",
        stageThreshold: int = 0,
        totalThreshold: int = 0,
    ) -> Any:
        return frame.drop_fields(paths, transformation_ctx, info, stageThreshold, totalThreshold)


class RenameField(GlueTransform):
    def __call__(
        self,
        frame: Any,
        old_name: str,
        new_name: str,
        transformation_ctx: str = "",
        info: str = "",
        stageThreshold: int = 0,
        totalThreshold: int = 0,
    ) -> Any:
        return frame.rename_field(
            old_name, new_name, transformation_ctx, info, stageThreshold, totalThreshold
        )


class SelectFromCollection(GlueTransform):
    """One frame of a DynamicFrameCollection by its key (Glue Studio's code selects
    ``ruleOutcomes``, a custom transform's output…)."""

    def __call__(self, dfc: Any, key: str, transformation_ctx: str = "") -> Any:
        return dfc.select(key, transformation_ctx)


#: aws-glue-libs' other transforms: importable (``from awsglue.transforms import *``
#: works), failing with their name when applied.
NOT_PROVIDED_TRANSFORMS = (
    "Unbox",
    "UnnestFrame",
    "Relationalize",
    "SplitFields",
    "SplitRows",
    "Join",
    "Spigot",
    "MapToCollection",
    "FlatMap",
    "DropNullFields",
    "Repartition",
    "ResolveChoice",
    "ErrorsAsDynamicFrame",
    "Filter",
    "Map",
    "Coalesce",
    "Union",
)
_STUBS = {
    name: type(name, (GlueTransform,), {"__module__": __name__}) for name in NOT_PROVIDED_TRANSFORMS
}
PROVIDED_TRANSFORMS = (ApplyMapping, SelectFields, DropFields, RenameField, SelectFromCollection)
ALL_TRANSFORMS = {*PROVIDED_TRANSFORMS, *_STUBS.values()}


def transform_named(name: str) -> type:
    """The transform class of that Glue name (provided or not)."""
    provided = {t.__name__: t for t in PROVIDED_TRANSFORMS}
    return provided.get(name) or _STUBS[name]


class DataFrameApplyMapping:
    """``awsglue.dataframe_transforms.ApplyMapping`` (Glue 5+): on a Spark DataFrame."""

    @staticmethod
    def apply(frame: Any, mappings: Any) -> Any:
        return fields.apply_mapping(frame, mappings)
