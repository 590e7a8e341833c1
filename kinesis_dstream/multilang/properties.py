"""The MultiLangDaemon's properties file, read as the Java daemon reads it.

The file is a Java ``.properties`` file, read exactly as ``java.util.Properties`` reads
it (:mod:`.java_properties`). Keys this daemon honours are in
:data:`~.property_keys.HONOURED`; keys the Java KCL knows that change only how the work
is done (metrics, thread pools, KCL 3.x balancing tables, retrieval tuning) are accepted
and logged as ignored (:data:`~.property_keys.IGNORED`); a KCL key whose value would
change what the application sees is refused with the reason
(:func:`_refuse_if_it_changes_what_the_app_sees`); anything else is an error naming the
known keys (a typo must not pass silently).
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Optional

from ..arns import note_arn, parse_stream_arn
from ..esn import AT_TIMESTAMP, LATEST, TRIM_HORIZON
from ..leases.timing import (
    DEFAULT_FAILOVER_TIME_S,
    DEFAULT_MAX_LEASES_TO_STEAL,
    DEFAULT_SHARD_SYNC_INTERVAL_S,
)
from .java_properties import PropertiesSyntaxError, read_properties_bytes
from .property_keys import (
    HONOURED,
    IGNORED,
    IGNORED_PREFIXES,
    POLLING_PROPERTIES,
    RETRIEVAL_MODES,
)
from .protocol_version import PROPERTY as PROTOCOL_PROPERTY
from .protocol_version import ProtocolVersion, parse_declared

log = logging.getLogger(__name__)

INITIAL_POSITIONS = (TRIM_HORIZON, LATEST, AT_TIMESTAMP)
DEFAULT_CREDENTIALS_PROVIDERS = frozenset(
    {
        "DefaultCredentialsProvider",
        "DefaultAWSCredentialsProviderChain",
        "DefaultCredentialsProviderChain",
    }
)
PROFILE_PROVIDERS = frozenset({"ProfileCredentialsProvider"})


class PropertiesError(ValueError):
    """The properties file cannot be run as written; the message names key and value."""


@dataclass(frozen=True)
class Credentials:
    """Which AWS credentials: the default chain (``profile`` None) or a named profile."""

    profile: Optional[str] = None


@dataclass(frozen=True)
class MultiLangConfig:
    """A parsed properties file. Units are in the names; defaults are the KCL's."""

    executable_name: str
    stream_name: str
    application_name: str
    region_name: Optional[str] = None
    initial_position: str = LATEST
    initial_timestamp: Optional[datetime] = None
    credentials: Credentials = Credentials()
    dynamodb_credentials: Optional[Credentials] = None
    processing_language: Optional[str] = None
    failover_time_s: float = 10.0
    max_records: int = 10_000
    #: From the end of one GetRecords call to the start of the next, as the KCL counts it.
    idle_time_between_reads_s: float = 1.0
    #: Read-ahead bounds of a polled shard (the KCL's ``maxPendingProcessRecordsInput``,
    #: ``maxCacheByteSize``, ``maxRecordsCount``, with its defaults).
    max_pending_process_records_input: int = 3
    max_cache_byte_size: int = 8 * 1024 * 1024
    max_records_count: int = 30_000
    max_leases_for_worker: Optional[int] = None
    max_leases_to_steal: int = 1
    shard_sync_interval_s: float = 60.0
    worker_id: Optional[str] = None
    #: The lease table (``tableName``); None: the application name, as in the KCL.
    table_name: Optional[str] = None
    #: "FANOUT" (SubscribeToShard) or "POLLING" (GetRecords), resolved from
    #: ``retrievalMode`` as the Java daemon resolves it.
    retrieval_mode: str = "POLLING"
    #: Whether the file set ``retrievalMode`` (else a KCL 1.x child's daemon polls).
    retrieval_mode_declared: bool = False
    #: The fan-out consumer: by ARN (never registered), else by name (registered if
    #: missing; the KCL's default name is the application name).
    consumer_arn: Optional[str] = None
    consumer_name: Optional[str] = None
    kinesis_endpoint: Optional[str] = None
    dynamodb_endpoint: Optional[str] = None
    #: Bound on waiting for a child's answer (the Java daemon's ``timeoutInSeconds``):
    #: past it the daemon stops at once, as the Java daemon halts. None: wait (warning).
    timeout_s: Optional[float] = None
    #: How long a graceful stop may take (the Java daemon's ``shutdownGraceMillis``).
    shutdown_grace_s: float = 5.0
    #: The children's protocol as ``multiLangProtocol`` declares it; None: found from the
    #: child (:mod:`.child_probe`), else KCL 2.x's.
    multi_lang_protocol: Optional[ProtocolVersion] = None
    #: The properties file's directory (for the log; the child runs in our cwd, as Java).
    source: Optional[str] = None


