"""``glueContext.create_data_frame`` and ``create_dynamic_frame``: a streaming DataFrame
from a Kinesis catalog table or from Glue's Kinesis connection options, through this
library's source; any other table or connection a batch read
(:mod:`.batch_readers`)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Optional

from ...aws import create_client
from ..catalog.tables import TableName, catalog_source_options, get_table, is_kinesis_table
from ..errors import GlueError, ReportsNotProvided, not_provided
from ..options import source_options
from ..streaming.checkpoint_ends import with_deferred_ends
from .batch_readers import read_batch_table
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


def read_any_catalog(
    spark: Any,
    name: TableName,
    additional_options: Mapping[str, Any],
    push_down_predicate: str = "",
    batch_only: bool = False,
    client: Optional[Any] = None,
) -> tuple:
    """``(DataFrame, is a stream)`` of table ``name``: a Kinesis table's stream, any
    other table read as a batch (``batch_only``: a Kinesis table refused,
    create_dynamic_frame reads batches only)."""
    table = get_table(client or create_client("glue"), name)
    if is_kinesis_table(table):
        if batch_only:
            raise not_provided(
                f"create_dynamic_frame.from_catalog of the Kinesis {name}",
                "a streaming job reads a stream with create_data_frame.from_catalog",
            )
        note_ignored(f"from_catalog({name})", push_down_predicate, {})
        return kinesis_stream(spark, catalog_source_options(table, name, additional_options)), True
    return read_batch_table(spark, table, name, additional_options, push_down_predicate), False


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
            "this layer reads connection_type 'kinesis' (a stream), 's3' and 'dynamodb'",
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


class FrameReader(ReportsNotProvided):
    """A GlueContext reader (``create_data_frame``, ``create_dynamic_frame``): its
    ``from_catalog`` and ``from_options`` take aws-glue-libs' arguments and call the
    GlueContext's ``<glue_name>_from_catalog`` / ``_from_options``, as Glue's do."""

    glue_name = ""

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
        return getattr(self._glue_context, f"{self.glue_name}_from_catalog")(
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
        return getattr(self._glue_context, f"{self.glue_name}_from_options")(
            connection_type,
            connection_options,
            format,
            format_options,
            transformation_ctx,
            push_down_predicate,
            **kwargs,
        )


class DataFrameReader(FrameReader):
    """``glueContext.create_data_frame``: a Kinesis stream, or a batch of S3 files or of
    a DynamoDB table."""

    glue_name = "create_data_frame"


class DynamicFrameReader(FrameReader):
    """``glueContext.create_dynamic_frame``: batch reads (S3 files, DynamoDB tables, their
    catalog tables); a stream is read with ``create_data_frame``."""

    glue_name = "create_dynamic_frame"
