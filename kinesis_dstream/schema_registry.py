"""AWS Glue Schema Registry Avro: the serializers' framing, schema lookups, and a
serializer and deserializer for Python producers and consumers.

The registry's serializers (awslabs/aws-glue-schema-registry, ``SerializationDataEncoder``)
frame every record: byte 0 is the header version (3), byte 1 the compression (0 none,
5 zlib), bytes 2-17 the schema version id (a UUID, most significant half first), then
the Avro binary datum, zlib-compressed (Java's ``Deflater``: zlib with its header and
Adler-32) when byte 1 is 5. A consumer looks the id up with ``GetSchemaVersion`` to learn
the writer's schema; :class:`SchemaVersionCache` does that once per id per process, with
the library's retry rule, and remembers ids the registry does not have.

    serializer = GlueSchemaRegistrySerializer(AVRO_SCHEMA, "my-registry", "orders",
                                              client=glue, compression="zlib")
    producer.put(serializer.serialize({"id": 1, "total": 9.5}), "order-1")
"""

from __future__ import annotations

import io
import json
import logging
import threading
import time
import uuid
import zlib
from dataclasses import dataclass
from typing import Any, Callable, Optional, Union

from .aws import ClientSpec, create_client
from .backoff import Backoff, call_with_retry
from .errors import CredentialsError, KinesisDStreamError, KinesisServiceError
from .extras import require

log = logging.getLogger(__name__)

HEADER_VERSION = 3
COMPRESSION_NONE = 0
COMPRESSION_ZLIB = 5
HEADER_BYTES = 18
DEFAULT_REGISTRY = "default-registry"
NOT_FOUND = "EntityNotFoundException"
#: GetSchemaVersion and the serializer's registration calls: up to 5 tries within 30 s.
REGISTRY_BACKOFF = Backoff(initial_delay_s=0.1, max_delay_s=5.0, max_attempts=5, max_elapsed_s=30.0)
#: A datum that inflates past this is refused (a Kinesis record is at most 1 MiB).
MAX_INFLATED_BYTES = 128 * 1024 * 1024
_AVAILABLE_WAIT_S = 30.0


class RegistryPayloadError(KinesisDStreamError, ValueError):
    """A payload that cannot be read as registry-framed Avro; the message is the reason."""


class SchemaVersionNotFoundError(RegistryPayloadError):
    """A record names a schema version id the registry does not have."""


def frame(datum: bytes, version_id: Union[str, uuid.UUID], compress: bool = False) -> bytes:
    """``datum`` framed as the registry's serializers frame it (zlib when ``compress``)."""
    version = version_id if isinstance(version_id, uuid.UUID) else uuid.UUID(str(version_id))
    body = zlib.compress(datum) if compress else datum
    flag = COMPRESSION_ZLIB if compress else COMPRESSION_NONE
    return bytes((HEADER_VERSION, flag)) + version.bytes + body


def unframe(data: bytes, max_bytes: int = MAX_INFLATED_BYTES) -> tuple:
    """``(schema version id, datum)`` of a framed payload (inflated when compressed);
    :class:`RegistryPayloadError` saying why when it is not the registry's framing."""
    key, datum = _split(data, max_bytes)
    return str(uuid.UUID(bytes=key)), datum


def _split(data: bytes, max_bytes: int = MAX_INFLATED_BYTES) -> tuple:
    """``(the 16 bytes of the version id, datum)``: :func:`unframe` without the UUID."""
    if data[:1] and data[0] != HEADER_VERSION:
        raise RegistryPayloadError(
            f"not registry-framed: header version byte {data[0]}, expected {HEADER_VERSION}"
        )
    if len(data) < HEADER_BYTES:
        raise RegistryPayloadError(
            f"not registry-framed: {len(data)} bytes, the header alone is {HEADER_BYTES}"
        )
    key = bytes(data[2:HEADER_BYTES])
    if data[1] == COMPRESSION_NONE:
        return key, data[HEADER_BYTES:]
    if data[1] != COMPRESSION_ZLIB:
        raise RegistryPayloadError(
            f"not registry-framed: compression byte {data[1]}, expected {COMPRESSION_NONE} "
            f"(none) or {COMPRESSION_ZLIB} (zlib)"
        )
    inflater = zlib.decompressobj()
    try:
        datum = inflater.decompress(data[HEADER_BYTES:], max_bytes + 1)
    except zlib.error as exc:
        raise RegistryPayloadError(
            f"zlib-flagged registry payload does not inflate: {exc}"
        ) from None
    if len(datum) > max_bytes or not inflater.eof:
        raise RegistryPayloadError("zlib-flagged registry payload is truncated or too large")
    return key, datum


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

    key, datum = _split(data)
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
            None if reader_schema is None else _argument_schema(reader_schema, "reader_schema")
        )

    def decode(self, data: bytes) -> Any:
        return decode(self.cache, data, self.reader)


