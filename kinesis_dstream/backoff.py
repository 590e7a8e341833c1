"""Retry as a value: exponential backoff with full jitter, bounded in attempts and time.

The policy is pure arithmetic; :func:`call_with_retry` is the one loop that applies it,
with an injectable clock and sleeper so tests run it in milliseconds.
"""

from __future__ import annotations

import logging
import random
import time
from dataclasses import dataclass
from typing import Any, Callable, Optional, TypeVar

from botocore.eventstream import ParserError
from botocore.exceptions import (
    BotoCoreError,
    ChecksumError,
    ClientError,
    ConnectionClosedError,
    ConnectTimeoutError,
    CredentialRetrievalError,
    EndpointConnectionError,
    HTTPClientError,
    NoCredentialsError,
    PartialCredentialsError,
    ProxyConnectionError,
    ReadTimeoutError,
    ResponseStreamingError,
)
from botocore.exceptions import ConnectionError as BotocoreConnectionError
from urllib3.exceptions import HTTPError as Urllib3Error

from .errors import (
    CredentialsError,
    DependencyError,
    KinesisDStreamError,
    KinesisServiceError,
    StreamNotFoundError,
    ThrottledError,
)

log = logging.getLogger(__name__)
T = TypeVar("T")

# Error codes that mean "slow down and try again" across Kinesis, DynamoDB and CloudWatch
# (botocore's standard retry mode's throttling codes, and KMS's).
THROTTLING_CODES = frozenset(
    {
        "ProvisionedThroughputExceededException",
        "LimitExceededException",
        "ThrottlingException",
        "Throttling",
        "RequestLimitExceeded",
        "TooManyRequestsException",
        "KMSThrottlingException",
        "ThrottledException",
        "RequestThrottledException",
        "RequestThrottled",
        "TransactionInProgressException",
        "BandwidthLimitExceeded",
        "SlowDown",
        "PriorRequestNotComplete",
    }
)
#: The service's own failures, and botocore's transient codes (a request that timed out
#: on the server's side).
UNAVAILABLE_CODES = frozenset(
    {
        "InternalFailure",
        # (SubscribeToShard's event stream names its frame so: a live subscription's
        # server-side failure, which the KCL answers by subscribing again)
        "InternalFailureException",
        "InternalServerError",
        "ServiceUnavailable",
        "KMSInternalException",
        "RequestTimeout",
        "RequestTimeoutException",
    }
)
#: What botocore's standard retry mode retries (its ConnectionError, SSLError among them,
#: and HTTPClientError, whose subclasses are the read timeouts and closed connections);
#: ChecksumError: a response body damaged on the way (``x-amz-crc32``; see
#: :mod:`.retrieval.page_decoder`), as botocore's own DynamoDB retries treat it. The last
#: three: urllib3's and the event stream parser's failures, as a subscription's event
#: stream (read outside botocore's request) raises them.
TRANSPORT_ERRORS = (
    BotocoreConnectionError,
    HTTPClientError,
    ChecksumError,
    EndpointConnectionError,
    ConnectionClosedError,
    ConnectTimeoutError,
    ProxyConnectionError,
    ReadTimeoutError,
    ResponseStreamingError,
    Urllib3Error,
    ParserError,
    ConnectionError,
)
#: Raised by botocore before a request is sent: no (complete) credentials were found.
MISSING_CREDENTIALS_ERRORS = (NoCredentialsError, PartialCredentialsError, CredentialRetrievalError)
#: Codes with which Kinesis, DynamoDB, CloudWatch and STS reject the credentials sent.
REJECTED_CREDENTIALS_CODES = frozenset(
    {
        "UnrecognizedClientException",
        "InvalidClientTokenId",
        "InvalidSignatureException",
        "ExpiredTokenException",
        "ExpiredToken",
    }
)
CREDENTIALS_HELP = (
    "configure credentials the AWS SDK way: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY "
    "(and AWS_SESSION_TOKEN) in the environment, the shared files ~/.aws/credentials and "
    "~/.aws/config (or AWS_SHARED_CREDENTIALS_FILE and AWS_CONFIG_FILE), a profile "
    "(AWS_PROFILE), or a container or instance role"
)


