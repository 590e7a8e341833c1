"""``glueContext.getSink`` and ``awsglue.data_sink.DataSink``: a writer configured step by
step, as AWS documents it for catalog updates::

    sink = glueContext.getSink(connection_type="s3", path="s3://bucket/out/",
                               enableUpdateCatalog=True, updateBehavior="UPDATE_IN_DATABASE",
                               partitionKeys=["region"])
    sink.setFormat("glueparquet")
    sink.setCatalogInfo(catalogDatabase="db", catalogTableName="events")
    sink.writeFrame(frame)

``getSink``'s keyword options are the connection options, ``setFormat``'s the format
options (taken as ``write_dynamic_frame.from_options`` takes them); ``setCatalogInfo``
names the table ``enableUpdateCatalog`` updates (created when it is not in the catalog).
"""

from __future__ import annotations

import logging
from typing import Any, Optional

from ...aws import create_client
from ..catalog.formats import table_format
from ..catalog.tables import TableName, get_table
from ..errors import GlueError, ReportsNotProvided
from ..frames.dynamicframe import DynamicFrame, DynamicFrameCollection
from .writers import frame_of, write_options, write_s3

log = logging.getLogger(__name__)


class DataSink(ReportsNotProvided):
    """Glue's ``DataSink``: ``setFormat``, ``setCatalogInfo``, ``writeFrame``, ``write``."""

    glue_name = "DataSink"

    def __init__(self, glue_context: Any, connection_type: str, options: dict) -> None:
        self._glue_context = glue_context
        self._connection_type = str(connection_type).strip().lower()
        self._options = dict(options)
        self._format: Optional[str] = None
        self._format_options: dict = {}
        self._catalog: Optional[TableName] = None

    def setFormat(self, format: str, **options: Any) -> None:
        self._format = format
        self._format_options = options

    def setCatalogInfo(
        self, catalogDatabase: str, catalogTableName: str, catalogId: Optional[str] = ""
    ) -> None:
        self._catalog = TableName(str(catalogDatabase), str(catalogTableName), catalogId or None)

    def setAccumulableSize(self, size: int) -> None:
        log.debug("DataSink.setAccumulableSize(%s): no effect here", size)

    def writeFrame(self, dynamic_frame: Any, info: str = "") -> Any:
        """Write ``dynamic_frame``; Glue's answer, the frame of error records (none here:
        a DynamicFrame of no rows)."""
        df = frame_of(dynamic_frame)
        spark = self._glue_context.spark_session
        if self._catalog is None or self._connection_type != "s3":
            write_options(
                spark,
                dynamic_frame,
                self._connection_type,
                self._options,
                self._format,
                self._format_options,
            )
        else:
            self._write_to_catalog(spark, df)
        return DynamicFrame(df.limit(0), self._glue_context, f"{dynamic_frame.name}_errors")

    def write(self, dynamic_frame_or_dfc: Any, info: str = "") -> Any:
        if isinstance(dynamic_frame_or_dfc, DynamicFrameCollection):
            names = list(dynamic_frame_or_dfc.keys())
            written = {k: self.writeFrame(dynamic_frame_or_dfc[k], info) for k in names}
            return DynamicFrameCollection(written, self._glue_context)
        return self.writeFrame(dynamic_frame_or_dfc, info)

    def _write_to_catalog(self, spark: Any, df: Any) -> None:
        assert self._catalog is not None
        client = create_client("glue")
        try:
            table: Optional[dict] = get_table(client, self._catalog)
        except GlueError:
            table = None  # not in the catalog: created by the update
        options = dict(self._options)
        if not options.get("path") and table is not None:
            options["path"] = (table.get("StorageDescriptor") or {}).get("Location")
        fmt = self._format or (table_format(table, self._catalog) if table else "json")
        write_s3(spark, df, options, fmt, self._format_options, (client, self._catalog, table))
