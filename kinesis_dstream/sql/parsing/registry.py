"""Glue Schema Registry Avro as a payload format: which schema names the reader's schema.

With ``classification=avro`` and ``registryName`` + ``schemaName`` (or ``schemaArn``, or
``schemaVersionId`` alone; optional ``schemaVersionNumber``), records are read as the
registry's serializers frame them (:mod:`kinesis_dstream.schema_registry`). The reader's
schema, and so the columns, come from the named version, the latest by default, looked
up once on the driver (:meth:`RegistrySchema.resolve`), as Glue reads a Schema Registry
table with schema inference off. Executors look up each writer's version once per
process and read every record into the reader's schema (Avro schema resolution).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Callable, Optional

from ...arns import Arn, note_account, parse_arn
from ...aws import AWSCredentials, ClientSpec
from ...schema_registry import (
    REGISTRY_BACKOFF,
    SchemaVersion,
    SchemaVersionNotFoundError,
    get_schema_version,
    parse_avro_schema,
    registry_client,
)

#: The options naming the schema, as the catalog table's ``SchemaReference`` names its
#: fields (camelCase), and the registry's endpoint (this library's name).
REGISTRY_OPTIONS = (
    "registryName",
    "schemaName",
    "schemaArn",
    "schemaVersionNumber",
    "schemaVersionId",
    "registryEndpointUrl",
)


def _schema_arn(text: str) -> Optional[Arn]:
    """A Glue schema ARN (``arn:<partition>:glue:<region>:<account>:schema/<registry>/
    <schema>``, any account text: :mod:`kinesis_dstream.arns`), None if ``text`` is not one."""
    arn = parse_arn(text)
    if arn is None or arn.service != "glue" or not arn.region:
        return None
    parts = arn.resource.split("/")
    if len(parts) != 3 or parts[0] != "schema" or not parts[1] or not parts[2]:
        return None
    note_account(arn, "option schemaArn")
    return arn


@dataclass(frozen=True)
class RegistrySchema:
    """The schema version named by the options; :meth:`resolve` fetches it (driver)."""

    registry_name: Optional[str] = None
    schema_name: Optional[str] = None
    schema_arn: Optional[str] = None
    version_number: Optional[int] = None
    version_id: Optional[str] = None
    endpoint_url: Optional[str] = None
    #: Set by :meth:`resolve`: the reader's schema version and the registry's client.
    reader: Optional[SchemaVersion] = None
    client_spec: Optional[ClientSpec] = field(default=None, repr=False)

    @classmethod
    def parse(cls, get: Callable[[str], Optional[str]]) -> Optional[RegistrySchema]:
        """From the options (``get(name)``: the value or None); None when none is given;
        ValueError naming the options that do not go together."""
        given = {name: get(name) for name in REGISTRY_OPTIONS}
        if not any(given[n] for n in REGISTRY_OPTIONS[:5]):
            if given["registryEndpointUrl"]:
                raise ValueError("option registryEndpointUrl needs registryName and schemaName")
            return None
        registry, schema, arn = given["registryName"], given["schemaName"], given["schemaArn"]
        if arn and (registry or schema):
            raise ValueError(
                "options schemaArn and registryName/schemaName both name the schema; give one"
            )
        if bool(registry) != bool(schema):
            missing = "schemaName" if registry else "registryName"
            raise ValueError(
                f"option {missing} is needed with {'registryName' if registry else 'schemaName'}"
            )
        if arn and _schema_arn(arn) is None:
            raise ValueError(
                f"option schemaArn={arn!r} is not a schema ARN "
                "(arn:<partition>:glue:<region>:<account>:schema/<registry>/<schema>)"
            )
        number, version_id = given["schemaVersionNumber"], given["schemaVersionId"]
        if number and version_id:
            raise ValueError(
                "options schemaVersionNumber and schemaVersionId both name the version; give one"
            )
        if number and not (registry or arn):
            raise ValueError(
                "option schemaVersionNumber needs registryName and schemaName (or schemaArn)"
            )
        parsed_number = None
        if number:
            if not str(number).strip().isdigit() or int(number) < 1:
                raise ValueError(
                    f"option schemaVersionNumber={number!r} must be a positive integer"
                )
            parsed_number = int(number)
        if version_id:
            try:
                version_id = str(uuid.UUID(str(version_id)))
            except ValueError:
                raise ValueError(f"option schemaVersionId={version_id!r} is not a UUID") from None
        return cls(registry, schema, arn, parsed_number, version_id, given["registryEndpointUrl"])

    def describe(self) -> str:
        if self.schema_arn:
            what = f"schema {self.schema_arn}"
        elif self.schema_name:
            what = f"schema {self.schema_name!r} in registry {self.registry_name!r}"
        else:
            what = "the schema"
        if self.version_id:
            return f"version {self.version_id} of {what}"
        if self.version_number:
            return f"version {self.version_number} of {what}"
        return f"the latest version of {what}"

    def request(self) -> dict:
        """The ``GetSchemaVersion`` request for the reader's version."""
        if self.version_id:
            return {"SchemaVersionId": self.version_id}
        schema_id = (
            {"SchemaArn": self.schema_arn}
            if self.schema_arn
            else {"RegistryName": self.registry_name, "SchemaName": self.schema_name}
        )
        number = (
            {"VersionNumber": self.version_number}
            if self.version_number
            else {"LatestVersion": True}
        )
        return {"SchemaId": schema_id, "SchemaVersionNumber": number}

    def region(self, default: str) -> str:
        arn = _schema_arn(self.schema_arn) if self.schema_arn else None
        return arn.region if arn is not None else default

    def resolve(
        self, region_name: str, credentials: Optional[AWSCredentials] = None
    ) -> RegistrySchema:
        """This schema with its reader version fetched (one ``GetSchemaVersion``);
        ValueError naming the schema when it is missing or not Avro.

        ``credentials`` are the stream connection's. Their STS role is not used: it is
        the stream account's (Glue's ``awsSTSRoleARN`` reads a stream in another
        account), and the registry is in the job's own account. The registry is read
        with their keys or provider, else boto3's default chain (the job's role).
        """
        if self.reader is not None:
            return self
        own = None if credentials is None else credentials.without_role()
        spec = ClientSpec("glue", self.region(region_name), self.endpoint_url, own)
        try:
            client = registry_client(spec.client, "GetSchemaVersion")
            version = get_schema_version(client, REGISTRY_BACKOFF, **self.request())
        except SchemaVersionNotFoundError:
            raise ValueError(f"{self.describe()} is not in the registry") from None
        if version.data_format != "AVRO":
            raise ValueError(
                f"{self.describe()} is {version.data_format}; classification avro reads AVRO"
            )
        if self.version_id and version.schema_arn and (self.schema_name or self.schema_arn):
            expected = self.schema_arn or f"schema/{self.registry_name}/{self.schema_name}"
            if not version.schema_arn.endswith(expected.split(":")[-1]):
                raise ValueError(f"{self.describe()} belongs to {version.schema_arn}")
        try:
            parse_avro_schema(version.definition)
        except ValueError as exc:
            found = [] if self.version_number else [f"version {version.version_number}"]
            found += [] if self.version_id else [f"id {version.version_id}"]
            raise ValueError(
                f"{self.describe()} ({', '.join(found)}) is not a usable Avro schema: {exc}"
            ) from None
        return replace(self, reader=version, client_spec=spec)


def schema_reference_options(reference: Mapping) -> dict:
    """Glue's ``StorageDescriptor.SchemaReference`` (a catalog table's) as these options."""
    schema_id = reference.get("SchemaId") or {}
    options = {
        "registryName": schema_id.get("RegistryName"),
        "schemaName": schema_id.get("SchemaName"),
        "schemaArn": schema_id.get("SchemaArn"),
        "schemaVersionId": reference.get("SchemaVersionId"),
        "schemaVersionNumber": reference.get("SchemaVersionNumber"),
    }
    return {k: str(v) for k, v in options.items() if v is not None}
