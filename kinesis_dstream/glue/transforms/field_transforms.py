"""Glue's transforms of a frame's fields and shape: ApplyMapping, SelectFields,
DropFields, RenameField, SplitFields, DropNullFields, ResolveChoice, Unbox, UnnestFrame,
Relationalize (and ``awsglue.dataframe_transforms.ApplyMapping``).

Signatures as aws-glue-libs has them (``ApplyMapping.apply(frame, mappings,
case_sensitive=False, transformation_ctx="", info="", stageThreshold=0,
totalThreshold=0)``...); each calls the DynamicFrame method Glue's calls, so a transform
and its method behave alike. ``transformation_ctx`` and ``info`` belong to job bookmarks
and error records' labels, the error thresholds to Glue's error counting: they are
accepted and have no effect here (error records are counted and logged,
:mod:`kinesis_dstream.glue.frames.records`).
"""

from __future__ import annotations

from typing import Any

from . import fields
from .base import GlueTransform


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
        from ..frames import gluetypes as G

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


class DataFrameApplyMapping:
    """``awsglue.dataframe_transforms.ApplyMapping`` (Glue 5+): on a Spark DataFrame."""

    @staticmethod
    def apply(frame: Any, mappings: Any) -> Any:
        return fields.apply_mapping(frame, mappings)
