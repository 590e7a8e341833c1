"""The file format of an S3 catalog table, as Glue reads it from the table.

A table made by a crawler or by Glue carries ``classification`` in its parameters; a
table made with Athena's DDL (``CREATE EXTERNAL TABLE … STORED AS PARQUET``) often has
none, only its SerDe library and input format. Both say the format; ``classification``
wins where both are given. A table saying neither is written as JSON.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

log = logging.getLogger(__name__)

#: SerDe libraries (``SerdeInfo.SerializationLibrary``) and the format they read.
SERDE_FORMATS = {
    "org.apache.hadoop.hive.ql.io.parquet.serde.parquethiveserde": "parquet",
    "org.apache.hadoop.hive.ql.io.orc.orcserde": "orc",
    "org.apache.hadoop.hive.serde2.avro.avroserde": "avro",
    "org.apache.hadoop.hive.serde2.opencsvserde": "csv",
    "org.apache.hadoop.hive.serde2.lazy.lazysimpleserde": "csv",
    "org.openx.data.jsonserde.jsonserde": "json",
    "org.apache.hive.hcatalog.data.jsonserde": "json",
    "org.apache.hadoop.hive.serde2.jsonserde": "json",
    "com.amazon.ionhiveserde.ionhiveserde": "ion",
}
#: Input formats (``StorageDescriptor.InputFormat``) and their format, where the SerDe
#: does not say (a table with an unusual SerDe).
INPUT_FORMATS = {
    "org.apache.hadoop.hive.ql.io.parquet.mapredparquetinputformat": "parquet",
    "org.apache.hadoop.hive.ql.io.orc.orcinputformat": "orc",
    "org.apache.hadoop.hive.ql.io.avro.avrocontainerinputformat": "avro",
}
DEFAULT_FORMAT = "json"


def table_format(table: Mapping[str, Any], name: Any = "") -> str:
    """The format ``write_dynamic_frame.from_catalog`` writes ``table`` in."""
    storage = table.get("StorageDescriptor") or {}
    for params in (table.get("Parameters") or {}, storage.get("Parameters") or {}):
        if params.get("classification"):
            return str(params["classification"]).strip().lower()
    serde = str((storage.get("SerdeInfo") or {}).get("SerializationLibrary") or "").lower()
    found = SERDE_FORMATS.get(serde) or INPUT_FORMATS.get(
        str(storage.get("InputFormat") or "").lower()
    )
    if found:
        log.info("%s has no classification; its SerDe and input format say %s", name, found)
        return found
    return DEFAULT_FORMAT


#: How Glue describes a table of each format it creates (``setCatalogInfo`` on a table
#: not yet in the catalog): input and output format, SerDe library.
_TEXT_INPUT = "org.apache.hadoop.mapred.TextInputFormat"
_TEXT_OUTPUT = "org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat"
FORMAT_STORAGE = {
    "json": (_TEXT_INPUT, _TEXT_OUTPUT, "org.openx.data.jsonserde.JsonSerDe"),
    "csv": (_TEXT_INPUT, _TEXT_OUTPUT, "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"),
    "parquet": (
        "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
        "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
        "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe",
    ),
    "avro": (
        "org.apache.hadoop.hive.ql.io.avro.AvroContainerInputFormat",
        "org.apache.hadoop.hive.ql.io.avro.AvroContainerOutputFormat",
        "org.apache.hadoop.hive.serde2.avro.AvroSerDe",
    ),
}


def storage_of(fmt: str, location: str, columns: list, separator: str = ",") -> dict:
    """A new table's ``StorageDescriptor`` for files of ``fmt`` under ``location``."""
    input_format, output_format, serde = FORMAT_STORAGE[fmt]
    serde_params = {"field.delim": separator} if fmt == "csv" else {}
    return {
        "Columns": columns,
        "Location": location,
        "InputFormat": input_format,
        "OutputFormat": output_format,
        "SerdeInfo": {"SerializationLibrary": serde, "Parameters": serde_params},
        "Parameters": {"classification": fmt},
    }
