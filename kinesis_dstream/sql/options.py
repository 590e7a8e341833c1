"""Options of the Kinesis source and sink, under all three JVM connectors' names.

Spark hands a data source a case-insensitive dict of strings. Here it becomes one frozen
dataclass, checked as a whole before the query starts: an unknown option fails with the
list of known ones, two aliases given different values fail naming both, and every value
is parsed with its option's name in the error. An optional ``kinesis.`` prefix (the
awslabs connector's) is accepted on every name.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Optional

from ..aws import AWSCredentials, ClientSpec, resolve_region
from ..conf import parse_time_ms
from ..retrieval.reader import MAX_RECORDS_PER_CALL
from .endstore_s3 import is_s3_url, parse_s3_url
from .positions import LATEST, Position, parse_initial_position

#: Kinesis' own floor: 5 GetRecords calls a second per shard.
MIN_FETCH_PERIOD_FLOOR_MS = 200.0
#: Expanded in each process: shared by the driver and executors only if they share a home.
DEFAULT_STORE_DIR = os.path.join("~", ".kinesis_dstream", "sql-ends")
DEFAULT_ROLE_SESSION_NAME = "kinesis-dstream-sql"

#: canonical name -> every accepted spelling (compared lower-case, after "kinesis.").
_SHARED = {
    "streamName": ("streamName",),
    "streamARN": ("streamARN",),
    "region": ("region", "regionName"),
    "endpointUrl": ("endpointUrl", "endpoint"),
    "awsAccessKey": ("awsAccessKey", "awsAccessKeyId"),
    "awsSecretKey": ("awsSecretKey",),
    "sessionToken": ("sessionToken", "awsSessionToken"),
    "roleArn": ("roleArn", "stsRoleArn", "awsSTSRoleARN"),
    "roleExternalId": ("roleExternalId",),
    "roleSessionName": ("roleSessionName", "stsSessionName", "awsSTSSessionName"),
    "stsEndpointUrl": ("stsEndpointUrl", "awsSTSEndpoint"),
}
SOURCE_ALIASES = {
    **_SHARED,
    "initialPosition": ("initialPosition", "startingPosition"),
    "maxRecordsPerFetch": (
        "maxRecordsPerFetch",
        "getRecords.numberOfRecordsPerFetch",
        "maxRecordPerRead",
    ),
    "maxFetchRecordsPerShard": ("maxFetchRecordsPerShard",),
    "maxRecordsPerBatch": ("maxRecordsPerBatch",),
    "minFetchPeriod": ("minFetchPeriod", "getRecords.fetchIntervalMs", "idleTimeBetweenReadsInMs"),
    "describeShardInterval": ("describeShardInterval", "shardFetchInterval"),
    "failOnDataLoss": ("failOnDataLoss",),
    "consumerType": ("consumerType",),
    "metadataCommitterType": ("metadataCommitterType",),
    "metadataPath": ("metadataPath",),
    "dynamodbTableName": ("dynamodb.tableName",),
}
SINK_ALIASES = {
    **_SHARED,
    "aggregationEnabled": ("aggregationEnabled", "sink.aggregationEnabled"),
}
_ARN = re.compile(r"^arn:aws[\w-]*:kinesis:([a-z0-9-]+):(\d{12}):stream/([A-Za-z0-9_.-]+)$")
_ENDPOINT_REGION = re.compile(r"kinesis(?:-fips)?\.([a-z]{2}(?:-[a-z]+)+-\d)\.")


class OptionError(ValueError):
    """A bad option: names the option (as the user spelled it) and the value."""


#: Options Spark itself passes to a data source's writer or reader: not ours to check.
SPARK_OPTIONS = frozenset({"checkpointlocation", "path", "queryname"})


def canonical_options(options: Mapping[str, Any], aliases: Mapping[str, tuple]) -> dict:
    """User options -> {canonical name: (spelling used, value)}; unknown/conflicts fail."""
    lookup = {alias.lower(): name for name, spellings in aliases.items() for alias in spellings}
    spelled = {alias.lower(): alias for spellings in aliases.values() for alias in spellings}
    found: dict = {}
    for given, value in options.items():
        if given.lower() in SPARK_OPTIONS:
            continue
        prefixed = given.lower().startswith("kinesis.")
        bare = given[len("kinesis.") :] if prefixed else given
        name = lookup.get(bare.lower())
        # Spark lower-cases option names: report ours in their documented spelling
        key = ("kinesis." if prefixed else "") + spelled.get(bare.lower(), bare)
        if name is None:
            known = sorted({a for spellings in aliases.values() for a in spellings}, key=str.lower)
            raise OptionError(
                f"unknown option {key!r}; known options (case-insensitive, optional "
                f"'kinesis.' prefix): {', '.join(known)}"
            )
        if name in found and str(found[name][1]) != str(value):
            raise OptionError(
                f"options {found[name][0]!r}={found[name][1]!r} and {key!r}={value!r} are "
                f"aliases of {name} with different values; give one"
            )
        found[name] = (key, value)
    return found


def _int(found: dict, name: str, default: int, low: int, high: Optional[int] = None) -> int:
    if name not in found:
        return default
    key, value = found[name]
    try:
        number = int(str(value).strip())
    except ValueError:
        raise OptionError(f"option {key!r}: {value!r} is not an integer") from None
    if number < low or (high is not None and number > high):
        bound = f"in [{low}, {high}]" if high is not None else f">= {low}"
        raise OptionError(f"option {key!r} must be {bound}, got {number}")
    return number


def _bool(found: dict, name: str, default: bool) -> bool:
    if name not in found:
        return default
    key, value = found[name]
    text = str(value).strip().lower()
    if text not in ("true", "false"):
        raise OptionError(f"option {key!r} must be true or false, got {value!r}")
    return text == "true"


def _time_ms(found: dict, name: str, default_ms: float) -> float:
    if name not in found:
        return default_ms
    key, value = found[name]
    try:
        return parse_time_ms(value, f"option {key!r}")
    except ValueError as exc:
        raise OptionError(str(exc)) from None


def _positive_time_ms(found: dict, name: str, default_ms: float) -> float:
    value = _time_ms(found, name, default_ms)
    if value <= 0:
        raise OptionError(f"option {found[name][0]!r} must be > 0, got {found[name][1]!r}")
    return value


@dataclass(frozen=True)
class Connection:
    """Which stream, where, and as whom. Never shows a secret in its repr."""

    stream_name: str
    region_name: str
    endpoint_url: Optional[str] = None
    credentials: Optional[AWSCredentials] = field(default=None, repr=False)

    def client_spec(self, service: str = "kinesis") -> ClientSpec:
        endpoint = self.endpoint_url if service == "kinesis" else None
        return ClientSpec(service, self.region_name, endpoint, self.credentials)

    @property
    def where(self) -> str:
        return f"stream {self.stream_name!r} at {self.endpoint_url or 'the default endpoint'}"


def _connection(found: dict) -> Connection:
    stream = found.get("streamName", (None, None))[1]
    arn_region = None
    if "streamARN" in found:
        key, arn = found["streamARN"]
        match = _ARN.match(str(arn).strip())
        if not match:
            raise OptionError(
                f"option {key!r}: {arn!r} is not a Kinesis stream ARN "
                "(arn:aws:kinesis:<region>:<account>:stream/<name>)"
            )
        arn_region, arn_stream = match.group(1), match.group(3)
        if stream is not None and stream != arn_stream:
            raise OptionError(
                f"options {found['streamName'][0]!r}={stream!r} and {key!r}={arn!r} name "
                "different streams; give one"
            )
        stream = arn_stream
    if not stream or not str(stream).strip():
        raise OptionError("option 'streamName' is required (or 'streamARN')")
    endpoint = found.get("endpointUrl", (None, None))[1] or None
    region = found.get("region", (None, None))[1] or arn_region
    if arn_region is not None and region != arn_region:
        raise OptionError(
            f"option {found['region'][0]!r}={region!r} and {found['streamARN'][0]!r}="
            f"{found['streamARN'][1]!r} name different regions; give one"
        )
    if region is None and endpoint:
        match = _ENDPOINT_REGION.search(endpoint)
        region = match.group(1) if match else None
    try:
        region = resolve_region(region)
    except ValueError as exc:
        raise OptionError(f"{exc} (or set option 'region')") from None
    return Connection(str(stream).strip(), region, endpoint, _credentials(found))


def _credentials(found: dict) -> Optional[AWSCredentials]:
    def get(name: str) -> Optional[str]:
        return found[name][1] if name in found else None

    role = get("roleArn")
    session_name = get("roleSessionName")
    if role is None and (session_name is not None or get("roleExternalId") is not None):
        given = [found[n][0] for n in ("roleSessionName", "roleExternalId") if n in found]
        raise OptionError(f"option(s) {given} need option 'roleArn' (or 'stsRoleArn')")
    if (get("awsAccessKey") is None) != (get("awsSecretKey") is None):
        raise OptionError("options 'awsAccessKey' and 'awsSecretKey' go together: give both")
    if get("sessionToken") is not None and get("awsAccessKey") is None:
        raise OptionError("option 'sessionToken' needs 'awsAccessKey' and 'awsSecretKey'")
    if role is None and get("awsAccessKey") is None:
        if get("stsEndpointUrl") is not None:
            raise OptionError("option 'stsEndpointUrl' needs option 'roleArn'")
        return None  # boto3's default credential chain, wherever the client is built
    return AWSCredentials(
        access_key_id=get("awsAccessKey"),
        secret_access_key=get("awsSecretKey"),
        session_token=get("sessionToken"),
        role_arn=role,
        role_session_name=(session_name or DEFAULT_ROLE_SESSION_NAME) if role else None,
        external_id=get("roleExternalId"),
        sts_endpoint_url=get("stsEndpointUrl"),
    )


@dataclass(frozen=True)
class EndStoreOptions:
    """Where executors record each range's real end (see :mod:`.endstore`)."""

    kind: str = "local"  # "local" (a directory), "s3" (path is s3://bucket/prefix), "dynamodb"
    path: str = DEFAULT_STORE_DIR
    table_name: Optional[str] = None


