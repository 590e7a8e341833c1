"""Which streams, where, and as whom: the connection part of the source and sink options.

The three JVM connectors name these differently (see :mod:`.options`); here they become
one :class:`Connection`. Databricks' ``streamName`` is a comma-separated list of streams,
so a connection names one or more; :meth:`Connection.for_stream` narrows it to one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Optional

from ...arns import STREAM_NAME, parse_stream_arn
from ...aws import AWSCredentials, ClientSpec, resolve_region
from ...errors import shown

DEFAULT_ROLE_SESSION_NAME = "kinesis-dstream-sql"

_ENDPOINT_REGION = re.compile(r"kinesis(?:-fips)?\.([a-z]{2}(?:-[a-z]+)+-\d)\.")


class OptionError(ValueError):
    """A bad option: names the option (as the user spelled it) and the value."""


@dataclass(frozen=True)
class Connection:
    """Which streams, where, and as whom. Never shows a secret in its repr."""

    stream_name: str
    region_name: str
    endpoint_url: Optional[str] = None
    credentials: Optional[AWSCredentials] = field(default=None, repr=False)
    #: Every stream of the query, in the order given (``stream_name`` is the first).
    stream_names: tuple = ()
    #: The stream's region where it differs from ``region_name`` (awslabs'
    #: ``kinesisRegion``: the Kinesis client's; the rest use ``region_name``).
    kinesis_region_name: Optional[str] = None

    def __post_init__(self) -> None:
        if not self.stream_names:
            object.__setattr__(self, "stream_names", (self.stream_name,))

    def for_stream(self, stream_name: str) -> Connection:
        """The same connection, for one of its streams."""
        return replace(self, stream_name=stream_name, stream_names=(stream_name,))

    def client_spec(self, service: str = "kinesis") -> ClientSpec:
        if service == "kinesis":
            region = self.kinesis_region_name or self.region_name
            return ClientSpec(service, region, self.endpoint_url, self.credentials)
        return ClientSpec(service, self.region_name, None, self.credentials)

    @property
    def where(self) -> str:
        names = ", ".join(repr(s) for s in self.stream_names)
        label = "stream" if len(self.stream_names) == 1 else "streams"
        return f"{label} {names} at {self.endpoint_url or 'the default endpoint'}"


def parse_connection(found: dict) -> Connection:
    """The connection from canonical options (see :func:`.options.canonical_options`)."""
    streams = _stream_names(found)
    arn_region = None
    if "streamARN" in found:
        key, arn = found["streamARN"]
        parsed = parse_stream_arn(str(arn), f"option {key!r}")
        if parsed is None:
            raise OptionError(
                f"option {key!r}: {shown(arn)} is not a Kinesis stream ARN "
                "(arn:<partition>:kinesis:<region>:<account>:stream/<name>)"
            )
        arn_region, arn_stream = parsed
        if streams and streams != (arn_stream,):
            raise OptionError(
                f"options {found['streamName'][0]!r}={shown(found['streamName'][1])} and "
                f"{key!r}={shown(arn)} name different streams; give one"
            )
        streams = (arn_stream,)
    if not streams:
        raise OptionError("option 'streamName' is required (or 'streamARN')")
    endpoint = found.get("endpointUrl", (None, None))[1] or None
    # The stream's region (awslabs' kinesisRegion) and the connector's (region); where
    # only one is given, it is both.
    stream_key = "kinesisRegion" if "kinesisRegion" in found else "region"
    region = found.get(stream_key, (None, None))[1] or arn_region
    if arn_region is not None and region != arn_region:
        raise OptionError(
            f"option {found[stream_key][0]!r}={shown(region)} and {found['streamARN'][0]!r}="
            f"{shown(found['streamARN'][1])} name different regions; give one"
        )
    if region is None and endpoint:
        match = _ENDPOINT_REGION.search(endpoint)
        region = match.group(1) if match else None
    try:
        region = resolve_region(region)
    except ValueError as exc:
        raise OptionError(f"{exc} (or set option 'region')") from None
    # The connector's own region, where kinesisRegion named the stream's; else one for all.
    given = found.get("region", (None, None))[1] if stream_key != "region" else None
    connector = given or region
    kinesis_region = region if connector != region else None
    return Connection(streams[0], connector, endpoint, _credentials(found), streams, kinesis_region)


def _stream_names(found: dict) -> tuple:
    """Databricks' ``streamName``: one name or a comma-separated list of names."""
    if "streamName" not in found:
        return ()
    key, value = found["streamName"]
    names = tuple(n.strip() for n in str(value).split(","))
    if not any(names):
        return ()
    for name in names:
        if not STREAM_NAME.fullmatch(name):
            raise OptionError(
                f"option {key!r}={shown(value)}: {shown(name)} is not a stream name (1-128 "
                "letters, digits, '_', '.', '-'; several streams are separated by commas)"
            )
    if len(set(names)) != len(names):
        raise OptionError(f"option {key!r}={shown(value)} names a stream twice")
    return names


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
    provider = get("credentialProviderClass")
    if get("credentialProviderParam") is not None and provider is None:
        raise OptionError("option 'credentialProviderParam' needs 'credentialProviderClass'")
    if provider is not None and get("awsAccessKey") is not None:
        raise OptionError(
            "options 'credentialProviderClass' and 'awsAccessKey' both give credentials; give one"
        )
    if role is None and get("awsAccessKey") is None and provider is None:
        if get("stsEndpointUrl") is not None:
            raise OptionError("option 'stsEndpointUrl' needs option 'roleArn'")
        return None  # boto3's default credential chain, wherever the client is built
    try:
        return AWSCredentials(
            access_key_id=get("awsAccessKey"),
            secret_access_key=get("awsSecretKey"),
            session_token=get("sessionToken"),
            role_arn=role,
            role_session_name=(session_name or DEFAULT_ROLE_SESSION_NAME) if role else None,
            external_id=get("roleExternalId"),
            sts_endpoint_url=get("stsEndpointUrl"),
            provider=provider,
            provider_param=get("credentialProviderParam"),
        )
    except ValueError as exc:
        raise OptionError(f"option 'credentialProviderClass': {exc}") from None
