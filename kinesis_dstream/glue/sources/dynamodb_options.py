"""Glue's DynamoDB connection options of a read, checked, and the read they make.

As AWS documents ``connection_type="dynamodb"`` as a source. The ETL connector's:
``dynamodb.input.tableName`` (required), ``dynamodb.throughput.read.percent`` (0.5;
0.1 to 1.5), ``dynamodb.splits`` (1 to 1,000,000: the parallel Scan's segments; when not
given, Spark's default parallelism here, where Glue's default is 1: the same items,
read in parallel), ``dynamodb.sts.roleArn`` and ``dynamodb.sts.roleSessionName``
(``glue-dynamodb-read-sts-session``), ``dynamodb.region`` (the table's region). The
export connector's (``dynamodb.export`` ``ddb`` or ``s3``, ``dynamodb.tableArn``,
``dynamodb.unnestDDBJson``, ``dynamodb.simplifyDDBJson``, ``dynamodb.s3.*``): the
nearest thing, a parallel Scan of the table the ARN names, named once in a warning (an
export is a point-in-time copy; a Scan reads the items as they are); without
``unnestDDBJson`` or ``simplifyDDBJson`` the records have the export's shape, one
``Item`` struct of DynamoDB JSON. ``dynamodb.sts.region`` has no effect (the role is
assumed with the table's region's STS), named once.

The read capacity: a provisioned table's ``ReadCapacityUnits``; an on-demand table's is
taken as 40,000, as Glue does.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, Optional

from ...aws import AWSCredentials, ClientSpec
from ..errors import GlueError
from ..options import int_option, option_text
from ..sinks.file_target import warn_ignored

DEFAULT_READ_PERCENT = 0.5
READ_PERCENT_RANGE = (0.1, 1.5)
MAX_SPLITS = 1_000_000
DEFAULT_ROLE_SESSION = "glue-dynamodb-read-sts-session"
#: Glue's capacity for an on-demand table.
ON_DEMAND_UNITS = 40_000
HONOURED = (
    "dynamodb.input.tableName",
    "dynamodb.throughput.read.percent",
    "dynamodb.splits",
    "dynamodb.sts.roleArn",
    "dynamodb.sts.roleSessionName",
    "dynamodb.region",
)
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
NO_EFFECT = {"dynamodb.sts.region": "the role is assumed with the STS of the table's region"}
_TABLE_ARN = re.compile(r"^arn:aws[\w-]*:dynamodb:([\w-]+):\d*:table/([\w.-]+)")


@dataclass(frozen=True)
class DynamoDBOptions:
    """The options as given, checked (before the table is described)."""

    table: str
    region: Optional[str] = None
    read_percent: float = DEFAULT_READ_PERCENT
    splits: Optional[int] = None
    role_arn: Optional[str] = None
    role_session_name: str = DEFAULT_ROLE_SESSION
    ddb_json: bool = False


@dataclass(frozen=True)
class DynamoDBRead:
    """One read of a table: where, with which credentials, in how many segments, at what
    pace. JSON round-trips (it travels to the executors as a data source option)."""

    table: str
    region: Optional[str]
    segments: int
    segment_units_per_s: float
    role_arn: Optional[str] = None
    role_session_name: str = DEFAULT_ROLE_SESSION
    ddb_json: bool = False

    def client_spec(self) -> ClientSpec:
        credentials = None
        if self.role_arn:
            credentials = AWSCredentials(
                role_arn=self.role_arn, role_session_name=self.role_session_name
            )
        return ClientSpec("dynamodb", region_name=self.region, credentials=credentials)

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> DynamoDBRead:
        return cls(**json.loads(text))


def table_of_arn(arn: str) -> tuple:
    """(region, table name) of a DynamoDB table ARN; GlueError when it is not one."""
    match = _TABLE_ARN.match(arn.strip())
    if match is None:
        raise GlueError(
            f"{arn!r} is not a DynamoDB table ARN (arn:aws:dynamodb:REGION:ACCOUNT:table/NAME)"
        )
    return match.group(1), match.group(2)


def _get(options: Mapping[str, Any], name: str) -> Any:
    for key, value in options.items():
        if str(key).lower() == name.lower() and value is not None:
            return value
    return None


def parse_dynamodb_options(options: Mapping[str, Any], where: str) -> DynamoDBOptions:
    """``options`` (a read's connection options) checked; GlueError in one line."""
    names = {str(k).lower() for k in options}
    known = {k.lower() for k in (*HONOURED, *EXPORT, *NO_EFFECT)}
    warn_ignored(
        f"{where} dynamodb options",
        [k for k in options if str(k).lower() not in known],
        "not options of Glue's DynamoDB reader",
    )
    for key, why in NO_EFFECT.items():
        if key.lower() in names:
            warn_ignored(f"{where} dynamodb options", [key], why)
    region = _get(options, "dynamodb.region")
    table = _get(options, "dynamodb.input.tableName")
    export = _get(options, "dynamodb.export")
    ddb_json = False
    if export is not None or (table is None and _get(options, "dynamodb.tableArn") is not None):
        arn = _get(options, "dynamodb.tableArn")
        if arn is None:
            raise GlueError(f"{where}: dynamodb.export needs dynamodb.tableArn")
        arn_region, table = table_of_arn(str(arn))
        region = region or arn_region
        unnest = any(
            option_text(_get(options, k) or "false").strip().lower() == "true"
            for k in ("dynamodb.unnestDDBJson", "dynamodb.simplifyDDBJson")
        )
        ddb_json = not unnest
        warn_ignored(
            f"{where} dynamodb options",
            [k for k in EXPORT if k.lower() in names],
            "the table is read with a parallel Scan, not exported to S3: the same items, "
            + ("in DynamoDB JSON as an export has them" if ddb_json else "unnested"),
        )
    if table is None or not str(table).strip():
        raise GlueError(
            f"{where}: connection option 'dynamodb.input.tableName' is required (the table to read)"
        )
    return DynamoDBOptions(
        table=str(table).strip(),
        region=str(region).strip() if region else None,
        read_percent=_percent(_get(options, "dynamodb.throughput.read.percent"), where),
        splits=_splits(_get(options, "dynamodb.splits"), where),
        role_arn=option_text(_get(options, "dynamodb.sts.roleArn") or "").strip() or None,
        role_session_name=option_text(
            _get(options, "dynamodb.sts.roleSessionName") or DEFAULT_ROLE_SESSION
        ).strip(),
        ddb_json=ddb_json,
    )


def _percent(value: Any, where: str) -> float:
    if value is None:
        return DEFAULT_READ_PERCENT
    try:
        percent = float(option_text(value).strip())
    except ValueError:
        percent = -1.0
    low, high = READ_PERCENT_RANGE
    if not low <= percent <= high:
        raise GlueError(
            f"{where}: dynamodb.throughput.read.percent={value!r} must be from {low} to {high}"
        )
    return percent


def _splits(value: Any, where: str) -> Optional[int]:
    if value is None:
        return None
    splits = int_option(value, 1, MAX_SPLITS)
    if splits is None:
        raise GlueError(f"{where}: dynamodb.splits={value!r} must be from 1 to {MAX_SPLITS:,}")
    return splits


def table_read_units(description: Mapping[str, Any]) -> float:
    """A table's read capacity as Glue counts it (see the module)."""
    billing = (description.get("BillingModeSummary") or {}).get("BillingMode")
    provisioned = (description.get("ProvisionedThroughput") or {}).get("ReadCapacityUnits") or 0
    if billing == "PAY_PER_REQUEST" or not provisioned:
        return float(ON_DEMAND_UNITS)
    return float(provisioned)


def planned_read(
    options: DynamoDBOptions, description: Mapping[str, Any], default_splits: int
) -> DynamoDBRead:
    """The read of ``options`` on the table ``description`` (DescribeTable's) says."""
    segments = options.splits or max(1, default_splits)
    units = table_read_units(description) * options.read_percent
    return DynamoDBRead(
        table=options.table,
        region=options.region,
        segments=segments,
        segment_units_per_s=units / segments,
        role_arn=options.role_arn,
        role_session_name=options.role_session_name,
        ddb_json=options.ddb_json,
    )