class GlueSchemaRegistrySerializer:
    """Avro records -> registry-framed payloads for :class:`~.producer.KinesisProducer`.

    The schema version is found by its definition (``GetSchemaByDefinition``) at the first
    :meth:`serialize`; with ``auto_register`` (the Java serializer's
    ``schemaAutoRegistrationEnabled``) a missing one is registered: ``CreateSchema``
    (``compatibility``, default BACKWARD) for a new schema, else ``RegisterSchemaVersion``,
    and waited for until AVAILABLE. ``compression="zlib"`` compresses every datum.
    The schema is ``schema_name`` as given, else the record's name without its namespace.
    """

    def __init__(
        self,
        schema: Any,
        registry_name: str = DEFAULT_REGISTRY,
        schema_name: Optional[str] = None,
        *,
        client: Any = None,
        region_name: Optional[str] = None,
        endpoint_url: Optional[str] = None,
        compression: str = "none",
        auto_register: bool = True,
        compatibility: str = "BACKWARD",
        backoff: Backoff = REGISTRY_BACKOFF,
    ) -> None:
        require("fastavro", "sql", "Glue Schema Registry Avro")
        if compression not in ("none", "zlib"):
            raise ValueError(f"compression must be 'none' or 'zlib', got {compression!r}")
        self.definition = schema if isinstance(schema, str) else json.dumps(schema)
        self.parsed = _argument_schema(self.definition, "schema")
        if not schema_name:
            # The record's name without its namespace; a name given is used as it is.
            full_name = self.parsed.get("name") if isinstance(self.parsed, dict) else None
            if not full_name:
                raise ValueError("schema_name is required for a schema without a name")
            schema_name = str(full_name).split(".")[-1]
        self.registry_name, self.schema_name = registry_name, schema_name
        self.compress = compression == "zlib"
        self.auto_register, self.compatibility, self.backoff = auto_register, compatibility, backoff
        self._client = client or create_client(
            "glue", region_name=region_name, endpoint_url=endpoint_url
        )
        self._version_id: Optional[str] = None
        self._lock = threading.Lock()

    @property
    def version_id(self) -> str:
        """The schema version records are written with (found or registered once)."""
        with self._lock:
            if self._version_id is None:
                self._version_id = self._find_or_register()
            return self._version_id

    def serialize(self, record: Any) -> bytes:
        """One record as a framed payload (raises ValueError if it does not fit the schema)."""
        import fastavro

        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, self.parsed, record)
        return frame(buf.getvalue(), self.version_id, self.compress)

    def _call(self, operation: str, **request: Any) -> dict:
        method = getattr(self._client, _snake(operation))
        return call_with_retry(
            lambda: method(**request), self.backoff, operation=operation, client=self._client
        )

    def _find_or_register(self) -> str:
        schema_id = {"RegistryName": self.registry_name, "SchemaName": self.schema_name}
        try:
            answer = self._call(
                "GetSchemaByDefinition", SchemaId=schema_id, SchemaDefinition=self.definition
            )
            return self._available(answer["SchemaVersionId"], answer.get("Status"))
        except KinesisServiceError as exc:
            if exc.code != NOT_FOUND or not self.auto_register:
                raise
        try:
            answer = self._call(
                "RegisterSchemaVersion", SchemaId=schema_id, SchemaDefinition=self.definition
            )
            return self._available(answer["SchemaVersionId"], answer.get("Status"))
        except KinesisServiceError as exc:
            if exc.code != NOT_FOUND:
                raise
        answer = self._call(
            "CreateSchema",
            RegistryId={"RegistryName": self.registry_name},
            SchemaName=self.schema_name,
            DataFormat="AVRO",
            Compatibility=self.compatibility,
            SchemaDefinition=self.definition,
        )
        log.info("registered schema %s in registry %s", self.schema_name, self.registry_name)
        return self._available(answer["SchemaVersionId"], answer.get("SchemaVersionStatus"))

    def _available(self, version_id: str, status: Optional[str]) -> str:
        deadline = time.monotonic() + _AVAILABLE_WAIT_S
        while status not in (None, "AVAILABLE"):
            if status == "FAILURE" or time.monotonic() > deadline:
                raise KinesisServiceError(
                    f"schema version {version_id} of {self.registry_name}/{self.schema_name} "
                    f"is {status} (an incompatible schema fails under {self.compatibility})",
                    operation="RegisterSchemaVersion",
                )
            time.sleep(0.5)
            status = self._call("GetSchemaVersion", SchemaVersionId=version_id).get("Status")
        return version_id


def _argument_schema(schema: Any, argument: str) -> Any:
    """A schema argument parsed; ValueError naming the argument when it is not Avro."""
    try:
        return parse_avro_schema(schema)
    except ValueError as exc:
        raise ValueError(f"argument {argument}: {exc}") from None


def _snake(operation: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in operation).lstrip("_")
