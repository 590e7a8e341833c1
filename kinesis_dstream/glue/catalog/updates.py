"""``enableUpdateCatalog``: the Data Catalog updated by a write to S3, as Glue's ETL jobs
update it ("Creating tables, updating the schema, and adding new partitions in the Data
Catalog from AWS Glue ETL jobs").

Before the files are written (so a table that cannot be made leaves no files behind): the
script's ``partitionKeys`` must be the table's, in order, as Glue requires; a table not
yet in the catalog (``setCatalogInfo`` naming a new one) is created with the frame's
columns, the partition keys and the format's SerDe; with ``updateBehavior``
``UPDATE_IN_DATABASE`` (the default) a table whose columns differ from the frame's gets
the frame's (``UpdateTable``), with ``LOG`` the difference is logged and the table left
as it is (no partition is added then for a frame with columns the table lacks, Glue's
restriction). After the files are written: the partitions the frame wrote that the table
does not have are added (``BatchCreatePartition``: location
``<table location>/<key>=<value>/``, the table's storage otherwise).
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Optional

from ..errors import GlueError, GlueServiceError
from ..options import option_text
from ..sinks.file_sink import DEFAULT_PARTITION, partition_dir
from ..transforms.fields import top_column
from .formats import storage_of
from .tables import TableName, catalog_call

log = logging.getLogger(__name__)

ENABLE_UPDATE_CATALOG = "enableUpdateCatalog"
UPDATE_BEHAVIOR = "updateBehavior"
#: BatchCreatePartition's limit of partitions a call.
PARTITIONS_PER_CALL = 100
#: TableInput's fields (GetTable answers with more, UpdateTable refuses those).
TABLE_INPUT_KEYS = (
    "Name",
    "Description",
    "Owner",
    "Retention",
    "StorageDescriptor",
    "PartitionKeys",
    "TableType",
    "Parameters",
    "ViewOriginalText",
    "ViewExpandedText",
    "TargetTable",
)


class UpdateBehavior(enum.Enum):
    UPDATE_IN_DATABASE = "UPDATE_IN_DATABASE"  # the table takes the frame's columns
    LOG = "LOG"  # a changed schema is logged, the table left as it is


def split_update_options(options: Mapping[str, Any]) -> tuple:
    """(``options`` without the catalog's, the :class:`UpdateBehavior` when
    ``enableUpdateCatalog`` is true, else None)."""
    rest = {
        k: v
        for k, v in options.items()
        if k.lower() not in (ENABLE_UPDATE_CATALOG.lower(), UPDATE_BEHAVIOR.lower())
    }
    lowered = {k.lower(): v for k, v in options.items()}
    enabled = option_text(lowered.get(ENABLE_UPDATE_CATALOG.lower(), False)).strip().lower()
    behavior_text = option_text(
        lowered.get(UPDATE_BEHAVIOR.lower()) or UpdateBehavior.UPDATE_IN_DATABASE.value
    )
    try:
        behavior = UpdateBehavior(behavior_text.strip().upper())
    except ValueError:
        raise GlueError(
            f"option updateBehavior={behavior_text!r}: one of "
            f"{', '.join(b.value for b in UpdateBehavior)}"
        ) from None
    return rest, behavior if enabled == "true" else None


def hive_columns(schema: Any, skip: tuple = ()) -> list:
    """A Spark schema's fields as catalog columns (their Hive type names)."""
    return [
        {"Name": f.name, "Type": f.dataType.simpleString()} for f in schema if f.name not in skip
    ]


