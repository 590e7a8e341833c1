"""Glue's DynamoDB connection options of a read, checked, and the read they make.

As AWS documents ``connection_type="dynamodb"`` as a source. The ETL connector's:
``dynamodb.input.tableName`` (required), ``dynamodb.throughput.read.percent`` (0.5),
``dynamodb.splits`` (1 to 1,000,000: the parallel Scan's segments; when not given,
Spark's default parallelism here, where Glue's default is 1: the same items, read in
parallel); those a read shares with a write (``dynamodb.region``, ``dynamodb.endpoint``,
``dynamodb.sts.roleArn``, ``dynamodb.sts.roleSessionName``: the role of every call, the
DescribeTable too; session ``glue-dynamodb-read-sts-session``), the percent's rule and the
table's capacity are :mod:`~kinesis_dstream.glue.dynamodb_connection`'s. The export
connector's (``dynamodb.export`` ``ddb`` or ``s3``, ``dynamodb.tableArn``,
``dynamodb.unnestDDBJson``, ``dynamodb.simplifyDDBJson``, ``dynamodb.s3.*``): the nearest
thing, a parallel Scan of the table the ARN names, named once in a warning (an export is
a point-in-time copy; a Scan reads the items as they are); without ``unnestDDBJson`` or
``simplifyDDBJson`` the records have the export's shape, one ``Item`` struct of DynamoDB
JSON.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, Optional

from ...aws import ClientSpec
from ..dynamodb_connection import (
    DEFAULT_PERCENT,
    TableAccess,
    table_capacity,
    text_option,
    throughput_percent,
    units_per_task,
    warn_not_honoured,
)
from ..errors import GlueError
from ..options import int_option, named_option, option_text
from ..sinks.file_target import warn_ignored

PERCENT = "dynamodb.throughput.read.percent"
MAX_SPLITS = 1_000_000
DEFAULT_ROLE_SESSION = "glue-dynamodb-read-sts-session"
HONOURED = ("dynamodb.input.tableName", PERCENT, "dynamodb.splits")
EXPORT = (
    "dynamodb.export",
    "dynamodb.tableArn",
    "dynamodb.unnestDDBJson",
    "dynamodb.simplifyDDBJson",
    "dynamodb.s3.bucket",
    "dynamodb.s3.prefix",
    "dynamodb.s3.bucketOwner",
    "dynamodb.exportTime",
)
_TABLE_ARN = re.compile(r"^arn:aws[\w-]*:dynamodb:([\w-]+):\d*:table/([\w.-]+)")


@dataclass(frozen=True)
class DynamoDBOptions:
    """The options as given, checked (before the table is described)."""

    access: TableAccess
    read_percent: float = DEFAULT_PERCENT
    splits: Optional[int] = None
    ddb_json: bool = False


@dataclass(frozen=True)
class DynamoDBRead:
    """One read of a table: where, with which credentials, in how many segments, at what
    pace. JSON round-trips (it travels to the executors as a data source option)."""

    access: TableAccess
    segments: int
    segment_units_per_s: float
    ddb_json: bool = False

    @property
    def table(self) -> str:
        return self.access.table

    def client_spec(self) -> ClientSpec:
        return self.access.client_spec()

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> DynamoDBRead:
        raw = json.loads(text)
        return cls(**{**raw, "access": TableAccess(**raw["access"])})


def table_of_arn(arn: str) -> tuple:
    """(region, table name) of a DynamoDB table ARN; GlueError when it is not one."""
    match = _TABLE_ARN.match(arn.strip())
    if match is None:
        raise GlueError(
            f"{arn!r} is not a DynamoDB table ARN (arn:aws:dynamodb:REGION:ACCOUNT:table/NAME)"
        )
    return match.group(1), match.group(2)


def parse_dynamodb_options(options: Mapping[str, Any], where: str) -> DynamoDBOptions:
    """``options`` (a read's connection options) checked; GlueError in one line."""
    names = {str(k).lower() for k in options}
    warn_not_honoured(
        options,
        f"{where} dynamodb options",
        (*HONOURED, *EXPORT),
        "not options of Glue's DynamoDB reader",
    )
    arn_region = None
    table = text_option(options, "dynamodb.input.tableName")
    export = named_option(options, "dynamodb.export")
    ddb_json = False
    if export is not None or (table is None and text_option(options, "dynamodb.tableArn")):
        arn = text_option(options, "dynamodb.tableArn")
        if arn is None:
            raise GlueError(f"{where}: dynamodb.export needs dynamodb.tableArn")
        arn_region, table = table_of_arn(arn)
        unnest = any(
            option_text(named_option(options, k, "false")).strip().lower() == "true"
            for k in ("dynamodb.unnestDDBJson", "dynamodb.simplifyDDBJson")
        )
        ddb_json = not unnest
        warn_ignored(
            f"{where} dynamodb options",
            [k for k in EXPORT if k.lower() in names],
            "the table is read with a parallel Scan, not exported to S3: the same items, "
            + ("in DynamoDB JSON as an export has them" if ddb_json else "unnested"),
        )
    if not table:
        raise GlueError(
            f"{where}: connection option 'dynamodb.input.tableName' is required (the table to read)"
        )
    return DynamoDBOptions(
        access=TableAccess.parse(options, table, DEFAULT_ROLE_SESSION, arn_region),
        read_percent=throughput_percent(options, PERCENT, f"{where} dynamodb options"),
        splits=_splits(named_option(options, "dynamodb.splits"), where),
        ddb_json=ddb_json,
    )


def _splits(value: Any, where: str) -> Optional[int]:
    if value is None:
        return None
    splits = int_option(value, 1, MAX_SPLITS)
    if splits is None:
        raise GlueError(f"{where}: dynamodb.splits={value!r} must be from 1 to {MAX_SPLITS:,}")
    return splits


def planned_read(
    options: DynamoDBOptions, description: Mapping[str, Any], default_splits: int
) -> DynamoDBRead:
    """The read of ``options`` on the table ``description`` (DescribeTable's) says."""
    segments = options.splits or max(1, default_splits)
    capacity = table_capacity(description, "Read")
    return DynamoDBRead(
        access=options.access,
        segments=segments,
        segment_units_per_s=units_per_task(capacity, options.read_percent, segments),
        ddb_json=options.ddb_json,
    )
