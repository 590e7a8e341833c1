"""``awsglue.transforms``: every transform of aws-glue-libs' ``awsglue/transforms/``,
over the frame functions they call (:mod:`.fields`, :mod:`.choices`,
:mod:`.relational`, :mod:`.frame_ops`)."""

from __future__ import annotations

from ..errors import GlueError
from .base import GlueTransform
from .field_transforms import (
    ApplyMapping,
    DataFrameApplyMapping,
    DropFields,
    DropNullFields,
    Relationalize,
    RenameField,
    ResolveChoice,
    SelectFields,
    SplitFields,
    Unbox,
    UnnestFrame,
)
from .frame_transforms import (
    Coalesce,
    ErrorsAsDynamicFrame,
    Filter,
    FlatMap,
    Join,
    Map,
    MapToCollection,
    Repartition,
    SelectFromCollection,
    Spigot,
    SplitRows,
    Union,
)

#: Every transform of aws-glue-libs' ``awsglue.transforms``.
ALL_TRANSFORMS = {
    Unbox,
    RenameField,
    DropFields,
    SplitFields,
    SelectFields,
    SplitRows,
    UnnestFrame,
    Relationalize,
    SelectFromCollection,
    MapToCollection,
    ErrorsAsDynamicFrame,
    FlatMap,
    DropNullFields,
    Join,
    ApplyMapping,
    Repartition,
    ResolveChoice,
    Spigot,
    Filter,
    Map,
    Coalesce,
    Union,
}


def transform_named(name: str) -> type:
    """The transform class of that Glue name."""
    found = {t.__name__.lower(): t for t in ALL_TRANSFORMS}.get(name.lower())
    if found is None:
        raise GlueError(f"{name!r} is not a transform of awsglue.transforms")
    return found


__all__ = [
    "ALL_TRANSFORMS",
    "ApplyMapping",
    "Coalesce",
    "DataFrameApplyMapping",
    "DropFields",
    "DropNullFields",
    "ErrorsAsDynamicFrame",
    "Filter",
    "FlatMap",
    "GlueTransform",
    "Join",
    "Map",
    "MapToCollection",
    "Relationalize",
    "RenameField",
    "Repartition",
    "ResolveChoice",
    "SelectFields",
    "SelectFromCollection",
    "Spigot",
    "SplitFields",
    "SplitRows",
    "Unbox",
    "Union",
    "UnnestFrame",
    "transform_named",
]
