"""What a ``write_dynamic_frame.from_options(connection_type="dynamodb")`` writes to: its
connection options as AWS documents them (the "DynamoDB connections" page) and the
table as DynamoDB describes it.

- ``dynamodb.output.tableName``: required, the table written.
- ``dynamodb.throughput.write.percent``: the share of the table's write capacity used
  (0.5 by default; AWS documents 0.1 to 1.5, another positive number is used and named
  in a warning); an on-demand table counts as 40,000 WCU, as Glue counts it.
- ``dynamodb.output.numParallelTasks``: how many tasks share that capacity; by default
  the frame's partitions, at most the cores Spark has (Glue's ``min(numPartitions,
  numSlots)``).
- ``dynamodb.output.retry``: retries of a throttled ``BatchWriteItem`` (10 by default).
- ``dynamodb.sts.roleArn``, ``dynamodb.sts.roleSessionName``: the role assumed for the
  writes (session ``glue-dynamodb-write-sts-session`` by default).
- ``dynamodb.region``, ``dynamodb.endpoint``: the table's region and endpoint (the
  connector's own names; else the SDK's configuration).

Any other option (``dynamodb.sts.region``, ``dynamodb.output.batchSize``...) is named once
in a warning and has no effect: Glue takes any option.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Optional

from ...aws import AWSCredentials, ClientSpec
from ...backoff import Backoff, call_with_retry
from ...errors import StreamNotFoundError
from ..errors import GlueError
from ..options import option_text
from .file_target import warn_ignored, warn_once

log = logging.getLogger(__name__)

TABLE = "dynamodb.output.tableName"
PERCENT = "dynamodb.throughput.write.percent"
TASKS = "dynamodb.output.numParallelTasks"
RETRY = "dynamodb.output.retry"
ROLE_ARN = "dynamodb.sts.roleArn"
ROLE_SESSION = "dynamodb.sts.roleSessionName"
REGION = "dynamodb.region"
ENDPOINT = "dynamodb.endpoint"
KNOWN = (TABLE, PERCENT, TASKS, RETRY, ROLE_ARN, ROLE_SESSION, REGION, ENDPOINT)

DEFAULT_PERCENT = 0.5
DOCUMENTED_PERCENT = (0.1, 1.5)
DEFAULT_RETRY = 10
DEFAULT_ROLE_SESSION = "glue-dynamodb-write-sts-session"
#: The write capacity Glue counts an on-demand table as.
ON_DEMAND_WCU = 40_000
DESCRIBE_BACKOFF = Backoff(initial_delay_s=0.1, max_delay_s=2.0, max_attempts=5, max_elapsed_s=30.0)


@dataclass(frozen=True)
class DynamoDBTarget:
    """The checked connection options of a DynamoDB write."""

    table: str
    percent: float = DEFAULT_PERCENT
    parallel_tasks: Optional[int] = None
    retry: int = DEFAULT_RETRY
    role_arn: Optional[str] = None
    role_session_name: str = DEFAULT_ROLE_SESSION
    region: Optional[str] = None
    endpoint: Optional[str] = None

    @classmethod
    def parse(cls, options: Mapping[str, Any]) -> DynamoDBTarget:
        given = {k: option_text(v).strip() for k, v in options.items() if v is not None}
        warn_ignored("dynamodb connection_options", set(given) - set(KNOWN))
        table = given.get(TABLE, "")
        if not table:
            raise GlueError(
                f"write_dynamic_frame to dynamodb: connection_options {TABLE!r} is required "
                f"(the table to write); options given: {sorted(given)}"
            )
        percent = _number(given, PERCENT, DEFAULT_PERCENT, float)
        if not (percent > 0 and math.isfinite(percent)):
            raise GlueError(f"dynamodb connection_options {PERCENT}={percent}: give a number > 0")
        low, high = DOCUMENTED_PERCENT
        if not low <= percent <= high:
            warn_once(
                (PERCENT, percent),
                f"dynamodb connection_options {PERCENT}={percent}: AWS documents {low} to "
                f"{high}; used as given",
            )
        tasks = _number(given, TASKS, None, int)
        if tasks is not None and tasks < 1:
            raise GlueError(f"dynamodb connection_options {TASKS}={tasks}: give an integer >= 1")
        retry = _number(given, RETRY, DEFAULT_RETRY, int)
        if retry < 0:
            raise GlueError(f"dynamodb connection_options {RETRY}={retry}: give an integer >= 0")
        endpoint = given.get(ENDPOINT) or None
        if endpoint and "://" not in endpoint:
            endpoint = f"https://{endpoint}"  # the connector takes a host name
        return cls(
            table=table,
            percent=percent,
            parallel_tasks=tasks,
            retry=retry,
            role_arn=given.get(ROLE_ARN) or None,
            role_session_name=given.get(ROLE_SESSION) or DEFAULT_ROLE_SESSION,
            region=given.get(REGION) or None,
            endpoint=endpoint,
        )

    def client_spec(self) -> ClientSpec:
        """The DynamoDB client of the writes (built on each executor, never shipped)."""
        credentials = None
        if self.role_arn:
            credentials = AWSCredentials(
                role_arn=self.role_arn, role_session_name=self.role_session_name
            )
        return ClientSpec("dynamodb", self.region, self.endpoint, credentials)


def _number(given: dict, name: str, default: Any, kind: type) -> Any:
    text = given.get(name)
    if text is None or text == "":
        return default
    try:
        number = float(text)
        if kind is int and not number.is_integer():
            raise ValueError(text)
        return kind(number)
    except ValueError:
        what = "an integer" if kind is int else "a number"
        raise GlueError(f"dynamodb connection_options {name}={text!r}: give {what}") from None


@dataclass(frozen=True)
class TableShape:
    """What the writes need of the table: its key attributes (name -> ``S``, ``N`` or
    ``B``) and its write capacity (Glue's 40,000 for an on-demand table)."""

    keys: dict
    write_capacity: float

    @classmethod
    def describe(cls, target: DynamoDBTarget) -> TableShape:
        """``DescribeTable``, once, on the driver; a missing table is one line naming it."""
        client = target.client_spec().client()
        try:
            table = call_with_retry(
                lambda: client.describe_table(TableName=target.table)["Table"],
                DESCRIBE_BACKOFF,
                operation=f"DescribeTable of {target.table}",
                client=client,
            )
        except StreamNotFoundError:
            raise GlueError(
                f"write_dynamic_frame to dynamodb: table {target.table!r} does not exist "
                f"(endpoint {client.meta.endpoint_url}, region {client.meta.region_name}); "
                "Glue writes to an existing table"
            ) from None
        types = {a["AttributeName"]: a["AttributeType"] for a in table["AttributeDefinitions"]}
        keys = {k["AttributeName"]: types[k["AttributeName"]] for k in table["KeySchema"]}
        mode = (table.get("BillingModeSummary") or {}).get("BillingMode", "PROVISIONED")
        if mode == "PAY_PER_REQUEST":
            capacity = float(ON_DEMAND_WCU)
        else:
            capacity = float(table["ProvisionedThroughput"]["WriteCapacityUnits"])
        return cls(keys, capacity)

    def units_per_task(self, target: DynamoDBTarget, tasks: int) -> float:
        """Glue's ``permittedWcuPerTask``: the table's capacity times the percent, shared
        by ``tasks``, at least 1."""
        return max(math.floor(self.write_capacity * target.percent) / max(tasks, 1), 1.0)
