"""Glue's DynamoDB connection: what a table's read (:mod:`.sources.dynamodb_options`) and
its write (:mod:`.sinks.dynamodb_target`) share, as AWS's "DynamoDB connections" page
documents the options and the connector Glue builds on (awslabs' emr-dynamodb-connector)
uses them.

- **Names** are matched whatever their case (:func:`~.options.named_option`), as every
  connection option of this layer.
- **Where, and as whom** (:class:`TableAccess`): ``dynamodb.region``,
  ``dynamodb.endpoint`` (a host name or a URL), ``dynamodb.sts.roleArn`` and
  ``dynamodb.sts.roleSessionName`` (by default the side's session name). Every call to
  the table uses them: the driver's ``DescribeTable`` as the executors' Scans and
  writes. ``dynamodb.sts.region`` has no effect (the role is assumed with the STS of the
  table's region), named once.
- **The share of the table's capacity**: ``dynamodb.throughput.read.percent`` and
  ``dynamodb.throughput.write.percent`` (0.5 by default). AWS documents 0.1 to 1.5; the
  connector takes any number (Java's ``Double.parseDouble``), so here too: another number
  is used and named once in a warning; only what is not a number is refused, in one
  line (:func:`throughput_percent`). Each task's share is Glue's arithmetic
  (:func:`units_per_task`).
- **The capacity**: ``DescribeTable``'s provisioned units; an on-demand table's taken as
  :data:`ON_DEMAND_UNITS`, as Glue does (:func:`table_capacity`).
- **DescribeTable** (:func:`describe_table`), once a read or a write, on the driver,
  retried with :data:`DESCRIBE_BACKOFF`; a missing table is one line naming it, the
  endpoint and the region.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Optional

from ..aws import AWSCredentials, ClientSpec
from ..backoff import Backoff
from .catalog.tables import catalog_call
from .errors import GlueError
from .options import named_option, option_text
from .sinks.file_target import warn_ignored, warn_once

REGION = "dynamodb.region"
ENDPOINT = "dynamodb.endpoint"
ROLE_ARN = "dynamodb.sts.roleArn"
ROLE_SESSION = "dynamodb.sts.roleSessionName"
#: The options of a read and of a write alike.
COMMON = (REGION, ENDPOINT, ROLE_ARN, ROLE_SESSION)
NO_EFFECT = {"dynamodb.sts.region": "the role is assumed with the STS of the table's region"}

DEFAULT_PERCENT = 0.5
DOCUMENTED_PERCENT = (0.1, 1.5)
#: The capacity units a second Glue counts an on-demand table as (read or write).
ON_DEMAND_UNITS = 40_000
#: Java's ``(long)`` of an infinite share (a percent of ``Infinity``): no pace to speak of.
_JAVA_LONG_MAX = float(2**63 - 1)
DESCRIBE_BACKOFF = Backoff(initial_delay_s=0.2, max_delay_s=2.0, max_attempts=5, max_elapsed_s=30.0)


@dataclass(frozen=True)
class TableAccess:
    """A table, where it is and the credentials of every call to it."""

    table: str
    region: Optional[str] = None
    endpoint: Optional[str] = None
    role_arn: Optional[str] = None
    role_session_name: Optional[str] = None

    @classmethod
    def parse(
        cls,
        options: Mapping[str, Any],
        table: str,
        default_session: str,
        region: Optional[str] = None,
    ) -> TableAccess:
        """``table``'s access as ``options`` give it (``region``: where no
        ``dynamodb.region`` is given, a table ARN's)."""
        endpoint = text_option(options, ENDPOINT)
        if endpoint and "://" not in endpoint:
            endpoint = f"https://{endpoint}"  # the connector takes a host name
        role_arn = text_option(options, ROLE_ARN)
        return cls(
            table=table,
            region=text_option(options, REGION) or region,
            endpoint=endpoint,
            role_arn=role_arn,
            role_session_name=(text_option(options, ROLE_SESSION) or default_session)
            if role_arn
            else None,
        )

    def client_spec(self) -> ClientSpec:
        """The DynamoDB client of every call to the table (built where it is used, on
        the driver or an executor; never shipped)."""
        credentials = None
        if self.role_arn:
            credentials = AWSCredentials(
                role_arn=self.role_arn, role_session_name=self.role_session_name
            )
        return ClientSpec("dynamodb", self.region, self.endpoint, credentials)


