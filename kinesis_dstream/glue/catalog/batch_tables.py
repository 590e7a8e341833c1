"""Catalog tables read as a batch: a crawler's (or Athena's) table over S3 files or over
a DynamoDB table, mapped onto the batch readers' options. Pure: a ``GetTable`` answer in,
options out.

A DynamoDB table (a crawler's: ``classification`` ``dynamodb``, its ``Location`` the
table's ARN) reads the DynamoDB table the ARN names, in the ARN's region; a ``Location``
that is not an ARN is taken as the table's name. ``additional_options`` are its
connection options (``dynamodb.splits``...), over the table's.

An S3 table (``Location`` under ``s3://``, or a local path) reads every file below the
location (``recurse``), in its format (:func:`~.formats.table_format`); a CSV table's
SerDe gives the separator, quote and escape characters, and ``skip.header.line.count``
(a crawler sets it for files with a header) makes the first row the header. A partitioned
table's partition keys are columns, read from the files' Hive-style folders
(``region=eu/``), cast to the keys' types. ``additional_options`` are S3 connection
options or format options (``withHeader``...), each where it belongs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Optional

from ..errors import GlueError
from ..options import merged, named_option
from ..sources.dynamodb_options import table_of_arn
from .formats import table_format
from .tables import SERDE_CSV_OPTIONS, TableName, is_kinesis_table

DYNAMODB = "dynamodb"
_ARN_PREFIX = "arn:aws"
#: Format options ``additional_options`` may carry (Glue's names, lower-cased).
FORMAT_OPTION_NAMES = frozenset(
    k.lower()
    for k in (
        "separator",
        "quoteChar",
        "escaper",
        "multiLine",
        "withHeader",
        "skipFirst",
        "jsonPath",
        "version",
        "optimizePerformance",
        "withSchema",
    )
)


@dataclass(frozen=True)
class BatchTable:
    """Where and how a catalog table's records are read."""

    connection_type: str
    connection_options: dict
    format: Optional[str] = None
    format_options: dict = field(default_factory=dict)
    #: (name, type) of the partition keys, read from the files' folders.
    partition_keys: tuple = ()


def _parameters(table: Mapping[str, Any]) -> tuple:
    storage = table.get("StorageDescriptor") or {}
    return storage, {**(storage.get("Parameters") or {}), **(table.get("Parameters") or {})}


def is_dynamodb_table(table: Mapping[str, Any]) -> bool:
    """A crawler's table over DynamoDB: its classification, or its Location an ARN."""
    storage, params = _parameters(table)
    location = str(storage.get("Location") or "")
    classification = str(params.get("classification") or "").strip().lower()
    return classification == DYNAMODB or (
        location.startswith(_ARN_PREFIX) and ":dynamodb:" in location
    )


def batch_table(
    table: Mapping[str, Any], name: TableName, additional_options: Mapping[str, Any]
) -> BatchTable:
    """How ``create_dynamic_frame.from_catalog`` reads ``table`` (see the module)."""
    if is_kinesis_table(table):
        raise GlueError(
            f"{name} is a Kinesis table: a stream is read with create_data_frame.from_catalog "
            "(and forEachBatch), not as a batch"
        )
    storage, params = _parameters(table)
    location = str(storage.get("Location") or "").strip()
    if is_dynamodb_table(table):
        options: dict = {}
        if location.startswith(_ARN_PREFIX):
            options["dynamodb.tableArn"] = location
        elif location:
            options["dynamodb.input.tableName"] = location
        else:
            raise GlueError(f"{name} is a DynamoDB table without a Location (its table's ARN)")
        options = merged(options, additional_options)
        arn = named_option(options, "dynamodb.tableArn")
        if arn is not None and named_option(options, "dynamodb.input.tableName") is None:
            options = {k: v for k, v in options.items() if k.lower() != "dynamodb.tablearn"}
            region, table_name = table_of_arn(str(arn))
            if named_option(options, "dynamodb.region") is None:
                options["dynamodb.region"] = region
            options["dynamodb.input.tableName"] = table_name
        return BatchTable(DYNAMODB, options)
    if not location:
        raise GlueError(
            f"{name} has no Location: neither an S3 table nor a DynamoDB table (a "
            "crawler's has its table's ARN)"
        )
    fmt = table_format(table, name)
    format_options: dict = {}
    connection: dict = {"paths": [location], "recurse": True}
    serde = (storage.get("SerdeInfo") or {}).get("Parameters") or {}
    if fmt == "csv":
        for parameter, option in SERDE_CSV_OPTIONS:
            if serde.get(parameter):
                format_options[option] = str(serde[parameter])
        skip = str(
            params.get("skip.header.line.count") or serde.get("skip.header.line.count") or "0"
        )
        if skip.strip().isdigit() and int(skip) >= 1:
            format_options["withHeader"] = True
    for key, value in additional_options.items():
        target = format_options if str(key).lower() in FORMAT_OPTION_NAMES else connection
        target[key] = value
    keys = tuple(
        (str(k["Name"]), str(k.get("Type") or "string")) for k in table.get("PartitionKeys") or []
    )
    return BatchTable("s3", connection, fmt, format_options, keys)