@dataclass(frozen=True)
class Backoff:
    """Exponential backoff with full jitter (AWS architecture blog's "Full Jitter").

    ``delay_s(n)`` for the n-th retry (0-based) is uniform in
    ``[0, min(max_delay_s, initial_delay_s * multiplier**n)]``. A call is tried at most
    ``max_attempts`` times and retries stop once ``max_elapsed_s`` has passed.
    """

    initial_delay_s: float = 0.1
    max_delay_s: float = 10.0
    multiplier: float = 2.0
    max_attempts: int = 3
    max_elapsed_s: float = 60.0

    def __post_init__(self) -> None:
        if self.initial_delay_s < 0 or self.max_delay_s < self.initial_delay_s:
            raise ValueError(
                f"Backoff delays must satisfy 0 <= initial_delay_s <= max_delay_s, got "
                f"initial_delay_s={self.initial_delay_s}, max_delay_s={self.max_delay_s}"
            )
        if self.multiplier < 1:
            raise ValueError(f"Backoff multiplier must be >= 1, got {self.multiplier}")
        if self.max_attempts < 1:
            raise ValueError(f"Backoff max_attempts must be >= 1, got {self.max_attempts}")

    def ceiling_s(self, retry: int) -> float:
        """The largest delay the ``retry``-th retry (0-based) may sleep."""
        return min(self.max_delay_s, self.initial_delay_s * self.multiplier**retry)

    def delay_s(self, retry: int, rng: Callable[[], float] = random.random) -> float:
        """A jittered delay for the ``retry``-th retry (0-based)."""
        return self.ceiling_s(retry) * rng()


def error_code(exc: BaseException) -> Optional[str]:
    """The AWS error code of a botocore ClientError, else None."""
    if isinstance(exc, ClientError):
        return exc.response.get("Error", {}).get("Code")
    return None


def is_throttling(exc: BaseException) -> bool:
    return error_code(exc) in THROTTLING_CODES


def is_unavailable(exc: BaseException) -> bool:
    """5xx answers (with an AWS error code or without one: a proxy's or a load
    balancer's page), the unavailable codes and transport failures: the service may
    come back."""
    if isinstance(exc, TRANSPORT_ERRORS):
        return True
    if isinstance(exc, ClientError):
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0
        return status >= 500 or error_code(exc) in UNAVAILABLE_CODES
    return False


def is_retriable(exc: BaseException, also: frozenset = frozenset()) -> bool:
    """The one rule for a failure worth trying again, whichever way the records are
    read (polling, fan-out) and for the lease table: throttling, unavailability
    (:func:`is_unavailable`), or one of ``also``, the calling operation's own codes
    (SubscribeToShard's ``ResourceInUseException``: another subscription within 5 s)."""
    return is_throttling(exc) or is_unavailable(exc) or error_code(exc) in also


class RetryLog:
    """Failures of one retried activity counted, and logged at a bounded rate: the first
    at once, then at most one line per ``interval_s`` with the count since the last line
    (an outage of an hour is some hundred lines, not one per attempt)."""

    def __init__(
        self,
        logger: logging.Logger,
        what: str,
        interval_s: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
        *,
        level: int = logging.WARNING,
        traceback: bool = False,
    ) -> None:
        self._log = logger
        self.what = what
        self.interval_s = interval_s
        self._clock = clock
        #: The reports' level, and whether each carries the failure's traceback (for
        #: activities whose failures may be bugs, not only outages).
        self.level = level
        self.traceback = traceback
        self.total = 0  # failures since start
        self.in_a_row = 0  # failures since the last success
        self._unlogged = 0
        self._logged_at: Optional[float] = None

    def failed(self, exc: BaseException, retry_in_s: Optional[float] = None) -> bool:
        """Count one failure; returns whether it was logged."""
        self.total += 1
        self.in_a_row += 1
        self._unlogged += 1
        now = self._clock()
        if self._logged_at is not None and now - self._logged_at < self.interval_s:
            return False
        self._logged_at = now
        then = "" if retry_in_s is None else f", retrying in {retry_in_s:.1f}s"
        self._log.log(
            self.level,
            "%s failed (%d since the last report, %d in a row)%s; last: %s",
            self.what,
            self._unlogged,
            self.in_a_row,
            then,
            describe(exc),
            exc_info=exc if self.traceback else None,
        )
        self._unlogged = 0
        return True

    def succeeded(self) -> None:
        """The activity worked again: one line if its failures were reported."""
        if self._logged_at is not None:
            self._log.info("%s works again after %d failure(s) in a row", self.what, self.in_a_row)
        self.in_a_row = self._unlogged = 0
        self._logged_at = None


def describe(exc: BaseException) -> str:
    """A failure in one short phrase: its AWS error code (or HTTP status), else its type."""
    if isinstance(exc, ClientError):
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        return f"{error_code(exc) or 'no error code'} (HTTP {status}): {exc}"
    return f"{type(exc).__name__}: {exc}"


