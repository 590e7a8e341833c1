"""``awsglue.transforms``: every transform of aws-glue-libs' ``awsglue/transforms/``."""

from kinesis_dstream.glue.transforms import (  # noqa: F401 (awsglue.transforms' names)
    ALL_TRANSFORMS,
    ApplyMapping,
    Coalesce,
    DropFields,
    DropNullFields,
    ErrorsAsDynamicFrame,
    Filter,
    FlatMap,
    GlueTransform,
    Join,
    Map,
    MapToCollection,
    Relationalize,
    RenameField,
    Repartition,
    ResolveChoice,
    SelectFields,
    SelectFromCollection,
    Spigot,
    SplitFields,
    SplitRows,
    Unbox,
    Union,
    UnnestFrame,
    transform_named,
)

__all__ = sorted(t.__name__ for t in ALL_TRANSFORMS)


def get_transforms() -> set:
    return {t() for t in ALL_TRANSFORMS}


def get_transform(name: str) -> GlueTransform:
    return transform_named(name)()
