"""``awsglue.transforms``: ApplyMapping, SelectFields, DropFields and RenameField;
Glue's other transforms are here by name and fail, naming themselves, when applied."""

from kinesis_dstream.glue.transforms import (
    ALL_TRANSFORMS,
    ApplyMapping,
    DropFields,
    GlueTransform,
    RenameField,
    SelectFields,
    transform_named,
)

Unbox = transform_named("Unbox")
UnnestFrame = transform_named("UnnestFrame")
Relationalize = transform_named("Relationalize")
SplitFields = transform_named("SplitFields")
SplitRows = transform_named("SplitRows")
Join = transform_named("Join")
Spigot = transform_named("Spigot")
SelectFromCollection = transform_named("SelectFromCollection")
MapToCollection = transform_named("MapToCollection")
FlatMap = transform_named("FlatMap")
DropNullFields = transform_named("DropNullFields")
Repartition = transform_named("Repartition")
ResolveChoice = transform_named("ResolveChoice")
ErrorsAsDynamicFrame = transform_named("ErrorsAsDynamicFrame")
Filter = transform_named("Filter")
Map = transform_named("Map")
Coalesce = transform_named("Coalesce")
Union = transform_named("Union")

__all__ = [
    "ApplyMapping",
    "Coalesce",
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
]


def get_transforms() -> set:
    return {t() for t in ALL_TRANSFORMS}