def endpoint_of(client: Any) -> dict:
    """The ``endpoint`` and ``region`` of a boto3 client, as error keyword arguments."""
    meta = getattr(client, "meta", None)
    if meta is None:
        return {}
    return {"endpoint": meta.endpoint_url, "region": meta.region_name}


def credentials_error(exc: BaseException, **where: Any) -> CredentialsError:
    """The :class:`CredentialsError` for a botocore credentials failure or rejection.

    ``where`` takes :class:`KinesisServiceError`'s keyword arguments (operation, stream,
    endpoint, ...). botocore's messages name a provider or a variable, never a value.
    """
    code = error_code(exc)
    if code is not None:
        problem = f"the service rejected the AWS credentials ({code}: {exc})"
    elif isinstance(exc, CredentialRetrievalError):
        # Its detail may quote a credential process's output: name the provider only.
        problem = f"no AWS credentials: retrieving them from {exc.kwargs.get('provider')} failed"
    else:
        problem = f"no AWS credentials ({exc})"
    return CredentialsError(f"{problem}; {CREDENTIALS_HELP}", code=code, **where)


def _final_error(exc: BaseException, where: dict) -> Optional[KinesisServiceError]:
    """The error of our tree that ``exc`` becomes when it is not retried; None if not AWS's."""
    code = error_code(exc)
    if isinstance(exc, MISSING_CREDENTIALS_ERRORS) or code in REJECTED_CREDENTIALS_CODES:
        return credentials_error(exc, **where)
    if code == "ResourceNotFoundException":
        return StreamNotFoundError(f"not found: {exc}", code=code, **where)
    if isinstance(exc, ClientError):
        return KinesisServiceError(f"{code}: {exc}", code=code, **where)
    if isinstance(exc, BotoCoreError):
        return KinesisServiceError(f"{type(exc).__name__}: {exc}", **where)
    return None


def call_with_retry(
    fn: Callable[[], T],
    backoff: Backoff,
    *,
    operation: str,
    stream_name: Optional[str] = None,
    shard_id: Optional[str] = None,
    client: Any = None,
    consumer_arn: Optional[str] = None,
    retriable: Callable[[BaseException], bool] = is_retriable,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
    rng: Callable[[], float] = random.random,
    on_retry: Optional[Callable[[BaseException], None]] = None,
) -> T:
    """Call ``fn`` until it succeeds or the backoff budget is spent.

    Retriable failures are retried; when the budget runs out they become
    :class:`ThrottledError` or :class:`DependencyError`. Missing or rejected credentials
    become :class:`CredentialsError` and ``ResourceNotFoundException``
    :class:`StreamNotFoundError`, at once; any other AWS failure is re-raised as
    :class:`KinesisServiceError`. Each names the operation, stream, shard (and
    ``consumer_arn`` when given), and, given
    ``client`` (the boto3 client ``fn`` calls), its endpoint and region. Errors of our
    tree (from a nested call) and non-AWS exceptions pass through unchanged.
    """
    where: dict = dict(
        operation=operation, stream_name=stream_name, shard_id=shard_id, **endpoint_of(client)
    )
    if consumer_arn is not None:
        where["consumer_arn"] = consumer_arn
    start = clock()
    retry = 0
    while True:
        try:
            return fn()
        except KinesisDStreamError:
            raise  # already classified and named, by a nested call_with_retry
        except Exception as exc:  # classified below; nothing is swallowed
            if error_code(exc) == "ResourceNotFoundException" or not retriable(exc):
                final = _final_error(exc, where)
                if final is None:
                    raise
                raise final from exc
            attempts = retry + 1
            elapsed = clock() - start
            if attempts >= backoff.max_attempts or elapsed >= backoff.max_elapsed_s:
                kind = ThrottledError if is_throttling(exc) else DependencyError
                raise kind(
                    f"gave up after {attempts} attempts in {elapsed:.1f}s: {exc}",
                    code=error_code(exc),
                    **where,
                ) from exc
            delay = min(backoff.delay_s(retry, rng), max(0.0, backoff.max_elapsed_s - elapsed))
            log.debug(
                "%s on %s (stream=%s, shard=%s, endpoint=%s), retry %d in %.3fs",
                error_code(exc) or type(exc).__name__,
                operation,
                stream_name,
                shard_id,
                where.get("endpoint"),
                attempts,
                delay,
            )
            if on_retry is not None:
                on_retry(exc)
            sleep(delay)
            retry += 1
