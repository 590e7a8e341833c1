"""``glueContext.create_data_frame``: a streaming DataFrame from a Kinesis catalog table
or from Glue's Kinesis connection options, through this library's source."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Optional

from ...aws import create_client
from ..catalog.tables import TableName, catalog_source_options, get_table
from ..errors import GlueError, ReportsNotProvided, not_provided
from ..options import source_options
from ..streaming.checkpoint_ends import with_deferred_ends
from .corrupt_records import glue_columns, pop_corrupt_column
from .infer_schema import raw_options, text_frame, text_kind

log = logging.getLogger(__name__)


def kinesis_stream(spark: Any, options: Mapping[str, str]) -> Any:
    """The frame a Glue script sees of ``spark.readStream.format("kinesis")`` with
    ``options`` (checked at ``load()``): with ``inferSchema``, Glue's text column
    (:mod:`.infer_schema`); otherwise the data's columns, the records that do not parse
    counted and kept only where ``columnNameOfCorruptRecord`` asks (:mod:`.corrupt_records`). Its
    range ends go inside the checkpoint of the query that reads it
    (:mod:`~kinesis_dstream.glue.streaming.checkpoint_ends`)."""
    options = dict(options)
    corrupt_column = pop_corrupt_column(options)
    kind = text_kind(options)
    if kind is not None:
        raw_reader = spark.readStream.format("kinesis")
        raw = raw_reader.options(**with_deferred_ends(raw_options(options))).load()
        delimiter = {k.lower(): v for k, v in options.items()}.get("delimiter")
        return text_frame(raw, kind, delimiter, corrupt_column)
    df = spark.readStream.format("kinesis").options(**with_deferred_ends(options)).load()
    return glue_columns(df, corrupt_column)


def note_ignored(method: str, push_down_predicate: str, kwargs: dict) -> None:
    if push_down_predicate:
        log.warning("%s: push_down_predicate has no effect on a streaming source; ignored", method)
    if kwargs:
        log.warning("%s: arguments %s have no effect here; ignored", method, sorted(kwargs))


def read_catalog(
    spark: Any, name: TableName, additional_options: Mapping[str, Any], client: Optional[Any] = None
) -> Any:
    """The Kinesis table ``name`` (Glue's ``GetTable``) as a streaming DataFrame."""
    table = get_table(client or create_client("glue"), name)
    return kinesis_stream(spark, catalog_source_options(table, name, additional_options))


def read_options(
    spark: Any,
    connection_type: str,
    connection_options: Mapping[str, Any],
    format: Any = None,
    format_options: Optional[Mapping[str, Any]] = None,
) -> Any:
    """Glue's Kinesis connection options as a streaming DataFrame."""
    if str(connection_type).strip().lower() != "kinesis":
        raise not_provided(
            f"create_data_frame.from_options(connection_type={connection_type!r})",
            "this layer reads connection_type 'kinesis'",
        )
    if format_options:
        raise not_provided(
            f"create_data_frame.from_options format_options {sorted(format_options)}",
            "give Glue's Kinesis connection options (classification, delimiter, schema...)",
        )
    options = source_options(connection_options, "create_data_frame.from_options")
    if format:
        given = {k.lower(): v for k, v in options.items()}.get("classification")
        if given is not None and given.lower() != str(format).lower():
            raise GlueError(
                f"create_data_frame.from_options: format={format!r} and connection option "
                f"classification={given!r} differ; give one"
            )
        options.setdefault("classification", str(format))
    return kinesis_stream(spark, options)


class DataFrameReader(ReportsNotProvided):
    """``glueContext.create_data_frame``."""

    glue_name = "create_data_frame"

    def __init__(self, glue_context: Any) -> None:
        self._glue_context = glue_context

    def from_catalog(
        self,
        database: Optional[str] = None,
        table_name: Optional[str] = None,
        redshift_tmp_dir: str = "",
        transformation_ctx: str = "",
        push_down_predicate: str = "",
        additional_options: Mapping[str, Any] = {},
        catalog_id: Optional[str] = None,
        **kwargs: Any,
    ) -> Any:
        name = TableName.from_arguments(database, table_name, catalog_id, kwargs)
        return self._glue_context.create_data_frame_from_catalog(
            name.database,
            name.table,
            redshift_tmp_dir,
            transformation_ctx,
            push_down_predicate,
            additional_options,
            catalog_id,
            **kwargs,
        )

    def from_options(
        self,
        connection_type: str,
        connection_options: Mapping[str, Any] = {},
        format: Optional[str] = None,
        format_options: Mapping[str, Any] = {},
        transformation_ctx: str = "",
        push_down_predicate: str = "",
        **kwargs: Any,
    ) -> Any:
        return self._glue_context.create_data_frame_from_options(
            connection_type,
            connection_options,
            format,
            format_options,
            transformation_ctx,
            push_down_predicate,
            **kwargs,
        )


class DynamicFrameReader(ReportsNotProvided):
    """``glueContext.create_dynamic_frame``: Glue reads streams into DataFrames
    (``create_data_frame``); every method here is not provided."""

    glue_name = "create_dynamic_frame"

    def __init__(self, glue_context: Any) -> None:
        self._glue_context = glue_context

    def from_catalog(self, *args: Any, **kwargs: Any) -> Any:
        raise not_provided(
            "create_dynamic_frame.from_catalog",
            "a streaming job reads with create_data_frame.from_catalog",
        )

    def from_options(self, *args: Any, **kwargs: Any) -> Any:
        raise not_provided(
            "create_dynamic_frame.from_options",
            "a streaming job reads with create_data_frame.from_options",
        )
