"""boto3 client creation that follows the AWS SDK's own configuration conventions.

Region: the explicit argument, else ``AWS_REGION``, else ``AWS_DEFAULT_REGION`` or the
shared config profile (boto3's own chain). Endpoint: the explicit argument, else
botocore's ``AWS_ENDPOINT_URL_<SERVICE>`` / ``AWS_ENDPOINT_URL`` (boto3 applies them when
no endpoint is given). An explicit endpoint that is the region's public AWS endpoint for
the service (``https://kinesis.<region>.amazonaws.com``: kinesis-asl's signature asks for
it, the Glue console writes it into every Kinesis table) means the default, as it does on
AWS: the SDK's endpoint settings apply to it (:func:`sdk_endpoint`). Each process says in
one line which endpoint each service uses. Credentials: explicit keys, else boto3's
default chain.

botocore's own retries are turned off: callers retry with a :class:`~.backoff.Backoff`
so that attempts and time are bounded by one policy the user can configure.

Kinesis clients decode their successful GetRecords pages with
:mod:`.retrieval.page_decoder` (several times botocore's parse) unless
``KINESIS_DSTREAM_FAST_GET_RECORDS=0`` is set where the client is built, or
``fast_get_records=False`` is passed, and make their GetRecords calls through
:mod:`.retrieval.lean_get_records` (one signed request on a kept-alive connection, about
a fifth of botocore's CPU a call) unless ``KINESIS_DSTREAM_LEAN_GET_RECORDS=0`` is set
or ``lean_get_records=False`` is passed.
"""

from __future__ import annotations

import importlib
import logging
import os
import re
import threading
from dataclasses import dataclass, field, replace
from typing import Any, Optional

import boto3
import botocore.session
from botocore.config import Config
from botocore.credentials import (
    AssumeRoleCredentialFetcher,
    CredentialProvider,
    Credentials,
    DeferredRefreshableCredentials,
)

from .arns import note_arn
from .backoff import MISSING_CREDENTIALS_ERRORS, credentials_error
from .executor_heap import freeze_heap
from .retrieval import lean_get_records as _lean_reads
from .retrieval import page_decoder

log = logging.getLogger(__name__)

DEFAULT_CONNECT_TIMEOUT_S = 5.0
DEFAULT_READ_TIMEOUT_S = 30.0


def resolve_region(region_name: Optional[str] = None) -> str:
    """The region to use, or a ValueError that says where a region may come from."""
    if region_name:
        return region_name
    region = os.environ.get("AWS_REGION") or boto3.session.Session().region_name
    if not region:
        raise ValueError(
            "no AWS region: pass region_name, or set AWS_REGION / AWS_DEFAULT_REGION, "
            "or a region in the shared AWS config file"
        )
    return region


#: A service's endpoint prefix where it is not its boto3 name.
_ENDPOINT_PREFIX = {"cloudwatch": "monitoring"}
#: (service, endpoint) pairs this process has named in its one line (:func:`_say_endpoint`).
_SAID: set = set()
_SAID_LOCK = threading.Lock()


def _public_endpoint(service: str, region: str) -> re.Pattern:
    prefix = re.escape(_ENDPOINT_PREFIX.get(service, service))
    region_part = re.escape(region)
    s3_global = r"|s3\.amazonaws\.com" if service == "s3" and region == "us-east-1" else ""
    return re.compile(
        rf"(?:https?://)?(?:{prefix}\.{region_part}\.amazonaws\.com(?:\.cn)?{s3_global})/?",
        re.IGNORECASE,
    )


def sdk_endpoint(service: str, region: str, endpoint_url: Optional[str]) -> Optional[str]:
    """The endpoint to give botocore for ``endpoint_url``: None, the AWS SDK's own choice
    (``AWS_ENDPOINT_URL_<SERVICE>``, ``AWS_ENDPOINT_URL``, the shared config, else the
    region's default), where it is empty or the region's public AWS endpoint for the service;
    any other URL (a local server, a VPC or FIPS endpoint, a proxy) as given."""
    if not endpoint_url or _public_endpoint(service, region).fullmatch(endpoint_url.strip()):
        return None
    return endpoint_url


def _say_endpoint(service: str, client: Any, given: Optional[str], used: Optional[str]) -> None:
    """One line per service, endpoint and reason in a process: which endpoint it uses, and
    why."""
    if used is not None:
        why = "as given"
    else:
        why = (
            "the AWS SDK's choice: AWS_ENDPOINT_URL_<SERVICE>, AWS_ENDPOINT_URL, the shared "
            "config, else the region's default"
        )
        if given:
            why += f", in place of the given {given}: the region's default"
    endpoint = client.meta.endpoint_url
    with _SAID_LOCK:
        if (service, endpoint, why) in _SAID:
            return
        _SAID.add((service, endpoint, why))
    log.info("%s endpoint: %s (%s)", service, endpoint, why)