def load_properties(path: str) -> MultiLangConfig:
    """Read and validate a properties file; see :func:`parse_properties`."""
    file = Path(path)
    try:
        props = read_properties_bytes(file.read_bytes())
    except OSError as exc:
        raise PropertiesError(f"cannot read the properties file {path}: {exc}") from exc
    except PropertiesSyntaxError as exc:
        raise PropertiesError(f"the properties file {path} cannot be read: {exc}") from exc
    return parse_properties(props, source=str(file))


def parse_properties(props: dict, source: Optional[str] = None) -> MultiLangConfig:
    """Validate a dict of properties into a :class:`MultiLangConfig`.

    Values are used without their trailing white space (the file keeps it, as Java's
    reader does; a stray space after a stream name is not part of the name).
    """
    where = f" in {source}" if source else ""
    props = {key: value.strip() for key, value in props.items()}
    unknown = []
    for key in sorted(props):
        if key in HONOURED:
            continue
        if key in IGNORED or key.startswith(IGNORED_PREFIXES):
            log.info("property %s%s is accepted and ignored: it does not apply here", key, where)
            continue
        unknown.append(key)
    if unknown:
        raise PropertiesError(
            f"unknown properties{where}: {', '.join(unknown)}; known: "
            f"{', '.join(sorted(HONOURED))} (and these KCL tuning keys, ignored: "
            f"{', '.join(sorted(IGNORED))})"
        )
    _refuse_if_it_changes_what_the_app_sees(props, where)

    def required(key: str) -> str:
        value = props.get(key, "")
        if not value:
            raise PropertiesError(f"property {key} is required{where}")
        return value

    executable = required("executableName")
    stream_name, region = _stream(props, where)
    initial = props.get("initialPositionInStream", LATEST).upper()
    if initial not in INITIAL_POSITIONS:
        raise PropertiesError(
            f"initialPositionInStream={props['initialPositionInStream']!r}{where}: "
            f"expected one of {', '.join(INITIAL_POSITIONS)}"
        )
    timestamp = _timestamp(props.get("initialPositionInStreamExtended"), where)
    if initial == AT_TIMESTAMP and timestamp is None:
        raise PropertiesError(
            f"initialPositionInStream=AT_TIMESTAMP{where} needs "
            "initialPositionInStreamExtended (epoch seconds)"
        )
    if timestamp is not None and initial != AT_TIMESTAMP:
        # The KCL starts at the timestamp whenever the extended position is given.
        initial = AT_TIMESTAMP
    dynamodb_provider = props.get("AwsCredentialsProviderDynamoDB") or props.get(
        "AWSCredentialsProviderDynamoDB"
    )
    return MultiLangConfig(
        executable_name=executable,
        stream_name=stream_name,
        application_name=required("applicationName"),
        region_name=props.get("regionName") or region,
        initial_position=initial,
        initial_timestamp=timestamp,
        credentials=_credentials(
            props.get("AwsCredentialsProvider") or props.get("AWSCredentialsProvider"), where
        ),
        dynamodb_credentials=(
            _credentials(dynamodb_provider, where) if dynamodb_provider else None
        ),
        processing_language=props.get("processingLanguage"),
        failover_time_s=_millis(
            props, "failoverTimeMillis", int(DEFAULT_FAILOVER_TIME_S * 1000), where
        ),
        max_records=_int(props, "maxRecords", 10_000, where, maximum=10_000),
        idle_time_between_reads_s=_millis(props, "idleTimeBetweenReadsInMillis", 1_000, where, 0),
        max_pending_process_records_input=_int(props, "maxPendingProcessRecordsInput", 3, where),
        max_cache_byte_size=_int(props, "maxCacheByteSize", 8 * 1024 * 1024, where),
        max_records_count=_int(props, "maxRecordsCount", 30_000, where),
        max_leases_for_worker=_optional_int(props, "maxLeasesForWorker", where),
        max_leases_to_steal=_int(
            props, "maxLeasesToStealAtOneTime", DEFAULT_MAX_LEASES_TO_STEAL, where, minimum=0
        ),
        shard_sync_interval_s=_millis(
            props, "shardSyncIntervalMillis", int(DEFAULT_SHARD_SYNC_INTERVAL_S * 1000), where
        ),
        worker_id=props.get("workerIdentifier") or props.get("workerId") or None,
        table_name=props.get("tableName") or None,
        retrieval_mode=_retrieval_mode(props, where),
        retrieval_mode_declared=bool(props.get("retrievalMode")),
        multi_lang_protocol=_protocol(props, where),
        consumer_arn=_consumer_arn(props, where),
        consumer_name=props.get("consumerName") or None,
        kinesis_endpoint=props.get("kinesisEndpoint") or None,
        dynamodb_endpoint=props.get("dynamoDBEndpoint") or None,
        timeout_s=(
            float(_int(props, "timeoutInSeconds", 0, where, minimum=1))
            if props.get("timeoutInSeconds")
            else None
        ),
        shutdown_grace_s=_millis(props, "shutdownGraceMillis", 5_000, where),
        source=source,
    )


