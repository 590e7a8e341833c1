"""``awsglue.transforms``: every transform of aws-glue-libs' ``awsglue/transforms/``.

Signatures as aws-glue-libs has them (``ApplyMapping.apply(frame, mappings,
case_sensitive=False, transformation_ctx="", info="", stageThreshold=0,
totalThreshold=0)``...); each calls the DynamicFrame (or collection) method Glue's calls,
so a transform and its method behave alike. ``transformation_ctx`` and ``info`` belong
to job bookmarks and error records' labels, the error thresholds to Glue's error
counting: they are accepted and have no effect here (error records are counted and
logged, :mod:`.dynamicframe_records`).
"""

from __future__ import annotations

from typing import Any

from . import fields
from .errors import GlueError


class GlueTransform:
    """Base of Glue's transforms: ``Transform.apply(...)`` calls a new instance."""

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        return cls()(*args, **kwargs)

    @classmethod
    def name(cls) -> str:
        return cls.__name__

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{self.name()} is an abstract transform")

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


class SplitFields(GlueTransform):
    """Two frames: the fields at ``paths`` (``name1``), the rest (``name2``)."""

    def __call__(
        self,
        frame: Any,
        paths: Any,
        name1: Any = None,
        name2: Any = None,
        transformation_ctx: str = "",
        info: str = "",
        stageThreshold: int = 0,
        totalThreshold: int = 0,
    ) -> Any:
        base = frame.name or "frame"
        name1 = f"{base}1" if name1 is None else name1
        name2 = f"{base}2" if name2 is None else name2
        return frame.split_fields(
            paths, name1, name2, transformation_ctx, info, stageThreshold, totalThreshold
        )


class SplitRows(GlueTransform):
    """Two frames: the rows meeting ``comparison_dict`` (``name1``), the rest (``name2``)."""

    def __call__(
        self,
        frame: Any,
        comparison_dict: Any,
        name1: str = "frame1",
        name2: str = "frame2",
        transformation_ctx: str = "",
        info: Any = None,
        stageThreshold: int = 0,
        totalThreshold: int = 0,
    ) -> Any:
        return frame.split_rows(
            comparison_dict,
            name1,
            name2,
            transformation_ctx,
            info or "",
            stageThreshold,
            totalThreshold,
        )


class Join(GlueTransform):
    def __call__(
        self, frame1: Any, frame2: Any, keys1: Any, keys2: Any, transformation_ctx: str = ""
    ) -> Any:
        return frame1.join(keys1, keys2, frame2)


class Spigot(GlueTransform):
    def __call__(self, frame: Any, path: str, options: Any, transformation_ctx: str = "") -> Any:
        return frame.spigot(path, options, transformation_ctx)


class SelectFromCollection(GlueTransform):
    def __call__(self, dfc: Any, key: str, transformation_ctx: str = "") -> Any:
        return dfc.select(key, transformation_ctx)


class MapToCollection(GlueTransform):
    def __call__(self, dfc: Any, callable: Any, transformation_ctx: str = "") -> Any:
        return dfc.map(callable, transformation_ctx)


class FlatMap(GlueTransform):
    """``BaseTransform`` applied to each frame of ``dfc``, passed as ``frame_name``."""

    def __call__(
        self,
        dfc: Any,
        BaseTransform: Any,
        frame_name: str,
        transformation_ctx: str = "",
        **base_kwargs: Any,
    ) -> Any:
        def apply_inner(frame: Any, ctx: str) -> Any:
            return BaseTransform.apply(
                **{**base_kwargs, frame_name: frame, "transformation_ctx": ctx}
            )

        return dfc.flatmap(apply_inner, transformation_ctx)


class DropNullFields(GlueTransform):
    """Drops the fields that have no value in any record of the batch (Glue's NullType
    fields of ``schema()``), in structs and in arrays' structs too."""

    def __call__(
        self,
        frame: Any,
        transformation_ctx: str = "",
        info: str = "",
        stageThreshold: int = 0,
        totalThreshold: int = 0,
    ) -> Any:
        from . import gluetypes as G

        null_fields: list = []

        def find(schema: Any, path: str) -> None:
            if isinstance(schema, G.StructType):
                for field in schema:
                    find(
                        field.dataType,
                        (path + "." if path else "") + fields.path_text((field.name,)),
                    )
            elif isinstance(schema, G.ArrayType) and isinstance(schema.elementType, G.StructType):
                find(schema.elementType, path)
            elif isinstance(schema, G.NullType):
                null_fields.append(path)

        find(frame.schema(), "")
        return frame.drop_fields(
            null_fields, transformation_ctx, info, stageThreshold, totalThreshold
        )


