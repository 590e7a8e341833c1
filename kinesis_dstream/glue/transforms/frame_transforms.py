"""Glue's transforms of a frame's rows and of collections of frames: SplitRows, Join,
Union, Filter, Map, Repartition, Coalesce, Spigot, ErrorsAsDynamicFrame,
SelectFromCollection, MapToCollection, FlatMap.

Signatures as aws-glue-libs has them; each calls the DynamicFrame (or collection) method
Glue's calls. ``transformation_ctx``, ``info`` and the error thresholds are accepted and
have no effect here (see :mod:`.field_transforms`).
"""

from __future__ import annotations

from typing import Any

from .base import GlueTransform


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