def _refuse_if_it_changes_what_the_app_sees(props: dict, where: str) -> None:
    """KCL keys honoured only at their default: another value would change the messages."""
    if props.get("callProcessRecordsEvenForEmptyRecordList", "false").lower() == "true":
        raise PropertiesError(
            f"callProcessRecordsEvenForEmptyRecordList=true{where} is not supported: this "
            "daemon never sends an empty processRecords; remove the key"
        )
    if props.get("http.proxyHost"):
        log.warning(
            "http.proxyHost=%s%s (the KCL 1.x daemon's proxy) is not used here: this "
            "daemon's AWS clients take theirs from the environment; set HTTPS_PROXY=http://"
            "%s:%s",
            props["http.proxyHost"],
            where,
            props["http.proxyHost"],
            props.get("http.proxyPort") or "<port>",
        )
    if props.get("cleanupLeasesUponShardCompletion", "true").lower() == "false":
        log.info(
            "cleanupLeasesUponShardCompletion=false%s: finished leases are still deleted "
            "once their children have started",
            where,
        )


def _retrieval_mode(props: dict, where: str) -> str:
    """FANOUT or POLLING, as ``RetrievalMode.from`` and ``decideForDefault`` decide."""
    raw = props.get("retrievalMode") or "DEFAULT"
    mode = raw.upper()
    if mode not in RETRIEVAL_MODES:
        raise PropertiesError(
            f"retrievalMode={raw!r}{where}: expected one of {', '.join(RETRIEVAL_MODES)}"
        )
    if mode != "DEFAULT":
        return mode
    polling = [key for key in POLLING_PROPERTIES if props.get(key, "") not in ("", "0")]
    if polling:
        log.info(
            "retrievalMode is DEFAULT and %s%s set: reading by polling (GetRecords), as "
            "the Java daemon does; add retrievalMode = FANOUT to read with SubscribeToShard",
            ", ".join(polling),
            " is" if len(polling) == 1 else " are",
        )
        return "POLLING"
    log.info(
        "retrievalMode is DEFAULT and no polling property is set%s: reading with enhanced "
        "fan-out (SubscribeToShard), as the Java daemon does",
        where,
    )
    return "FANOUT"


def _protocol(props: dict, where: str) -> Optional[ProtocolVersion]:
    raw = props.get(PROTOCOL_PROPERTY)
    try:
        return parse_declared(raw)
    except ValueError as exc:
        raise PropertiesError(f"{PROTOCOL_PROPERTY}={raw!r}{where}: {exc}") from None


def _consumer_arn(props: dict, where: str) -> Optional[str]:
    arn = props.get("consumerArn") or None
    note_arn(arn, f"consumerArn{where}")
    return arn