class Repartition(GlueTransform):
    def __call__(
        self,
        frame: Any,
        num_partitions: int,
        transformation_ctx: str = "",
        info: str = "",
        stageThreshold: int = 0,
        totalThreshold: int = 0,
    ) -> Any:
        return frame.repartition(
            num_partitions, transformation_ctx, info, stageThreshold, totalThreshold
        )


class Coalesce(GlueTransform):
    def __call__(
        self,
        frame: Any,
        num_partitions: int,
        shuffle: bool = False,
        transformation_ctx: str = "",
        info: str = "",
        stageThreshold: int = 0,
        totalThreshold: int = 0,
    ) -> Any:
        return frame.coalesce(
            num_partitions, shuffle, transformation_ctx, info, stageThreshold, totalThreshold
        )


class ResolveChoice(GlueTransform):
    def __call__(
        self,
        frame: Any,
        specs: Any = None,
        choice: str = "",
        database: Any = None,
        table_name: Any = None,
        transformation_ctx: str = "",
        info: str = "",
        stageThreshold: int = 0,
        totalThreshold: int = 0,
        catalog_id: Any = None,
    ) -> Any:
        return frame.resolveChoice(
            specs,
            choice,
            database,
            table_name,
            transformation_ctx,
            info,
            stageThreshold,
            totalThreshold,
            catalog_id,
        )


class ErrorsAsDynamicFrame(GlueTransform):
    def __call__(self, frame: Any) -> Any:
        return frame.errorsAsDynamicFrame()


class Filter(GlueTransform):
    def __call__(
        self,
        frame: Any,
        f: Any,
        transformation_ctx: str = "",
        info: str = "",
        stageThreshold: int = 0,
        totalThreshold: int = 0,
    ) -> Any:
        return frame.filter(f, transformation_ctx, info, stageThreshold, totalThreshold)


class Map(GlueTransform):
    def __call__(
        self,
        frame: Any,
        f: Any,
        preservesPartitioning: bool = False,
        transformation_ctx: str = "",
        info: str = "",
        stageThreshold: int = 0,
        totalThreshold: int = 0,
    ) -> Any:
        return frame.map(
            f, preservesPartitioning, transformation_ctx, info, stageThreshold, totalThreshold
        )


class Union(GlueTransform):
    def __call__(
        self,
        frame1: Any,
        frame2: Any,
        transformation_ctx: str = "",
        info: str = "",
        stageThreshold: int = 0,
        totalThreshold: int = 0,
    ) -> Any:
        return frame1.union(frame2, transformation_ctx, info, stageThreshold, totalThreshold)


class Unbox(GlueTransform):
    def __call__(
        self,
        frame: Any,
        path: str,
        format: str,
        transformation_ctx: str = "",
        info: str = "",
        stageThreshold: int = 0,
        totalThreshold: int = 0,
        **options: Any,
    ) -> Any:
        return frame.unbox(
            path, format, transformation_ctx, info, stageThreshold, totalThreshold, **options
        )


class UnnestFrame(GlueTransform):
    def __call__(
        self,
        frame: Any,
        transformation_ctx: str = "",
        info: str = "",
        stageThreshold: int = 0,
        totalThreshold: int = 0,
    ) -> Any:
        return frame.unnest(transformation_ctx, info, stageThreshold, totalThreshold)


class Relationalize(GlueTransform):
    """The frame unnested and its arrays pivoted out (:mod:`.relational`). Glue stages
    the pivoted frames at ``staging_path`` (or the job's ``--TempDir``); here they stay
    in Spark, so neither is needed."""

    def __call__(
        self,
        frame: Any,
        staging_path: Any = None,
        name: str = "roottable",
        options: Any = None,
        transformation_ctx: str = "",
        info: str = "",
        stageThreshold: int = 0,
        totalThreshold: int = 0,
    ) -> Any:
        return frame.relationalize(
            name,
            staging_path or "",
            options or {},
            transformation_ctx,
            info,
            stageThreshold,
            totalThreshold,
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


class DataFrameApplyMapping:
    """``awsglue.dataframe_transforms.ApplyMapping`` (Glue 5+): on a Spark DataFrame."""

    @staticmethod
    def apply(frame: Any, mappings: Any) -> Any:
        return fields.apply_mapping(frame, mappings)
