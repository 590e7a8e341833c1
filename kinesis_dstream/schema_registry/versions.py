"""Schema versions: ``GetSchemaVersion`` with the retry rule, a per-process cache of
writer schemas by version id, and decoding a framed payload (the source's and
:class:`GlueSchemaRegistryDeserializer`'s)."""

from __future__ import annotations

import io
import json
import logging
import threading
import uuid
from dataclasses import dataclass
from typing import Any, Callable, Optional

from ..aws import ClientSpec
from ..backoff import Backoff, call_with_retry
from ..errors import CredentialsError, KinesisServiceError
from ..extras import require
from .framing import RegistryPayloadError, SchemaVersionNotFoundError, split_frame

log = logging.getLogger(__name__)

NOT_FOUND = "EntityNotFoundException"
#: GetSchemaVersion and the serializer's registration calls: up to 5 tries within 30 s.
REGISTRY_BACKOFF = Backoff(initial_delay_s=0.1, max_delay_s=5.0, max_attempts=5, max_elapsed_s=30.0)


@dataclass(frozen=True)
class SchemaVersion:
    """One registered schema version, as ``GetSchemaVersion`` answers."""

    version_id: str
    definition: str
    data_format: str
    schema_arn: Optional[str] = None
    version_number: Optional[int] = None

    @classmethod
    def from_answer(cls, answer: dict) -> SchemaVersion:
        return cls(
            answer["SchemaVersionId"],
            answer["SchemaDefinition"],
            answer.get("DataFormat", "AVRO"),
            answer.get("SchemaArn"),
            answer.get("VersionNumber"),
        )

    def parsed(self) -> Any:
        """The fastavro-parsed schema; RegistryPayloadError when it is not Avro (not
        AVRO, or a definition fastavro does not parse)."""
        if self.data_format != "AVRO":
            raise RegistryPayloadError(
                f"schema version {self.version_id} is {self.data_format}, not AVRO"
            )
        try:
            return parse_avro_schema(self.definition)
        except ValueError as exc:
            raise RegistryPayloadError(
                f"schema version {self.version_id} is not a usable Avro schema: {exc}"
            ) from None


def parse_avro_schema(definition: Any, feature: str = "Glue Schema Registry Avro") -> Any:
    """An Avro schema (JSON text, or its parsed JSON) parsed by fastavro; every problem,
    fastavro's SchemaParseException included, is a ValueError saying what is wrong.
    ``feature`` names what needs fastavro when it is not installed."""
    require("fastavro", "sql", feature)
    import fastavro

    try:
        schema = json.loads(definition) if isinstance(definition, str) else definition
        return fastavro.parse_schema(schema)
    except Exception as exc:  # JSON errors and fastavro's SchemaParseException
        raise ValueError(f"not an Avro schema ({type(exc).__name__}: {exc})") from exc


def get_schema_version(
    client: Any, backoff: Backoff = REGISTRY_BACKOFF, **request: Any
) -> SchemaVersion:
    """``GetSchemaVersion`` with the retry rule; not found is :class:`SchemaVersionNotFoundError`,
    other failures the library's service errors (naming the operation and endpoint)."""
    try:
        answer = call_with_retry(
            lambda: client.get_schema_version(**request),
            backoff,
            operation="GetSchemaVersion",
            client=client,
        )
    except KinesisServiceError as exc:
        if exc.code == NOT_FOUND:
            raise SchemaVersionNotFoundError(
                f"schema version {_describe(request)} is not in the registry ({NOT_FOUND})"
            ) from None
        raise
    return SchemaVersion.from_answer(answer)


def _describe(request: dict) -> str:
    if "SchemaVersionId" in request:
        return request["SchemaVersionId"]
    number = request.get("SchemaVersionNumber", {})
    which = "latest" if number.get("LatestVersion") else f"number {number.get('VersionNumber')}"
    return f"{which} of {json.dumps(request.get('SchemaId', {}), sort_keys=True)}"