def text_option(options: Mapping[str, Any], name: str) -> Optional[str]:
    """Option ``name``'s text, whatever the case of its name; None when absent or empty."""
    value = named_option(options, name)
    return option_text(value).strip() or None if value is not None else None


def warn_not_honoured(
    options: Mapping[str, Any], where: str, honoured: Iterable[str], why: str
) -> None:
    """Options neither this side's (``honoured``) nor common named once in a warning
    (Glue takes any option), ``dynamodb.sts.region`` with why it has no effect."""
    known = {k.lower() for k in (*honoured, *COMMON, *NO_EFFECT)}
    warn_ignored(where, [k for k in options if str(k).lower() not in known], why)
    for key, reason in NO_EFFECT.items():
        if named_option(options, key) is not None:
            warn_ignored(where, [key], reason)


def throughput_percent(options: Mapping[str, Any], name: str, where: str) -> float:
    """The ``name`` percent (a read's or a write's): see the module."""
    text = text_option(options, name)
    if text is None:
        return DEFAULT_PERCENT
    low, high = DOCUMENTED_PERCENT
    try:
        percent = float(text)
    except ValueError:
        raise GlueError(
            f"{where}: {name}={text!r}: give a number (AWS documents {low} to {high})"
        ) from None
    if not low <= percent <= high:
        least = "" if percent > 0 else " (each task at Glue's least: 1 unit a second)"
        warn_once(
            (name, text),
            f"{where}: {name}={percent}: AWS documents {low} to {high}; used as given{least}",
        )
    return percent


def units_per_task(capacity: float, percent: float, tasks: int) -> float:
    """Glue's share of ``capacity`` (units a second) of one of ``tasks`` tasks: the
    capacity times ``percent``, rounded down, divided by the tasks, at least 1."""
    share = capacity * percent
    share = 0.0 if math.isnan(share) else min(share, _JAVA_LONG_MAX)
    return max(math.floor(share) / max(tasks, 1), 1.0)


def table_capacity(description: Mapping[str, Any], kind: str) -> float:
    """A table's ``kind`` (``Read`` or ``Write``) capacity units as Glue counts them:
    provisioned, or :data:`ON_DEMAND_UNITS` for an on-demand table."""
    billing = (description.get("BillingModeSummary") or {}).get("BillingMode")
    throughput = description.get("ProvisionedThroughput") or {}
    provisioned = throughput.get(f"{kind}CapacityUnits") or 0
    if billing == "PAY_PER_REQUEST" or not provisioned:
        return float(ON_DEMAND_UNITS)
    return float(provisioned)


def key_types(description: Mapping[str, Any]) -> dict:
    """The table's key attributes (name -> ``S``, ``N`` or ``B``), the partition key
    first."""
    types = {a["AttributeName"]: a["AttributeType"] for a in description["AttributeDefinitions"]}
    schema = sorted(description["KeySchema"], key=lambda k: k["KeyType"] != "HASH")
    return {k["AttributeName"]: types[k["AttributeName"]] for k in schema}


def describe_table(access: TableAccess, where: str) -> dict:
    """``DescribeTable`` with the access's credentials (see the module); ``where`` names
    the read or write in the errors."""
    client = access.client_spec().client()
    return catalog_call(
        client,
        "DescribeTable",
        lambda: client.describe_table(TableName=access.table)["Table"],
        f"{where}: DescribeTable of {access.table}",
        f"{where}: DynamoDB table {access.table!r} does not exist (endpoint "
        f"{client.meta.endpoint_url}, region {client.meta.region_name})",
        DESCRIBE_BACKOFF,
        not_found_code="ResourceNotFoundException",
    )
