"""``glueContext.write_dynamic_frame`` / ``write_data_frame``: a frame to a Kinesis
stream (this library's sink, one JSON record per row), to S3 (:mod:`.s3_output`) or to
a DynamoDB table (:mod:`.dynamodb_sink`), from options or from a catalog table."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Optional

from ...aws import create_client
from ...sql.sink import partition_key_source
from ..catalog.tables import TableName, catalog_sink, get_table
from ..catalog.updates import CatalogUpdate, split_update_options
from ..errors import ReportsNotProvided, not_provided
from ..frames.dynamicframe import DynamicFrame, DynamicFrameCollection
from ..options import TYPE_OF_DATA, check_type_of_data, option_text
from ..transforms.fields import top_column
from .connection_types import connection_refusal
from .dynamodb_sink import write_dynamodb
from .file_target import FileTarget, warn_ignored
from .s3_output import write_files

log = logging.getLogger(__name__)

PARTITION_KEY = "partitionKey"


def frame_of(frame_or_dfc: Any) -> Any:
    """The DataFrame behind a DynamicFrame; Glue's TypeError for anything else."""
    if not isinstance(frame_or_dfc, DynamicFrame):
        raise TypeError(
            f"frame_or_dfc must be DynamicFrame or DynamicFrameCollection. Got {type(frame_or_dfc)}"
        )
    return frame_or_dfc.toDF()


def write_kinesis(df: Any, connection_options: Mapping[str, Any], format: Any = None) -> None:
    """Each row as one JSON record (Spark's ``to_json``), as Glue writes to Kinesis.

    ``partitionKey``: the sink's rule (:func:`~kinesis_dstream.sql.sink.partition_key_source`:
    a column of that name gives each record's key, any other value is every record's
    key); without it each record gets a random key (spread over shards).
    Other options go to this library's sink (``streamARN`` or ``streamName``,
    ``endpointUrl``, ``aggregationEnabled``...).
    """
    from pyspark.sql import functions as F

    if format and str(format).strip().lower() != "json":
        raise not_provided(
            f"writing Kinesis records as {format!r}", "Glue writes Kinesis records as json"
        )
    check_type_of_data(connection_options, "write to kinesis")
    options = {
        k: option_text(v)
        for k, v in connection_options.items()
        if v is not None and k.lower() != TYPE_OF_DATA.lower()
    }
    key_name = next((k for k in options if k.lower() == PARTITION_KEY.lower()), None)
    key = options.pop(key_name) if key_name else None
    column, fixed = partition_key_source(key, df.columns)
    if key is None:
        key_column = F.expr("uuid()")  # Glue: random keys, spread over the shards
    elif column is not None:
        key_column = top_column(column).cast("string")
    else:
        key_column = F.lit(fixed)
    data = F.to_json(F.struct(*[top_column(c) for c in df.columns]))
    out = df.select(data.alias("data"), key_column.alias(PARTITION_KEY))
    out.write.format("kinesis").mode("append").options(**options).save()


def write_options(
    spark: Any,
    frame_or_dfc: Any,
    connection_type: str,
    connection_options: Mapping[str, Any],
    format: Any = None,
    format_options: Optional[Mapping[str, Any]] = None,
) -> Any:
    """``write_dynamic_frame.from_options``: ``connection_type`` kinesis, s3 or dynamodb;
    a DynamicFrameCollection is written frame by frame, as Glue's ``DataSink.write``."""
    if isinstance(frame_or_dfc, DynamicFrameCollection):
        for name in frame_or_dfc.keys():  # noqa: SIM118 (the collection has no __iter__)
            write_options(
                spark,
                frame_or_dfc[name],
                connection_type,
                connection_options,
                format,
                format_options,
            )
        return frame_or_dfc
    df = frame_of(frame_or_dfc)
    refusal = connection_refusal(connection_type)
    if refusal is not None:
        raise refusal
    kind = str(connection_type).strip().lower()
    if kind == "kinesis":
        warn_ignored("kinesis format_options", format_options or {}, "Kinesis records are JSON")
        options, behavior = split_update_options(connection_options)
        if behavior is not None:
            warn_ignored("kinesis connection_options", ["enableUpdateCatalog"], "not an S3 table")
        write_kinesis(df, options, format)
    elif kind == "s3":
        write_s3(spark, df, connection_options, format, format_options or {})
    else:
        if format or format_options:
            warn_ignored("dynamodb format and format_options", ["format"], "items are not files")
        write_dynamodb(spark, df, connection_options)
    return frame_or_dfc