def _end_store(found: dict) -> EndStoreOptions:
    kind = str(found.get("metadataCommitterType", ("", "HDFS"))[1]).strip().upper()
    if kind not in ("HDFS", "DYNAMODB"):
        key = found["metadataCommitterType"][0]
        raise OptionError(f"option {key!r} must be HDFS or DYNAMODB, got {kind!r}")
    if kind == "DYNAMODB":
        if "dynamodbTableName" not in found:
            raise OptionError(
                "option 'metadataCommitterType'=DYNAMODB needs option 'dynamodb.tableName'"
            )
        if "metadataPath" in found:
            raise OptionError("option 'metadataPath' applies only to metadataCommitterType=HDFS")
        return EndStoreOptions("dynamodb", table_name=str(found["dynamodbTableName"][1]))
    if "dynamodbTableName" in found:
        raise OptionError("option 'dynamodb.tableName' needs metadataCommitterType=DYNAMODB")
    if "metadataPath" not in found:
        return EndStoreOptions("local")
    path = str(found.get("metadataPath", ("", DEFAULT_STORE_DIR))[1]).strip()
    if path.startswith("file://"):
        path = path[len("file://") :]
    if is_s3_url(path):
        try:
            bucket, prefix = parse_s3_url(path)
        except ValueError as exc:
            raise OptionError(f"option {found['metadataPath'][0]!r}: {exc}") from None
        return EndStoreOptions("s3", path=f"s3://{bucket}/{prefix}")
    if "://" in path:
        key = found["metadataPath"][0]
        raise OptionError(
            f"option {key!r}: {path!r} is neither S3 nor a local or mounted directory; this "
            "pure-Python source writes range ends to S3 (s3://bucket/prefix, or s3a://), to "
            "a directory every executor and the driver see (NFS, EFS), or to DynamoDB "
            "(metadataCommitterType=DYNAMODB, dynamodb.tableName=...)"
        )
    return EndStoreOptions("local", path=os.path.abspath(os.path.expanduser(path)))


