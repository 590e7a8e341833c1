"""``awsglue.dynamicframe``: a DynamicFrame that is a thin wrapper over a DataFrame.

Glue's DynamicFrame is a JVM structure of self-describing records with choice types and
per-record error tracking; a streaming job meets it to transform and write each batch
(``DynamicFrame.fromDF`` -> transforms -> ``write_dynamic_frame``). Here it wraps the
batch's DataFrame and provides Glue's API over it: the field transforms, the record
functions (``filter``, ``map``: :mod:`~kinesis_dstream.glue.frames.records`),
``resolveChoice`` (:mod:`~kinesis_dstream.glue.transforms.choices`),
``join``/``union``/``split_rows`` (:mod:`~kinesis_dstream.glue.transforms.frame_ops`),
``unnest``, ``relationalize``, ``unbox`` (:mod:`~kinesis_dstream.glue.transforms.relational`),
``schema()`` in Glue's types
(:mod:`.gluetypes`) and the error records of ``filter`` and ``map``. What Glue has and
this layer does not (``mergeDynamicFrame``...) raises
:class:`~.errors.NotProvidedError` naming it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Callable, Optional

from ..errors import GlueError, ReportsNotProvided, batch_only
from ..sources.infer_schema import infer_batch
from ..transforms import choices, fields, frame_ops, relational
from . import gluetypes
from . import records as dynamicframe_records
from .collection import DynamicFrameCollection

log = logging.getLogger(__name__)
ResolveOption = choices.ResolveOption


@dataclass(frozen=True)
class FrameErrors:
    """A frame's error records: those of the transform that made it (``stage``) and of
    the transforms before it (``earlier``), each a (count, DataFrame) pair."""

    stage: Optional[tuple] = None
    earlier: tuple = ()

    def then(self, stage: Optional[tuple]) -> FrameErrors:
        """The errors of a frame made from this one by a transform that had ``stage``."""
        return FrameErrors(stage, self.all())

    def all(self) -> tuple:
        return (*self.earlier, *([self.stage] if self.stage else []))


class DynamicFrame(ReportsNotProvided):
    """A batch's DataFrame under Glue's DynamicFrame API."""

    glue_name = "DynamicFrame"

    def __init__(self, df: Any, glue_ctx: Any, name: str = "", errors: FrameErrors = FrameErrors()):
        from pyspark.sql import DataFrame

        if not isinstance(df, DataFrame):
            raise GlueError(f"DynamicFrame wraps a Spark DataFrame here, got {type(df).__name__}")
        self._df = df
        self.glue_ctx = glue_ctx
        self.name = name
        self._errors = errors

    @classmethod
    def fromDF(cls, dataframe: Any, glue_ctx: Any, name: str = "") -> DynamicFrame:
        """A DynamicFrame of ``dataframe`` (no copy); a batch of an ``inferSchema`` stream
        (Glue's text column) gets the schema inferred from its own records, as on Glue."""
        cls(dataframe, glue_ctx, name)  # what is not a DataFrame: its one-line refusal first
        return cls(infer_batch(dataframe), glue_ctx, name)

    def toDF(self, options: Any = None) -> Any:
        """The DataFrame; ``options`` are ResolveOptions (Project/Cast: cast to the target)."""
        return choices.resolve_options(self._df, options) if options else self._df

    def schema(self) -> Any:
        """The frame's schema in Glue's types (a :class:`~.gluetypes.StructType`); a field
        with no value in the batch is a NullType, as Glue's schema of the records."""
        return gluetypes.from_spark(self._df.schema, frame_ops.empty_paths(self._df))

    def count(self) -> int:
        return self._df.count()

    def show(self, num_rows: int = 20) -> None:
        self._df.show(num_rows, truncate=False)

    def printSchema(self) -> None:
        self._df.printSchema()

    def getNumPartitions(self) -> int:
        return self._df.rdd.getNumPartitions()

    def _with(
        self, df: Any, stage: Optional[tuple] = None, name: Optional[str] = None
    ) -> DynamicFrame:
        errors = self._errors.then(stage)
        return DynamicFrame(df, self.glue_ctx, self.name if name is None else name, errors)

    # --- fields --------------------------------------------------------------------------

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

    def split_fields(
        self,
        paths: Any,
        name1: str,
        name2: str,
        transformation_ctx: str = "",
        info: str = "",
        stageThreshold: int = 0,
        totalThreshold: int = 0,
    ) -> DynamicFrameCollection:
        """{name1: the fields at ``paths``, name2: the others}."""
        chosen = self._with(fields.select_fields(self._df, paths), name=name1)
        rest = self._with(fields.drop_fields(self._df, paths), name=name2)
        return DynamicFrameCollection({name1: chosen, name2: rest}, self.glue_ctx)

    def resolveChoice(
        self,
        specs: Any = None,
        choice: str = "",
        database: Optional[str] = None,
        table_name: Optional[str] = None,
        transformation_ctx: str = "",
        info: str = "",
        stageThreshold: int = 0,
        totalThreshold: int = 0,
        catalog_id: Optional[str] = None,
    ) -> DynamicFrame:
        """Glue's resolveChoice on single-typed fields
        (:mod:`~kinesis_dstream.glue.transforms.choices`)."""
        parsed, default = choices.parse_specs(specs, choice)

        def catalog_columns() -> list:
            from ...aws import create_client
            from ..catalog.tables import TableName, get_table

            if not database or not table_name:
                raise GlueError("resolveChoice: match_catalog needs database and table_name")
            table = get_table(create_client("glue"), TableName(database, table_name, catalog_id))
            storage = table.get("StorageDescriptor") or {}
            return [*(storage.get("Columns") or []), *(table.get("PartitionKeys") or [])]

        return self._with(choices.resolve_choice(self._df, parsed, default, catalog_columns))

    # --- records -------------------------------------------------------------------------

    def filter(
        self,
        f: Callable,
        transformation_ctx: str = "",
        info: str = "",
        stageThreshold: int = 0,
        totalThreshold: int = 0,
    ) -> DynamicFrame:
        """The records for which ``f(record)`` is true
        (:mod:`~kinesis_dstream.glue.frames.records`)."""
        df, errors = dynamicframe_records.filter_rows(self._df, f)
        return self._with(df, errors)

    def map(
        self,
        f: Callable,
        preservesPartitioning: bool = False,
        transformation_ctx: str = "",
        info: str = "",
        stageThreshold: int = 0,
        totalThreshold: int = 0,
    ) -> DynamicFrame:
        """``f(record)`` of each record, the schema inferred from the results."""
        df, errors = dynamicframe_records.map_rows(self._df, f)
        return self._with(df, errors)

    def split_rows(
        self,
        comparison_dict: Any,
        name1: str,
        name2: str,
        transformation_ctx: str = "",
        info: str = "",
        stageThreshold: int = 0,
        totalThreshold: int = 0,
    ) -> DynamicFrameCollection:
        """{name1: the rows meeting every comparison, name2: the others}."""
        matched, rest = frame_ops.split_rows(self._df, comparison_dict)
        frames = {name1: self._with(matched, name=name1), name2: self._with(rest, name=name2)}
        return DynamicFrameCollection(frames, self.glue_ctx)

    def errorsAsDynamicFrame(self) -> DynamicFrame:
        """The error records of this frame and the frames it was made from: one row each,
        ``transformation``, ``errorMessage`` and the ``record`` as JSON."""
        spark = self._df.sparkSession
        frames = [df for _, df in self._errors.all()]
        out = spark.createDataFrame([], dynamicframe_records.ERROR_SCHEMA)
        for df in frames:
            out = out.unionByName(df)
        return DynamicFrame(out, self.glue_ctx, self.name)

    def errorsCount(self) -> int:
        """The error records of this frame and the frames it was made from."""
        return sum(count for count, _ in self._errors.all())

    def stageErrorsCount(self) -> int:
        """The error records of the transform that made this frame."""
        return self._errors.stage[0] if self._errors.stage else 0

    def assertErrorThreshold(self) -> None:
        return None

    # --- frames --------------------------------------------------------------------------

    def join(
        self,
        paths1: Any,
        paths2: Any,
        frame2: DynamicFrame,
        transformation_ctx: str = "",
        info: str = "",
        stageThreshold: int = 0,
        totalThreshold: int = 0,
    ) -> DynamicFrame:
        joined = frame_ops.join(self._df, paths1, paths2, frame2._df)
        errors = FrameErrors(None, (*self._errors.all(), *frame2._errors.all()))
        return DynamicFrame(joined, self.glue_ctx, self.name + frame2.name, errors)

    def union(
        self,
        other_frame: DynamicFrame,
        transformation_ctx: str = "",
        info: str = "",
        stageThreshold: int = 0,
        totalThreshold: int = 0,
    ) -> DynamicFrame:
        united = frame_ops.union(self._df, other_frame._df)
        errors = FrameErrors(None, (*self._errors.all(), *other_frame._errors.all()))
        return DynamicFrame(united, self.glue_ctx, self.name, errors)

    def repartition(
        self,
        num_partitions: int,
        transformation_ctx: str = "",
        info: str = "",
        stageThreshold: int = 0,
        totalThreshold: int = 0,
    ) -> DynamicFrame:
        return self._with(self._df.repartition(int(num_partitions)))

    def coalesce(
        self,
        num_partitions: int,
        shuffle: bool = False,
        transformation_ctx: str = "",
        info: str = "",
        stageThreshold: int = 0,
        totalThreshold: int = 0,
    ) -> DynamicFrame:
        n = int(num_partitions)
        return self._with(self._df.repartition(n) if shuffle else self._df.coalesce(n))

    def unnest(
        self,
        transformation_ctx: str = "",
        info: str = "",
        stageThreshold: int = 0,
        totalThreshold: int = 0,
    ) -> DynamicFrame:
        """Nested struct fields as top-level fields named by their path (``a.b``)."""
        return self._with(relational.unnest(self._df))

    def relationalize(
        self,
        root_table_name: str,
        staging_path: str = "",
        options: Any = None,
        transformation_ctx: str = "",
        info: str = "",
        stageThreshold: int = 0,
        totalThreshold: int = 0,
    ) -> DynamicFrameCollection:
        """The root frame, unnested, and a frame per array
        (:mod:`~kinesis_dstream.glue.transforms.relational`); the
        staging path is not needed (the frames stay in Spark)."""
        frames = relational.relationalize(self._df, root_table_name)
        named = {name: self._with(df, name=name) for name, df in frames.items()}
        return DynamicFrameCollection(named, self.glue_ctx)

    def unbox(
        self,
        path: str,
        format: str,
        transformation_ctx: str = "",
        info: str = "",
        stageThreshold: int = 0,
        totalThreshold: int = 0,
        **options: Any,
    ) -> DynamicFrame:
        """The string field at ``path`` parsed (json, csv) into its structure."""
        return self._with(relational.unbox(self._df, path, format, options))

    def spigot(
        self,
        path: str,
        options: Any = None,
        transformation_ctx: str = "",
        info: str = "",
        stageThreshold: int = 0,
        totalThreshold: int = 0,
    ) -> DynamicFrame:
        """Writes a sample of the records as JSON to ``path`` (``topk``: the first k, 100
        by default; ``prob``: each record with that probability) and returns the frame."""
        batch_only(self._df, "Spigot")
        options = dict(options or {})
        sample = self._df
        if "prob" in options:
            sample = sample.sample(fraction=float(options["prob"]))
        sample = sample.limit(int(options.get("topk", 100)))
        self.glue_ctx.write_dynamic_frame_from_options(
            frame=DynamicFrame(sample, self.glue_ctx, self.name),
            connection_type="s3",
            connection_options={"path": path},
            format="json",
        )
        return self

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


DynamicFrameCollection.frame_class = DynamicFrame

__all__ = ["DynamicFrame", "DynamicFrameCollection", "ResolveOption"]