def write_s3(
    spark: Any,
    df: Any,
    connection_options: Mapping[str, Any],
    format: Any,
    format_options: Mapping[str, Any],
    catalog: Optional[tuple] = None,
) -> None:
    """``df`` to S3; with ``enableUpdateCatalog`` and ``catalog`` (the Glue client, the
    :class:`TableName` and its GetTable answer or None when new) the catalog updated
    after the files are written (:mod:`~kinesis_dstream.glue.catalog.updates`)."""
    options, behavior = split_update_options(connection_options)
    target = FileTarget.parse(options, format, format_options)
    update = None
    if behavior is not None and catalog is None:
        warn_ignored(
            "s3 connection_options",
            ["enableUpdateCatalog"],
            "no catalog table to update: write from_catalog, or getSink with setCatalogInfo",
        )
    elif behavior is not None:
        update = CatalogUpdate(*catalog, behavior=behavior)  # type: ignore[misc]
        update.prepare(df.schema, target.fmt, target.path, target.partition_keys, target.separator)
    write_files(spark, df, target)
    if update is not None:
        update.add_written_partitions(df, target.partition_keys)


def write_catalog(
    spark: Any,
    frame: Any,
    name: TableName,
    additional_options: Mapping[str, Any],
    client: Any = None,
) -> Any:
    """``write_dynamic_frame.from_catalog``: a Kinesis table's stream or an S3 table's
    location (its partition keys, its format, a CSV table's SerDe separator), the
    catalog updated as Glue does with ``enableUpdateCatalog``."""
    client = client or create_client("glue")
    table = get_table(client, name)
    kind, options, fmt, format_options = catalog_sink(table, name, additional_options)
    if kind != "s3":
        return write_options(spark, frame, kind, options, fmt, format_options)
    write_s3(spark, frame_of(frame), options, fmt, format_options, (client, name, table))
    return frame


class _CatalogWriter(ReportsNotProvided):
    """``from_catalog`` as both of Glue's writers have it, calling the GlueContext's
    method named by ``context_method``."""

    context_method = ""

    def __init__(self, glue_context: Any) -> None:
        self._glue_context = glue_context

    def from_catalog(
        self,
        frame: Any,
        database: Optional[str] = None,
        table_name: Optional[str] = None,
        redshift_tmp_dir: str = "",
        transformation_ctx: str = "",
        additional_options: Mapping[str, Any] = {},
        catalog_id: Optional[str] = None,
        **kwargs: Any,
    ) -> Any:
        name = TableName.from_arguments(database, table_name, catalog_id, kwargs)
        return getattr(self._glue_context, self.context_method)(
            frame,
            name.database,
            name.table,
            redshift_tmp_dir,
            transformation_ctx,
            additional_options,
            catalog_id,
            **kwargs,
        )


class DynamicFrameWriter(_CatalogWriter):
    """``glueContext.write_dynamic_frame``."""

    glue_name = "write_dynamic_frame"
    context_method = "write_dynamic_frame_from_catalog"

    def from_options(
        self,
        frame: Any,
        connection_type: str,
        connection_options: Mapping[str, Any] = {},
        format: Optional[str] = None,
        format_options: Mapping[str, Any] = {},
        transformation_ctx: str = "",
    ) -> Any:
        return self._glue_context.write_dynamic_frame_from_options(
            frame, connection_type, connection_options, format, format_options, transformation_ctx
        )


class DataFrameWriter(_CatalogWriter):
    """``glueContext.write_data_frame``: a DataFrame to a catalog table."""

    glue_name = "write_data_frame"
    context_method = "write_data_frame_from_catalog"
