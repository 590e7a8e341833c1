"""The Glue Data Catalog as a source and sink: a table read with ``GetTable`` and mapped
onto this library's source, sink or S3 writer options.

A Kinesis table (``StorageDescriptor.Parameters.typeOfData = kinesis``) names its stream
with ``streamName`` + ``endpointUrl`` or ``streamARN`` (cross-account: ``awsSTSRoleARN``,
``awsSTSSessionName``); its table parameters say how payloads parse (``classification``,
``delimiter``, ``avroSchema``, ``grokPattern``, ``grokCustomPatterns``); its columns are
the schema unless ``inferSchema`` is true; a Schema Registry table carries
``StorageDescriptor.SchemaReference``. ``additional_options`` override the table. An S3
table (a ``Location`` under ``s3://``) is a sink for ``write_dynamic_frame.from_catalog``.
The mapping functions are pure (a ``GetTable`` answer in, options out).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Optional

from ...backoff import Backoff, call_with_retry
from ...errors import KinesisServiceError
from ...sql.parsing.registry import schema_reference_options
from ..errors import GlueError, GlueServiceError
from ..options import TYPE_OF_DATA, merged, source_options
from ..sinks.avro_types import columns_avro_schema
from .formats import table_format

#: Storage parameters naming the stream and the role: the source's option names as is.
STREAM_KEYS = (
    "streamName",
    "endpointUrl",
    "streamARN",
    "awsSTSRoleARN",
    "awsSTSSessionName",
    "awsSTSEndpoint",
)
#: Table parameters saying how payloads parse (also read from the storage parameters).
FORMAT_KEYS = (
    "classification",
    "delimiter",
    "avroSchema",
    "grokPattern",
    "grokCustomPatterns",
    "columnNameOfCorruptRecord",
)
#: Data Catalog calls' retries: GetTable (once, at a job's start) and a write's catalog updates.
CATALOG_BACKOFF = Backoff(initial_delay_s=0.2, max_delay_s=2.0, max_attempts=5, max_elapsed_s=20.0)
#: A CSV table's SerDe parameters -> Glue's CSV format options: LazySimpleSerDe's
#: ``field.delim``, and OpenCSVSerde's (what crawlers make for quoted CSV) three.
SERDE_CSV_OPTIONS = (
    ("field.delim", "separator"),
    ("separatorChar", "separator"),
    ("quoteChar", "quoteChar"),
    ("escapeChar", "escaper"),
)
#: Classifications whose schema is the table's columns (as Spark DDL).
COLUMN_SCHEMA_CLASSIFICATIONS = ("json", "csv")
#: Options that name an Avro table's schema elsewhere (a Schema Registry), lower-case.
AVRO_SCHEMA_SOURCES = ("registryname", "schemaname", "schemaarn")


@dataclass(frozen=True)
class TableName:
    database: str
    table: str
    catalog_id: Optional[str] = None

    def __str__(self) -> str:
        where = f" (catalog {self.catalog_id})" if self.catalog_id else ""
        return f"table {self.database}.{self.table}{where}"

    @classmethod
    def from_arguments(
        cls, database: Optional[str], table_name: Optional[str], catalog_id: Any, kwargs: dict
    ) -> TableName:
        """Glue's arguments: ``database`` or its alias ``name_space`` (popped from
        ``kwargs``), and ``table_name``; Glue's own messages when they are wrong."""
        if database is not None and "name_space" in kwargs:
            raise GlueError("Parameter name_space and database are both specified, choose one.")
        if database is None and "name_space" not in kwargs:
            raise GlueError("Parameter name_space or database is missing.")
        database = kwargs.pop("name_space") if database is None else database
        if table_name is None:
            raise GlueError("Parameter table_name is missing.")
        return cls(str(database), str(table_name), None if catalog_id is None else str(catalog_id))


def get_table(client: Any, name: TableName, backoff: Backoff = CATALOG_BACKOFF) -> dict:
    """``GetTable`` (:func:`catalog_call`): a missing database or table is a
    :class:`GlueError` naming both; any other failure, a :class:`GlueServiceError` naming
    the table."""
    kwargs = {"DatabaseName": name.database, "Name": name.table}
    if name.catalog_id:
        kwargs["CatalogId"] = name.catalog_id
    return catalog_call(
        client,
        "GetTable",
        lambda: client.get_table(**kwargs)["Table"],
        f"reading {name}",
        f"{name} is not in the Glue Data Catalog at {client.meta.endpoint_url}; create it "
        "(Glue's CreateTable) or check the database and table names",
        backoff,
    )


def catalog_call(
    client: Any,
    operation: str,
    fn: Any,
    subject: str,
    not_found: str,
    backoff: Backoff = CATALOG_BACKOFF,
    not_found_code: str = "EntityNotFoundException",
) -> Any:
    """``fn()`` (a Data Catalog call, or another AWS call of the Glue layer), retried as
    every AWS call here. Something missing (``not_found_code``: Glue's
    ``EntityNotFoundException``, DynamoDB's ``ResourceNotFoundException``) is the
    :class:`GlueError` ``not_found`` (the script's to fix); any other failure a
    :class:`GlueServiceError` naming ``subject`` (the service's: a restart may heal it)."""
    try:
        return call_with_retry(fn, backoff, operation=operation, client=client)
    except KinesisServiceError as exc:
        if exc.code == not_found_code:
            raise GlueError(not_found) from None
        error = GlueServiceError(f"{subject}: {exc}", code=exc.code)
        error.retriable = exc.retriable
        raise error from exc


