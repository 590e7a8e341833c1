"""One error tree for the library.

Every error names what it is about (stream, shard, operation) so a log line alone tells
an operator where to look. ``retriable`` says whether trying again later can succeed.
"""

from __future__ import annotations

from typing import Any, Optional

#: How many characters of a value an error shows.
SHOWN_CHARS = 80


def shown(value: Any) -> str:
    """``repr(value)`` for an error message, cut to :data:`SHOWN_CHARS` characters of a
    long string: an error about a hostile value (10 MB of digits) stays one short line."""
    if isinstance(value, str) and len(value) > SHOWN_CHARS:
        return f"{value[:SHOWN_CHARS]!r}... ({len(value)} characters)"
    return repr(value)


class KinesisDStreamError(Exception):
    """Base of every error this library raises on purpose."""

    retriable = False


class KinesisServiceError(KinesisDStreamError):
    """An AWS call failed: names the operation, stream, shard and endpoint, and the code.

    ``endpoint`` and ``region`` are the client's (``client.meta``) when the caller knew
    the client; they are part of the message because "which account and server?" is the
    first question an operator asks.
    """

    def __init__(
        self,
        message: str,
        *,
        operation: str = "",
        stream_name: Optional[str] = None,
        shard_id: Optional[str] = None,
        code: Optional[str] = None,
        endpoint: Optional[str] = None,
        region: Optional[str] = None,
        consumer_arn: Optional[str] = None,
    ) -> None:
        where = ", ".join(
            f"{k}={v}"
            for k, v in (
                ("operation", operation),
                ("stream", stream_name),
                ("shard", shard_id),
                ("consumer", consumer_arn),
                ("endpoint", endpoint),
                ("region", region),
            )
            if v
        )
        super().__init__(f"{message} ({where})" if where else message)
        self.operation = operation
        self.stream_name = stream_name
        self.shard_id = shard_id
        self.code = code
        self.endpoint = endpoint
        self.region = region
        self.consumer_arn = consumer_arn


class ThrottledError(KinesisServiceError):
    """Throttling that outlasted the retry budget."""

    retriable = True


class DependencyError(KinesisServiceError):
    """A service stayed unavailable (5xx, connection errors) through the retry budget."""

    retriable = True


class StreamNotFoundError(KinesisServiceError):
    """The stream (or table) does not exist at the endpoint."""


class StreamNotActiveError(KinesisServiceError, TimeoutError):
    """The stream did not become ACTIVE in time (still CREATING, UPDATING or DELETING).

    Also a :class:`TimeoutError`, which is what waiting for a stream used to raise.
    """

    retriable = True


class CredentialsError(KinesisServiceError):
    """No usable AWS credentials: none found, only part found, or rejected by the service.

    The message says where the default chain looks; it never contains a secret. A
    :class:`KinesisServiceError`, so code handling "an AWS call failed" handles it too.
    """


class ConsumerError(KinesisServiceError):
    """An enhanced fan-out consumer could not be registered, found or used.

    Names the stream and the consumer (name or ARN), and the limit when one was hit.
    """


class LeaseLostError(KinesisDStreamError):
    """This worker no longer holds the lease: another worker took it or it expired."""


class LeaseTableError(KinesisServiceError):
    """The lease table is missing, unusable, or has a key schema that is not the KCL's."""


class CheckpointError(KinesisDStreamError, ValueError):
    """A checkpoint that would move a shard's position backwards; nothing was written."""


class RecordsLostError(KinesisDStreamError):
    """Records that must be delivered can no longer be read (past the stream's retention)."""


class MessageHandlerError(KinesisDStreamError):
    """The user's decoder or message handler raised; names the stream, shard and record."""


class StandInError(KinesisDStreamError):
    """``pyspark.streaming.kinesis`` cannot be served by this library as asked (the JVM
    kinesis-asl is named for the job, PySpark's module is already loaded, no spark-submit)."""


class ProducerError(KinesisDStreamError):
    """Records could not be written after every retry; they are listed, never dropped."""

    def __init__(self, message: str, failed: list, error_codes: dict) -> None:
        super().__init__(message)
        self.failed = failed
        self.error_codes = error_codes
