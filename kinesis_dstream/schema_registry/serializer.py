"""Avro records -> registry-framed payloads, the schema version found or registered once."""

from __future__ import annotations

import io
import json
import logging
import threading
import time
from typing import Any, Optional

from ..aws import create_client
from ..backoff import Backoff, call_with_retry
from ..errors import KinesisServiceError
from ..extras import require
from .framing import frame
from .versions import NOT_FOUND, REGISTRY_BACKOFF, argument_schema

log = logging.getLogger(__name__)

DEFAULT_REGISTRY = "default-registry"
_AVAILABLE_WAIT_S = 30.0


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
        self.parsed = argument_schema(self.definition, "schema")
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


def _snake(operation: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in operation).lstrip("_")