def create_client(
    service: str,
    *,
    region_name: Optional[str] = None,
    endpoint_url: Optional[str] = None,
    aws_access_key_id: Optional[str] = None,
    aws_secret_access_key: Optional[str] = None,
    aws_session_token: Optional[str] = None,
    max_pool_connections: Optional[int] = None,
    read_timeout_s: float = DEFAULT_READ_TIMEOUT_S,
    session: Optional[boto3.session.Session] = None,
    fast_get_records: Optional[bool] = None,
    lean_get_records: Optional[bool] = None,
) -> Any:
    """A boto3 client for ``service`` with botocore retries off and bounded timeouts.

    ``fast_get_records`` (Kinesis only; default: on unless the environment's
    ``KINESIS_DSTREAM_FAST_GET_RECORDS`` says ``0``) decodes successful GetRecords pages
    with :mod:`.retrieval.page_decoder` instead of botocore's parser.
    ``lean_get_records`` (Kinesis only; default: on unless
    ``KINESIS_DSTREAM_LEAN_GET_RECORDS`` says ``0``) sends the library's GetRecords calls
    without botocore's per-call machinery (:mod:`.retrieval.lean_get_records`).
    """
    if (aws_access_key_id is None) != (aws_secret_access_key is None):
        raise ValueError(
            "aws_access_key_id and aws_secret_access_key go together: give both or neither"
        )
    if session is None:
        session = boto3.session.Session(
            aws_access_key_id=aws_access_key_id,
            aws_secret_access_key=aws_secret_access_key,
            aws_session_token=aws_session_token,
        )
    config = Config(
        retries={"total_max_attempts": 1},
        # A client with a short read timeout (the lease client's) connects as briefly.
        connect_timeout=min(DEFAULT_CONNECT_TIMEOUT_S, max(1.0, read_timeout_s)),
        read_timeout=read_timeout_s,
        # a read task's threads share one Kinesis client; botocore's 10 elsewhere
        max_pool_connections=max_pool_connections or (32 if service == "kinesis" else 10),
    )
    region = resolve_region(region_name)
    used = sdk_endpoint(service, region, endpoint_url)
    try:
        client = session.client(service, region_name=region, endpoint_url=used, config=config)
    except MISSING_CREDENTIALS_ERRORS as exc:  # e.g. a key id without its secret
        raise credentials_error(
            exc, operation=f"create {service} client", endpoint=endpoint_url, region=region
        ) from exc
    _say_endpoint(service, client, endpoint_url, used)
    if service == "kinesis":
        if fast_get_records is None:
            fast_get_records = page_decoder.enabled_by_environment()
        if fast_get_records:
            page_decoder.install(client)
        if lean_get_records is None:
            lean_get_records = _lean_reads.enabled_by_environment()
        if lean_get_records:  # after the decoder: its handler is one of the client's own
            _lean_reads.install(client)
    return client


@dataclass(frozen=True)
class AWSCredentials:
    """Explicit credentials: access keys, an STS role to assume, or both.

    Without keys, the role is assumed with the default chain's credentials. The repr
    never shows a secret. These travel to executors inside Spark tasks (like any closure)
    but never into Spark checkpoints or logs.
    """

    access_key_id: Optional[str] = field(default=None, repr=False)
    secret_access_key: Optional[str] = field(default=None, repr=False)
    session_token: Optional[str] = field(default=None, repr=False)
    role_arn: Optional[str] = None
    role_session_name: Optional[str] = None
    external_id: Optional[str] = field(default=None, repr=False)
    sts_endpoint_url: Optional[str] = None
    #: A credentials provider class, ``package.module.Class`` (the awslabs connector's
    #: ``credentialProviderClass``): built with ``provider_param`` when given, its
    #: ``load()`` returns botocore credentials (refreshable ones are refreshed by botocore).
    provider: Optional[str] = None
    provider_param: Optional[str] = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.provider is not None:
            _provider_class(self.provider)  # fails here, naming it, if it cannot be imported
        if (self.access_key_id is None) != (self.secret_access_key is None):
            raise ValueError("an access key id and a secret key go together: give both or neither")
        sts = (self.role_arn, self.role_session_name)
        if any(v is not None for v in sts) and not all(sts):
            raise ValueError(
                "an STS role ARN and session name go together (the external id is optional): "
                "give both or none"
            )
        if self.external_id is not None and self.role_arn is None:
            raise ValueError("an STS external id needs a role ARN and session name")
        note_arn(self.role_arn, "STS role ARN")

    def without_role(self) -> Optional[AWSCredentials]:
        """These credentials without their STS role: the keys or the provider, or None
        (boto3's default chain) when the role was all they gave."""
        if self.access_key_id is None and self.provider is None:
            return None
        return replace(
            self, role_arn=None, role_session_name=None, external_id=None, sts_endpoint_url=None
        )

    def _base_session(self) -> boto3.session.Session:
        if self.provider is None:
            return boto3.session.Session(
                aws_access_key_id=self.access_key_id,
                aws_secret_access_key=self.secret_access_key,
                aws_session_token=self.session_token,
            )
        cls = _provider_class(self.provider)
        instance = cls() if self.provider_param is None else cls(self.provider_param)
        credentials = instance.load()
        if credentials is None or not getattr(credentials, "access_key", None):
            raise ValueError(f"credentials provider {self.provider} returned no credentials")
        return _session_with(credentials)

    def session(self, region_name: Optional[str]) -> boto3.session.Session:
        base = self._base_session()
        if self.role_arn is None:
            return base
        # botocore's own assume-role machinery: refreshed before the role's session expires.
        sts_endpoint = self.sts_endpoint_url

        def create_sts(service: str, **kwargs: Any) -> Any:
            region = resolve_region(region_name)
            used = sdk_endpoint(service, region, sts_endpoint)  # the rule of every client
            client = base.client(service, region_name=region, endpoint_url=used, **kwargs)
            _say_endpoint(service, client, sts_endpoint, used)
            return client

        extra: dict = {"RoleSessionName": self.role_session_name}
        if self.external_id is not None:
            extra["ExternalId"] = self.external_id
        source = base.get_credentials()
        if source is None:
            raise ValueError(
                f"cannot assume role {self.role_arn}: no source credentials "
                "(give keys, or configure the default credential chain)"
            )
        fetcher = AssumeRoleCredentialFetcher(
            client_creator=create_sts,
            source_credentials=source,
            role_arn=self.role_arn,
            extra_args=extra,
        )
        return _session_with(
            DeferredRefreshableCredentials(
                refresh_using=fetcher.fetch_credentials, method="assume-role"
            )
        )