@dataclass(frozen=True)
class SourceOptions:
    """Every source knob, defaults declared once; units in the names."""

    connection: Connection
    initial_position: Position = LATEST
    max_records_per_fetch: int = MAX_RECORDS_PER_CALL
    max_fetch_records_per_shard: int = 100_000
    max_records_per_batch: Optional[int] = None
    min_fetch_period_ms: float = MIN_FETCH_PERIOD_FLOOR_MS
    describe_shard_interval_ms: float = 1000.0
    fail_on_data_loss: bool = False
    end_store: EndStoreOptions = EndStoreOptions()

    @classmethod
    def parse(cls, options: Mapping[str, Any]) -> SourceOptions:
        found = canonical_options(options, SOURCE_ALIASES)
        if "consumerType" in found:
            key, value = found["consumerType"]
            if str(value).strip().lower() != "getrecords":
                raise OptionError(
                    f"option {key!r}={value!r}: only GetRecords is supported (enhanced "
                    "fan-out, SubscribeToShard, is not)"
                )
        position: Position = LATEST
        if "initialPosition" in found:
            key, value = found["initialPosition"]
            position = parse_initial_position(str(value), f"option {key!r}")
        period = _time_ms(found, "minFetchPeriod", MIN_FETCH_PERIOD_FLOOR_MS)
        if period < MIN_FETCH_PERIOD_FLOOR_MS:
            raise OptionError(
                f"option {found['minFetchPeriod'][0]!r}={found['minFetchPeriod'][1]!r} is below "
                f"{MIN_FETCH_PERIOD_FLOOR_MS:.0f} ms (Kinesis allows 5 GetRecords a second per "
                "shard)"
            )
        per_batch = None
        if "maxRecordsPerBatch" in found:
            per_batch = _int(found, "maxRecordsPerBatch", 0, 1)
        return cls(
            connection=_connection(found),
            initial_position=position,
            max_records_per_fetch=_int(
                found, "maxRecordsPerFetch", MAX_RECORDS_PER_CALL, 1, MAX_RECORDS_PER_CALL
            ),
            max_fetch_records_per_shard=_int(found, "maxFetchRecordsPerShard", 100_000, 1),
            max_records_per_batch=per_batch,
            min_fetch_period_ms=period,
            describe_shard_interval_ms=_positive_time_ms(found, "describeShardInterval", 1000.0),
            fail_on_data_loss=_bool(found, "failOnDataLoss", False),
            end_store=_end_store(found),
        )


@dataclass(frozen=True)
class SinkOptions:
    connection: Connection
    aggregation_enabled: bool = False

    @classmethod
    def parse(cls, options: Mapping[str, Any]) -> SinkOptions:
        found = canonical_options(options, SINK_ALIASES)
        return cls(_connection(found), _bool(found, "aggregationEnabled", False))