def _parameters(table: Mapping[str, Any]) -> tuple:
    storage = table.get("StorageDescriptor") or {}
    return storage, storage.get("Parameters") or {}, table.get("Parameters") or {}


def is_kinesis_table(table: Mapping[str, Any]) -> bool:
    _, storage_params, table_params = _parameters(table)
    kind = storage_params.get(TYPE_OF_DATA) or table_params.get(TYPE_OF_DATA) or ""
    return str(kind).strip().lower() == "kinesis"


def columns_ddl(columns: list) -> str:
    """The table's columns as Spark DDL (their Hive type names are Spark's too)."""
    parts = []
    for column in columns:
        name = str(column["Name"]).replace("`", "``")
        parts.append(f"`{name}` {column['Type']}")
    return ", ".join(parts)


def _kinesis_table_options(table: Mapping[str, Any], name: TableName) -> dict:
    storage, storage_params, table_params = _parameters(table)
    if not is_kinesis_table(table):
        kind = storage_params.get(TYPE_OF_DATA) or table_params.get(TYPE_OF_DATA)
        location = storage.get("Location")
        what = f"typeOfData={kind!r}" if kind else f"no typeOfData, Location={location!r}"
        raise GlueError(
            f"{name} is not a Kinesis table ({what}); its StorageDescriptor "
            "Parameters need typeOfData=kinesis and streamName or streamARN"
        )
    options = {k: str(storage_params[k]) for k in STREAM_KEYS if storage_params.get(k)}
    for key in FORMAT_KEYS:
        value = table_params.get(key) or storage_params.get(key)
        if value:
            options[key] = str(value)
    reference = storage.get("SchemaReference")
    if reference:
        options.update(schema_reference_options(reference))
        options.setdefault("classification", "avro")  # Glue: registry tables are Avro
    return options


def catalog_source_options(
    table: Mapping[str, Any], name: TableName, additional_options: Mapping[str, Any]
) -> dict:
    """The ``format("kinesis")`` options of a Kinesis catalog table read with
    ``additional_options`` (which override the table's)."""
    options = merged(
        _kinesis_table_options(table, name),
        source_options(additional_options, f"from_catalog({name})"),
    )
    lowered = {k.lower(): v for k, v in options.items()}
    infer = lowered.get("inferschema", "false").strip().lower() == "true"
    classification = lowered.get("classification", "").strip().lower()
    columns = (table.get("StorageDescriptor") or {}).get("Columns") or []
    if not infer and "schema" not in lowered and classification in COLUMN_SCHEMA_CLASSIFICATIONS:
        if not columns:
            raise GlueError(
                f"{name} has no columns and inferSchema is not true: give the table its "
                "columns, or additional_options={'inferSchema': 'true'}"
            )
        options["schema"] = columns_ddl(columns)
    elif (
        classification == "avro"
        and columns
        and not {"schema", "avroschema", *AVRO_SCHEMA_SOURCES} & set(lowered)
    ):
        # the console's "define a schema": Glue builds the record schema from the columns
        options["schema"] = columns_avro_schema(columns)
    return options


def catalog_sink(
    table: Mapping[str, Any], name: TableName, additional_options: Mapping[str, Any]
) -> tuple:
    """Where ``write_dynamic_frame.from_catalog`` writes: ``("kinesis", sink options,
    "json", {})`` for a Kinesis table, ``("s3", connection options, format, format
    options)`` for an S3 table (a CSV table's SerDe gives its separator, quote and escape
    characters: :data:`SERDE_CSV_OPTIONS`)."""
    if is_kinesis_table(table):
        options = _kinesis_table_options(table, name)
        keep = {k: v for k, v in options.items() if k in STREAM_KEYS}
        return ("kinesis", merged(keep, dict(additional_options)), "json", {})
    storage = table.get("StorageDescriptor") or {}
    location = str(storage.get("Location") or "")
    if location.startswith(("s3://", "s3a://")):
        keys = [str(k["Name"]) for k in table.get("PartitionKeys") or []]
        classification = table_format(table, name)
        options = merged({"path": location, "partitionKeys": keys}, dict(additional_options))
        serde = (storage.get("SerdeInfo") or {}).get("Parameters") or {}
        format_options = {
            option: str(serde[parameter])
            for parameter, option in SERDE_CSV_OPTIONS
            if classification == "csv" and serde.get(parameter)
        }
        return ("s3", options, classification, format_options)
    raise GlueError(
        f"{name} is neither a Kinesis table (typeOfData=kinesis) nor an S3 table "
        f"(Location {location!r}); this layer writes Kinesis streams and S3"
    )