class _GivenCredentials(CredentialProvider):
    """A credential provider that answers with credentials already in hand."""

    METHOD = "kinesis-dstream"

    def __init__(self, credentials: Credentials) -> None:
        super().__init__()
        self.credentials = credentials

    def load(self) -> Credentials:
        return self.credentials


def _session_with(credentials: Credentials) -> boto3.session.Session:
    """A session whose credentials are ``credentials``: put first in botocore's own
    resolver chain (its public way in), so nothing of the session's internals is set."""
    botocore_session = botocore.session.Session()
    resolver = botocore_session.get_component("credential_provider")
    resolver.insert_before("env", _GivenCredentials(credentials))
    return boto3.session.Session(botocore_session=botocore_session)


#: ``package.module.Class``: dotted identifiers, at least a module and a class.
_CLASS_PATH = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")


def _provider_class(path: str) -> Any:
    """Import ``package.module.Class``; a clear error when that is not possible."""
    dotted = path.strip().replace(":", ".")
    module_name, _, name = dotted.rpartition(".")
    if not _CLASS_PATH.fullmatch(dotted):  # also no relative import (".x.Y")
        raise ValueError(f"{path!r} is not a Python class path (package.module.Class)")
    try:
        cls = getattr(importlib.import_module(module_name), name)
    except (ImportError, AttributeError) as exc:
        raise ValueError(
            f"cannot import credentials provider {path!r} ({exc}); in Python this is a class "
            "whose load() returns botocore credentials, importable on the driver and executors"
        ) from None
    if not callable(cls):
        raise ValueError(f"credentials provider {path!r} is not a class")
    return cls


@dataclass(frozen=True)
class ClientSpec:
    """How to build a client, not the client: picklable into Spark tasks.

    Credentials are explicit :class:`AWSCredentials` or, when None, boto3's default chain
    where the client is built (environment, profiles, container or instance role).
    :meth:`client` builds one client per spec per process and reuses it, so an executor's
    Python worker pays for client creation once, not once per task.
    """

    service: str
    region_name: Optional[str] = None
    endpoint_url: Optional[str] = None
    credentials: Optional[AWSCredentials] = None
    #: Per-call read timeout; lease clients ask for one that fits a failover third.
    read_timeout_s: float = DEFAULT_READ_TIMEOUT_S

    def client(self) -> Any:
        key = (os.getpid(), self)  # a forked worker must not reuse its parent's client
        with _CLIENTS_LOCK:
            client = _CLIENTS.get(key)
            if client is not None:
                return client
            client, found_credentials = self._build()
            # A client built while the credential chain found nothing can never sign; kept,
            # it would fail every later call even once credentials appear (an environment
            # set later, a role not yet reachable). Only one that can sign is reused.
            if found_credentials:
                _CLIENTS[key] = client
                freeze_heap()  # in a Spark worker: the client lives as long as it
            return client

    def _build(self) -> tuple:
        """(a new client, whether its session found credentials)."""
        if self.credentials is None:
            session = boto3.session.Session()
        else:
            session = self.credentials.session(self.region_name)
        client = create_client(
            self.service,
            region_name=self.region_name,
            endpoint_url=self.endpoint_url,
            read_timeout_s=self.read_timeout_s,
            session=session,
        )
        return client, session.get_credentials() is not None


#: Per-process client cache for ClientSpec.client; boto3 clients are thread-safe.
_CLIENTS: dict = {}
_CLIENTS_LOCK = threading.Lock()