def _stream(props: dict, where: str) -> tuple:
    arn = props.get("streamArn", "")
    name = props.get("streamName", "")
    if arn:  # streamArn takes precedence over streamName, as in the KCL
        parsed = parse_stream_arn(arn, f"streamArn{where}")
        if parsed is None:
            raise PropertiesError(
                f"streamArn={arn!r}{where} is not a Kinesis stream ARN "
                "(arn:<partition>:kinesis:<region>:<account>:stream/<name>)"
            )
        region, stream = parsed
        if name and name != stream:
            log.warning(
                "streamArn%s names stream %s; streamName=%s is ignored", where, stream, name
            )
        return stream, region
    if not name:
        raise PropertiesError(f"property streamName (or streamArn) is required{where}")
    return name, None


def _timestamp(value: Optional[str], where: str) -> Optional[datetime]:
    if not value:
        return None
    try:
        return datetime.fromtimestamp(float(value), tz=timezone.utc)
    except (ValueError, OverflowError, OSError) as exc:
        raise PropertiesError(
            f"initialPositionInStreamExtended={value!r}{where}: expected epoch seconds"
        ) from exc


def _credentials(value: Optional[str], where: str) -> Credentials:
    if not value:
        return Credentials()
    providers = [v.strip() for v in value.split(",") if v.strip()]
    for provider in providers:  # a comma list is a chain: the first we can use wins
        name, _, arg = provider.partition("|")
        short = name.rsplit(".", 1)[-1]
        if short in DEFAULT_CREDENTIALS_PROVIDERS:
            return Credentials()
        if short in PROFILE_PROVIDERS:
            return Credentials(profile=arg or None)
    raise PropertiesError(
        f"credentials provider {value!r}{where} is not supported here: use "
        "DefaultCredentialsProvider (the default chain: environment, profile, container or "
        "instance role) or ProfileCredentialsProvider|<profile>"
    )


#: The Java daemon's ``int`` and ``long`` fields: past them its BeanUtils converter reads
#: the value as 0, silently; refused here, in one line.
_JAVA_INT_MAX = 2**31 - 1
_JAVA_LONG_MAX = 2**63 - 1


def _int(
    props: dict,
    key: str,
    default: int,
    where: str,
    minimum: int = 1,
    maximum: Optional[int] = None,
    java_max: int = _JAVA_INT_MAX,
) -> int:
    """An integer property as Java's ``Long.parseLong`` reads it: an optional sign and
    decimal digits (of any script: Java reads Arabic-Indic or fullwidth digits as their
    number, and so does ``int``); no ``_``, exponent or hex, which ``int`` or ``float``
    would take and Java refuses. Bounded by ``minimum``, ``maximum`` and the Java field."""
    raw = props.get(key)
    if raw is None or raw == "":
        return default
    shown = raw if len(raw) <= 40 else raw[:40] + "..."
    upper = java_max if maximum is None else min(maximum, java_max)
    bound = f"in [{minimum}, {upper}]"
    digits = raw[1:] if raw[:1] in "+-" else raw
    if not digits.isdecimal():
        raise PropertiesError(f"{key}={shown!r}{where}: expected an integer {bound}")
    if len(digits.lstrip("0")) > len(str(upper)) or not minimum <= int(raw) <= upper:
        # (the length first: int() of thousands of digits is refused, and slow)
        raise PropertiesError(f"{key}={shown!r}{where}: expected an integer {bound}")
    return int(raw)


def _optional_int(props: dict, key: str, where: str) -> Optional[int]:
    if not props.get(key):
        return None
    return _int(props, key, 0, where)


#: The longest wait a thread can make (``threading.TIMEOUT_MAX``, ~292 years): a longer
#: time (a ``long`` of milliseconds meant as "forever") is read as this, with a warning.
_LONGEST_WAIT_S = threading.TIMEOUT_MAX


def _millis(props: dict, key: str, default_ms: int, where: str, minimum: int = 1) -> float:
    seconds = _int(props, key, default_ms, where, minimum=minimum, java_max=_JAVA_LONG_MAX) / 1000
    if seconds > _LONGEST_WAIT_S:
        log.warning(
            "%s=%s%s is longer than this process can wait: read as %.0f years",
            key,
            props[key],
            where,
            _LONGEST_WAIT_S / (365.25 * 86400),
        )
        return _LONGEST_WAIT_S
    return seconds
