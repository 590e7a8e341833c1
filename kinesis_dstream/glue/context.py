"""``awsglue.context.GlueContext`` over this library's Kinesis source and sink.

Signatures and defaults as aws-glue-libs has them; behaviour delegated to the source
(``format("kinesis")``), the sink and the S3 writer. It is an ``SQLContext``, as Glue's
is. A method Glue has and this layer does not provide raises
:class:`~.errors.NotProvidedError` naming it (``GlueContext.getSource``...).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import Any, Callable, Optional

from pyspark.sql import SQLContext

from ..sql import KinesisDataSource
from .catalog.tables import TableName
from .errors import ReportsNotProvided, not_provided
from .frames.dynamicframe import DynamicFrame
from .frames.ingestion import add_ingestion_time_columns
from .logger import GlueLogger
from .options import ForEachBatchOptions
from .sinks.data_sink import DataSink
from .sinks.file_sink import GlueFileSink
from .sinks.writers import (
    DataFrameWriter,
    DynamicFrameWriter,
    frame_of,
    write_catalog,
    write_options,
)
from .sources.batch_readers import is_batch_connection, read_batch_options
from .sources.batch_source import GlueBatchSource
from .sources.readers import (
    DataFrameReader,
    DynamicFrameReader,
    note_ignored,
    read_any_catalog,
    read_options,
)
from .streaming.foreach_batch import BatchLoop

log = logging.getLogger(__name__)

#: GlueContext options that size DynamicFrame partitions: no effect on a stream.
PARTITION_OPTIONS = ("minPartitions", "targetPartitions")


def _frame_options(where: str, kwargs: dict) -> None:
    """``getFrame``'s options (Glue's ``minPartitions``/``targetPartitions``: how many
    partitions the frame has) have no effect here; anything else is named once."""
    sizing = {k: kwargs.pop(k) for k in PARTITION_OPTIONS if k in kwargs}
    if sizing:
        log.debug("%s: %s size the frame's partitions; no effect here", where, sizing)
    note_ignored(where, "", kwargs)


class GlueContext(ReportsNotProvided, SQLContext):
    """Glue's entry point: ``GlueContext(sc)``, ``GlueContext(spark_session)`` or
    ``GlueContext()`` (the active session)."""

    glue_name = "GlueContext"

    def __init__(self, sparkContext: Any = None, **options: Any) -> None:
        from pyspark.sql import SparkSession

        if isinstance(sparkContext, SparkSession):
            session = sparkContext
        else:
            session = SparkSession.builder.getOrCreate()
        unknown = sorted(set(options) - set(PARTITION_OPTIONS))
        if unknown:
            raise not_provided(f"GlueContext options {unknown}")
        if options:
            log.debug(
                "GlueContext options %s size DynamicFrame partitions; no effect here", options
            )
        SQLContext.__init__(self, session.sparkContext, session)
        session.dataSource.register(KinesisDataSource)
        session.dataSource.register(GlueFileSink)
        session.dataSource.register(GlueBatchSource)
        self.spark_session = session
        self.create_dynamic_frame = DynamicFrameReader(self)
        self.create_data_frame = DataFrameReader(self)
        self.write_dynamic_frame = DynamicFrameWriter(self)
        self.write_data_frame = DataFrameWriter(self)
        self._glue_logger = GlueLogger()

    # --- reading ---------------------------------------------------------------------

    def create_data_frame_from_catalog(
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
        """A Data Catalog table (``GetTable``) as a DataFrame: a Kinesis table's stream,
        an S3 or DynamoDB table's records (a batch)."""
        name = TableName.from_arguments(database, table_name, catalog_id, kwargs)
        note_ignored("create_data_frame.from_catalog", "", kwargs)
        frame, _ = read_any_catalog(
            self.spark_session, name, additional_options, push_down_predicate
        )
        return frame

    def create_data_frame_from_options(
        self,
        connection_type: str,
        connection_options: Mapping[str, Any] = {},
        format: Optional[str] = None,
        format_options: Mapping[str, Any] = {},
        transformation_ctx: str = "",
        push_down_predicate: str = "",
        **kwargs: Any,
    ) -> Any:
        """A DataFrame of Glue's connection options: a Kinesis stream, or S3 files or a
        DynamoDB table (a batch)."""
        where = "create_data_frame.from_options"
        if is_batch_connection(connection_type):
            note_ignored(where, "", kwargs)
            return read_batch_options(
                self.spark_session,
                connection_type,
                connection_options,
                format,
                format_options,
                where,
            )
        note_ignored(where, push_down_predicate, kwargs)
        return read_options(
            self.spark_session, connection_type, connection_options, format, format_options
        )

    def create_dynamic_frame_from_options(
        self,
        connection_type: str,
        connection_options: Mapping[str, Any] = {},
        format: Optional[str] = None,
        format_options: Mapping[str, Any] = {},
        transformation_ctx: str = "",
        push_down_predicate: str = "",
        **kwargs: Any,
    ) -> DynamicFrame:
        """A DynamicFrame of S3 files or a DynamoDB table (see
        :mod:`~kinesis_dstream.glue.sources.batch_readers`)."""
        where = "create_dynamic_frame.from_options"
        if str(connection_type).strip().lower() == "kinesis":
            raise not_provided(
                f"{where}(connection_type='kinesis')",
                "a streaming job reads a stream with create_data_frame.from_options",
            )
        _frame_options(where, kwargs)
        df = read_batch_options(
            self.spark_session, connection_type, connection_options, format, format_options, where
        )
        return DynamicFrame(df, self, transformation_ctx or str(connection_type))

    def create_dynamic_frame_from_catalog(
        self,
        database: Optional[str] = None,
        table_name: Optional[str] = None,
        redshift_tmp_dir: str = "",
        transformation_ctx: str = "",
        push_down_predicate: str = "",
        additional_options: Mapping[str, Any] = {},
        catalog_id: Optional[str] = None,
        **kwargs: Any,
    ) -> DynamicFrame:
        """A DynamicFrame of a catalog table over S3 files or a DynamoDB table."""
        name = TableName.from_arguments(database, table_name, catalog_id, kwargs)
        _frame_options("create_dynamic_frame.from_catalog", kwargs)
        df, _ = read_any_catalog(
            self.spark_session, name, additional_options, push_down_predicate, batch_only=True
        )
        return DynamicFrame(df, self, str(name.table))

    # --- writing ---------------------------------------------------------------------

    def write_dynamic_frame_from_options(
        self,
        frame: Any,
        connection_type: str,
        connection_options: Mapping[str, Any] = {},
        format: Optional[str] = None,
        format_options: Mapping[str, Any] = {},
        transformation_ctx: str = "",
    ) -> Any:
        """``frame`` to a Kinesis stream (JSON records), to S3 or to a DynamoDB table."""
        return self.write_from_options(
            frame, connection_type, connection_options, format, format_options, transformation_ctx
        )

    def write_from_options(
        self,
        frame_or_dfc: Any,
        connection_type: str,
        connection_options: Mapping[str, Any] = {},
        format: Any = None,
        format_options: Mapping[str, Any] = {},
        transformation_ctx: str = "",
        **kwargs: Any,
    ) -> Any:
        note_ignored("write_from_options", "", kwargs)
        return write_options(
            self.spark_session,
            frame_or_dfc,
            connection_type,
            connection_options,
            format,
            format_options,
        )

    def getSink(
        self,
        connection_type: str,
        format: Optional[str] = None,
        transformation_ctx: str = "",
        **options: Any,
    ) -> Any:
        """A :class:`~kinesis_dstream.glue.sinks.data_sink.DataSink`: ``options`` are its
        connection options."""
        sink = DataSink(self, connection_type, options)
        if format:
            sink.setFormat(format)
        return sink

    def write_dynamic_frame_from_catalog(
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
        """``frame`` to a catalog table: a Kinesis table's stream or an S3 table."""
        name = TableName.from_arguments(database, table_name, catalog_id, kwargs)
        note_ignored("write_dynamic_frame.from_catalog", "", kwargs)
        return write_catalog(self.spark_session, frame, name, additional_options)

    def write_data_frame_from_catalog(
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
        """A DataFrame to a catalog table (as :meth:`write_dynamic_frame_from_catalog`)."""
        name = TableName.from_arguments(database, table_name, catalog_id, kwargs)
        note_ignored("write_data_frame.from_catalog", "", kwargs)
        dynamic = DynamicFrame.fromDF(frame, self, str(name.table))
        return write_catalog(self.spark_session, dynamic, name, additional_options)

    # --- streaming -------------------------------------------------------------------

    def forEachBatch(
        self,
        frame: Any,
        batch_function: Callable[[Any, int], Any],
        options: Mapping[str, Any] = {},
    ) -> None:
        """Run ``batch_function(data_frame, batch_id)`` on every non-empty micro-batch
        (see :mod:`~kinesis_dstream.glue.streaming.foreach_batch`); returns when the query is
        stopped (Ctrl-C)."""
        BatchLoop(frame, batch_function, ForEachBatchOptions.parse(options)).run()

    def add_ingestion_time_columns(self, frame: Any, time_granularity: str) -> Any:
        """``frame`` (a DataFrame) with ``ingest_year``, ``ingest_month``, ``ingest_day``
        [, ``ingest_hour`` [, ``ingest_minute``]] of now, UTC, zero-padded strings."""
        df = frame_of(frame) if isinstance(frame, DynamicFrame) else frame
        return add_ingestion_time_columns(df, time_granularity)

    def get_logger(self) -> GlueLogger:
        return self._glue_logger

    def currentTimeMillis(self) -> int:
        return round(time.time() * 1000)