class SchemaVersionCache:
    """Writer schemas by version id, each fetched once (``GetSchemaVersion``).

    An id the registry does not have, or whose definition is not usable Avro, is
    remembered too (each of its records is corrupt, without a call per record). A client
    that cannot be built (credentials) or a registry that cannot be asked raises the
    library's error and nothing is remembered: those records are not corrupt, the read
    fails. ``fetches`` counts the calls made. Thread-safe.
    """

    def __init__(self, client: Callable[[], Any], backoff: Backoff = REGISTRY_BACKOFF) -> None:
        self._client = client
        self._backoff = backoff
        self._lock = threading.Lock()
        self._entries: dict = {}
        self.fetches = 0

    def get(self, version_id: str) -> tuple:
        """``(SchemaVersion, parsed schema)``; raises RegistryPayloadError when unusable."""
        return self.get_by_bytes(uuid.UUID(version_id).bytes)

    def get_by_bytes(self, key: bytes) -> tuple:
        """:meth:`get` by the id's 16 bytes, as a frame carries them (no lock once known)."""
        entry = self._entries.get(key)
        if entry is None:
            with self._lock:
                entry = self._entries.get(key) or self._fetch(str(uuid.UUID(bytes=key)))
                self._entries[key] = entry
        if isinstance(entry, Exception):
            raise entry
        return entry

    def _fetch(self, version_id: str) -> Any:
        client = registry_client(self._client, "GetSchemaVersion")
        self.fetches += 1
        try:
            version = get_schema_version(client, self._backoff, SchemaVersionId=version_id)
            entry: Any = (version, version.parsed())
        except RegistryPayloadError as exc:  # not in the registry, or not usable Avro
            entry = exc
        log.info("schema version %s fetched from the registry", version_id)
        return entry


def registry_client(build: Callable[[], Any], operation: str) -> Any:
    """``build()``'s client; any failure to build it (credentials: an assumed role
    without source credentials, a provider that fails) is a :class:`CredentialsError`
    naming ``operation``: a client is not data, so no record is corrupt because of it."""
    try:
        return build()
    except CredentialsError:
        raise
    except Exception as exc:
        raise CredentialsError(
            f"cannot build the Glue Schema Registry client ({type(exc).__name__}: {exc})",
            operation=operation,
        ) from None


_SHARED: dict = {}
_SHARED_LOCK = threading.Lock()


def shared_cache(spec: ClientSpec, backoff: Backoff = REGISTRY_BACKOFF) -> SchemaVersionCache:
    """This process's cache for the registry ``spec`` reaches (one per executor worker)."""
    import os

    key = (os.getpid(), spec)
    with _SHARED_LOCK:
        cache = _SHARED.get(key)
        if cache is None:
            cache = _SHARED[key] = SchemaVersionCache(spec.client, backoff)
        return cache


def decode(
    cache: SchemaVersionCache,
    data: bytes,
    reader: Any = None,
    reader_version_id: Optional[str] = None,
) -> Any:
    """One framed payload -> its Avro value, in the ``reader`` schema when given (Avro
    schema resolution; skipped for records written with ``reader_version_id``)."""
    import fastavro

    key, datum = split_frame(data)
    version, writer = cache.get_by_bytes(key)
    version_id = version.version_id
    buf = io.BytesIO(datum)
    resolve = reader is not None and version_id != reader_version_id
    try:
        value = fastavro.schemaless_reader(buf, writer, reader if resolve else None)
    except Exception as exc:  # fastavro's SchemaResolutionError, EOFError, ValueError...
        raise RegistryPayloadError(
            f"schema version {version_id}: datum does not decode"
            f"{' into the reader schema' if resolve else ''} ({type(exc).__name__}: {exc})"
        ) from None
    if buf.tell() != len(datum):
        raise RegistryPayloadError(
            f"schema version {version_id}: {len(datum) - buf.tell()} bytes left after the datum"
        )
    return value


class GlueSchemaRegistryDeserializer:
    """Decodes registry-framed Avro from any reader (a Lambda, a kclpy app): ``decode(data)``.

    ``reader_schema`` (an Avro schema, dict or JSON text) reads every record into one
    schema, as the source does; without it each record keeps its writer's schema.
    """

    def __init__(self, client: Any, reader_schema: Any = None) -> None:
        require("fastavro", "sql", "Glue Schema Registry Avro")
        self.cache = SchemaVersionCache(lambda: client)
        self.reader = (
            None if reader_schema is None else argument_schema(reader_schema, "reader_schema")
        )

    def decode(self, data: bytes) -> Any:
        return decode(self.cache, data, self.reader)


def argument_schema(schema: Any, argument: str) -> Any:
    """A schema argument parsed; ValueError naming the argument when it is not Avro."""
    try:
        return parse_avro_schema(schema)
    except ValueError as exc:
        raise ValueError(f"argument {argument}: {exc}") from None