@dataclass
class CatalogUpdate:
    """The update of table ``name`` (``table`` its GetTable answer, None when new)."""

    client: Any
    name: TableName
    table: Optional[dict]
    behavior: UpdateBehavior
    #: False when LOG found frame columns the table lacks: Glue then adds no partitions.
    partitions_allowed: bool = True
    #: Where the files are written (the sink's path, which may differ from the table's
    #: Location): the partitions added point there, so the data is seen through the table.
    location: str = ""

    def prepare(self, schema: Any, fmt: str, location: str, keys: tuple, sep: str = ",") -> None:
        """Before any file is written: Glue's rule (the script's partition keys are the
        table's, in order), then the table created or its schema updated, so a write
        whose table cannot be made leaves no files the catalog does not know."""
        self.check_keys(keys)
        self.location = location
        columns = hive_columns(schema, keys)
        if self.table is None:
            self.table = self._create(columns, fmt, location, keys, sep)
        elif _column_types(self.table) != _column_types(
            {"StorageDescriptor": {"Columns": columns}}
        ):
            self._schema_changed(columns)

    def check_keys(self, keys: tuple) -> None:
        if self.table is None:
            return
        have = tuple(str(k["Name"]) for k in self.table.get("PartitionKeys") or [])
        # the Data Catalog keeps names in lower case (Hive's rule): "Region" is "region"
        if tuple(k.lower() for k in have) != tuple(k.lower() for k in keys):
            raise GlueError(
                f"enableUpdateCatalog: partitionKeys {list(keys)} are not {self.name}'s "
                f"partition keys {list(have)} (same keys, same order, as Glue requires)"
            )

    def add_written_partitions(self, df: Any, keys: tuple) -> None:
        """After the write: the partitions of ``df`` the table does not have, added
        (their values: one small Spark job)."""
        if keys and self.partitions_allowed:
            rows = df.select(*[top_column(k).cast("string") for k in keys]).distinct().collect()
            self.add_partitions(keys, [tuple(row) for row in rows])

    def _call(self, operation: str, fn: Any) -> Any:
        return catalog_call(
            self.client,
            operation,
            fn,
            f"{operation} of {self.name}",
            f"{operation} of {self.name}: database {self.name.database!r} is not in the Glue "
            "Data Catalog (Glue's CreateDatabase makes it)",
        )

    def _create(self, columns: list, fmt: str, location: str, keys: tuple, sep: str) -> dict:
        types = {c["Name"]: c["Type"] for c in columns}
        table = {
            "Name": self.name.table,
            "StorageDescriptor": storage_of(fmt, location, columns, sep),
            "PartitionKeys": [{"Name": k, "Type": "string"} for k in keys],
            "TableType": "EXTERNAL_TABLE",
            "Parameters": {"classification": fmt},
        }
        self._call(
            "CreateTable", lambda: self.client.create_table(**self._where(), TableInput=table)
        )
        log.info("created %s (%d columns: %s)", self.name, len(columns), types)
        return table

    def _schema_changed(self, columns: list) -> None:
        assert self.table is not None
        if self.behavior is UpdateBehavior.LOG:
            frame = _column_types({"StorageDescriptor": {"Columns": columns}})
            # Glue's rule: with LOG, partitions are added only for a frame whose columns
            # are the table's or a subset of them
            self.partitions_allowed = set(frame) <= set(_column_types(self.table))
            log.warning(
                "%s: the frame's columns %s differ from the table's %s; updateBehavior LOG: "
                "the table is left as it is%s",
                self.name,
                frame,
                _column_types(self.table),
                ""
                if self.partitions_allowed
                else ", and no partition is added (the frame has columns the table lacks)",
            )
            return
        table = {k: v for k, v in self.table.items() if k in TABLE_INPUT_KEYS}
        table["StorageDescriptor"] = {**(table.get("StorageDescriptor") or {}), "Columns": columns}
        self._call(
            "UpdateTable", lambda: self.client.update_table(**self._where(), TableInput=table)
        )
        self.table = {**self.table, **table}
        log.info("updated %s's columns to the frame's: %s", self.name, [c["Name"] for c in columns])

    def add_partitions(self, keys: tuple, rows: list) -> None:
        """Partitions of ``keys`` with values ``rows`` (tuples of strings or None) added
        where the table does not have them already (none when :attr:`partitions_allowed`
        is False)."""
        assert self.table is not None
        if not self.partitions_allowed:
            return
        storage = self.table.get("StorageDescriptor") or {}
        base = str(self.location or storage.get("Location") or "").rstrip("/")
        inputs = []
        for values in rows:
            texts = [DEFAULT_PARTITION if v is None or v == "" else v for v in values]
            inputs.append(
                {
                    "Values": texts,
                    "StorageDescriptor": {
                        **storage,
                        "Location": f"{base}/{partition_dir(list(keys), values)}/",
                    },
                }
            )
        added = 0
        for start in range(0, len(inputs), PARTITIONS_PER_CALL):
            chunk = inputs[start : start + PARTITIONS_PER_CALL]
            answer = self._call(
                "BatchCreatePartition",
                lambda chunk=chunk: self.client.batch_create_partition(
                    **self._where(), TableName=self.name.table, PartitionInputList=chunk
                ),
            )
            failed = [
                e
                for e in answer.get("Errors") or []
                if (e.get("ErrorDetail") or {}).get("ErrorCode") != "AlreadyExistsException"
            ]
            if failed:
                first = failed[0]
                raise GlueServiceError(
                    f"BatchCreatePartition of {self.name}: {len(failed)} partitions not added, "
                    f"the first {first.get('PartitionValues')}: {first.get('ErrorDetail')}"
                )
            added += len(chunk) - len(answer.get("Errors") or [])
        log.info(
            "%s: %d partitions written, %d of them new in the catalog",
            self.name,
            len(inputs),
            added,
        )

    def _where(self) -> dict:
        where = {"DatabaseName": self.name.database}
        if self.name.catalog_id:
            where["CatalogId"] = self.name.catalog_id
        return where


def _column_types(table: Mapping[str, Any]) -> list:
    columns = (table.get("StorageDescriptor") or {}).get("Columns") or []
    return [(str(c["Name"]).lower(), str(c["Type"]).lower().replace(" ", "")) for c in columns]
