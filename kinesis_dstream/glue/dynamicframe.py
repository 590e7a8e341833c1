"""``awsglue.dynamicframe``: a DynamicFrame that is a thin wrapper over a DataFrame.

Glue's DynamicFrame is a JVM structure of self-describing records with choice types and
per-record error tracking; a streaming job meets it only to transform and write each
batch (``DynamicFrame.fromDF`` -> transforms -> ``write_dynamic_frame``). Here it wraps
the batch's DataFrame and provides what those jobs call: ``fromDF``, ``toDF``,
``count``, ``show``, ``printSchema``, ``apply_mapping``, ``select_fields``,
``drop_fields``, ``rename_field`` and ``write``. Everything else (choice types and
``resolveChoice``, ``relationalize``, ``unbox``, ``map``/``filter`` over records,
``join``, error records...) raises :class:`~.errors.NotProvidedError` naming it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import fields
from .errors import GlueError, ReportsNotProvided, not_provided
from .infer_schema import infer_batch


class DynamicFrame(ReportsNotProvided):
    """A batch's DataFrame under Glue's DynamicFrame API (the part streaming jobs use)."""

    glue_name = "DynamicFrame"

    def __init__(self, df: Any, glue_ctx: Any, name: str = "") -> None:
        from pyspark.sql import DataFrame

        if not isinstance(df, DataFrame):
            raise GlueError(f"DynamicFrame wraps a Spark DataFrame here, got {type(df).__name__}")
        self._df = df
        self.glue_ctx = glue_ctx
        self.name = name

    @classmethod
    def fromDF(cls, dataframe: Any, glue_ctx: Any, name: str = "") -> DynamicFrame:
        """A DynamicFrame of ``dataframe`` (no copy); a batch of an ``inferSchema`` stream
        (Glue's text column) gets the schema inferred from its own records, as on Glue."""
        return cls(infer_batch(dataframe), glue_ctx, name)

    def toDF(self, options: Any = None) -> Any:
        """The DataFrame (ResolveOptions for choice types are not provided)."""
        if options:
            raise not_provided("DynamicFrame.toDF with ResolveOptions", "there are no choice types")
        return self._df

    def count(self) -> int:
        return self._df.count()

    def show(self, num_rows: int = 20) -> None:
        self._df.show(num_rows, truncate=False)

    def printSchema(self) -> None:
        self._df.printSchema()

    def _with(self, df: Any) -> DynamicFrame:
        return DynamicFrame(df, self.glue_ctx, self.name)

    def apply_mapping(
        self,
        mappings: Any,
        case_sensitive: bool = False,
        transformation_ctx: str = "",
        info: str = "",
        stageThreshold: int = 0,
        totalThreshold: int = 0,
    ) -> DynamicFrame:
        return self._with(fields.apply_mapping(self._df, mappings, case_sensitive))

    def applyMapping(self, *args: Any, **kwargs: Any) -> DynamicFrame:
        # Glue accepts the frame itself as a first argument (an older calling style)
        if args and isinstance(args[0], DynamicFrame):
            args = args[1:]
        return self.apply_mapping(*args, **kwargs)

    def select_fields(
        self,
        paths: Any,
        transformation_ctx: str = "",
        info: str = "",
        stageThreshold: int = 0,
        totalThreshold: int = 0,
    ) -> DynamicFrame:
        return self._with(fields.select_fields(self._df, paths))

    def drop_fields(
        self,
        paths: Any,
        transformation_ctx: str = "",
        info: str = "",
        stageThreshold: int = 0,
        totalThreshold: int = 0,
    ) -> DynamicFrame:
        return self._with(fields.drop_fields(self._df, paths))

    def rename_field(
        self,
        oldName: str,
        newName: str,
        transformation_ctx: str = "",
        info: str = "",
        stageThreshold: int = 0,
        totalThreshold: int = 0,
    ) -> DynamicFrame:
        return self._with(fields.rename_field(self._df, oldName, newName))

    def write(
        self,
        connection_type: str,
        connection_options: Mapping[str, Any] = {},
        format: Any = None,
        format_options: Mapping[str, Any] = {},
        accumulator_size: int = 0,
    ) -> Any:
        return self.glue_ctx.write_from_options(
            frame_or_dfc=self,
            connection_type=connection_type,
            connection_options=connection_options,
            format=format,
            format_options=format_options,
        )

    def __repr__(self) -> str:
        return f"DynamicFrame({self.name!r}, {self._df.schema.simpleString()})"


class DynamicFrameCollection(ReportsNotProvided):
    """Named DynamicFrames (Glue Studio's custom transforms take and return one)."""

    glue_name = "DynamicFrameCollection"

    def __init__(self, dynamic_frames: Mapping[str, DynamicFrame], glue_ctx: Any) -> None:
        self._frames = dict(dynamic_frames)
        self._glue_ctx = glue_ctx

    def __getitem__(self, key: str) -> DynamicFrame:
        return self._frames[key]

    def __len__(self) -> int:
        return len(self._frames)

    def keys(self) -> Any:
        return self._frames.keys()

    def values(self) -> Any:
        return self._frames.values()

    def select(self, key: str, transformation_ctx: str = "") -> DynamicFrame:
        return self._frames[key]
