"""``awsglue.dynamicframe.DynamicFrameCollection``: named DynamicFrames (Glue Studio's
custom transforms take and return one; Relationalize, SplitFields and SplitRows give
one)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Callable

from ..errors import GlueError, ReportsNotProvided

log = logging.getLogger(__name__)


class DynamicFrameCollection(ReportsNotProvided):
    """A dict of DynamicFrames by name: built from a dict, or a list (named by each
    frame's ``name``), as Glue's."""

    glue_name = "DynamicFrameCollection"
    #: The DynamicFrame class (set by :mod:`.dynamicframe`, which imports this module).
    frame_class: Any = None

    def __init__(self, dynamic_frames: Any, glue_ctx: Any) -> None:
        if isinstance(dynamic_frames, list):
            self._frames = {frame.name: frame for frame in dynamic_frames}
        elif isinstance(dynamic_frames, Mapping):
            self._frames = dict(dynamic_frames)
        else:
            raise GlueError("dynamic_frames must be list or dict.")
        self._glue_ctx = glue_ctx

    def __getitem__(self, key: str) -> Any:
        return self._frames[key]

    def __len__(self) -> int:
        return len(self._frames)

    def keys(self) -> Any:
        return self._frames.keys()

    def values(self) -> Any:
        return self._frames.values()

    def select(self, key: str, transformation_ctx: str = "") -> Any:
        """The frame named ``key``; an empty frame named ``key`` when there is none, as Glue."""
        if key in self._frames:
            return self._frames[key]
        from pyspark.sql.types import StructType

        log.warning(
            "DynamicFrameCollection.select: no frame %r (has %s); an empty frame",
            key,
            list(self._frames),
        )
        spark = self._glue_ctx.spark_session
        return self.frame_class(spark.createDataFrame([], StructType([])), self._glue_ctx, key)

    def map(self, callable: Callable, transformation_ctx: str = "") -> DynamicFrameCollection:
        """``callable(frame, "<ctx>:<name>")`` for each frame, under the same names."""
        mapped = {}
        for name, frame in self._frames.items():
            result = callable(frame, f"{transformation_ctx}:{name}")
            if not isinstance(result, self.frame_class):
                raise GlueError(f"callable must return a DynamicFrame. Got {type(result)}")
            mapped[name] = result
        return DynamicFrameCollection(mapped, self._glue_ctx)

    def flatmap(self, f: Callable, transformation_ctx: str = "") -> DynamicFrameCollection:
        """``f(frame, "<ctx>:<name>")`` for each frame; each result (a frame, under its
        name, or a collection's frames) in the new collection."""
        flat: dict = {}
        for frame in self._frames.values():
            result = f(frame, f"{transformation_ctx}:{frame.name}")
            if isinstance(result, self.frame_class):
                flat[result.name] = result
            elif isinstance(result, DynamicFrameCollection):
                flat.update(result._frames)
            else:
                raise GlueError(
                    "Function argument to flatmap must return DynamicFrame or "
                    f"DynamicFrameCollection. Got {type(result)}"
                )
        return DynamicFrameCollection(flat, self._glue_ctx)

    def __repr__(self) -> str:
        return f"DynamicFrameCollection({list(self._frames)})"
