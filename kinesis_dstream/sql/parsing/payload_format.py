"""How payloads are read: Glue's classification and its options, checked as a whole.

``classification`` json / csv (``schema`` DDL or ``inferSchema``, ``delimiter``), avro
(the writer's schema in ``schema`` or the deprecated ``avroSchema``, or a Glue Schema
Registry schema: :mod:`.registry`), grok (``grokPattern``, ``grokCustomPatterns``:
:mod:`.grok`). Every problem is a ValueError naming the option and its value.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Optional

from pyspark.sql.types import StructType

from . import payload_avro, payload_types
from .grok import GrokError, GrokPattern, compile_grok
from .registry import REGISTRY_OPTIONS, RegistrySchema

CLASSIFICATIONS = ("json", "csv", "avro", "grok")
DEFAULT_DELIMITER = ","


@dataclass(frozen=True)
class PayloadFormat:
    """How payloads are read: built from Glue's options by :meth:`parse`."""

    classification: str
    delimiter: str = DEFAULT_DELIMITER
    schema_text: Optional[str] = None  # DDL for json/csv/grok, Avro JSON for avro
    infer_schema: bool = False
    #: classification grok: the compiled grokPattern (its fields are the columns).
    grok: Optional[GrokPattern] = None
    #: classification avro from the Glue Schema Registry (registry-framed records).
    registry: Optional[RegistrySchema] = None

    @classmethod
    def parse(
        cls,
        classification: Optional[str],
        schema_text: Optional[str] = None,
        delimiter: Optional[str] = None,
        infer_schema: Any = False,
        avro_schema: Optional[str] = None,
        grok_pattern: Optional[str] = None,
        grok_custom_patterns: Optional[str] = None,
        registry: Optional[RegistrySchema] = None,
    ) -> PayloadFormat:
        """Glue's ``classification``, ``schema``, ``delimiter``, ``inferSchema``,
        (deprecated) ``avroSchema``, ``grokPattern``, ``grokCustomPatterns`` and the
        registry's options; ValueError naming the option and its value."""
        kind = (classification or "").strip().lower()
        if kind not in CLASSIFICATIONS:
            raise ValueError(
                f"option classification={classification!r} is not supported; "
                f"supported: {', '.join(CLASSIFICATIONS)}"
            )
        infer = _parse_bool("inferSchema", infer_schema)
        if kind != "grok" and (grok_pattern or grok_custom_patterns):
            name = "grokPattern" if grok_pattern else "grokCustomPatterns"
            raise ValueError(f"option {name} is for classification grok, not {kind!r}")
        if registry is not None and kind != "avro":
            names = ", ".join(REGISTRY_OPTIONS[:5])
            raise ValueError(f"options {names} are for classification avro, not {kind!r}")
        if registry is not None and (schema_text or avro_schema):
            given = "schema" if schema_text else "avroSchema"
            raise ValueError(
                f"options {given} and the registry's ({registry.describe()}) both give the "
                "Avro schema; give one"
            )
        if kind == "avro" and not schema_text:
            schema_text = avro_schema
        elif avro_schema and kind != "avro":
            raise ValueError(f"option avroSchema is for classification avro, not {kind!r}")
        if schema_text is not None and not schema_text.strip():
            raise ValueError(f"option schema={schema_text!r} is empty")
        grok = None
        if kind == "grok":
            try:
                grok = compile_grok(grok_pattern, grok_custom_patterns)
            except GrokError as exc:
                raise ValueError(str(exc)) from None
            infer = False  # the columns come from the pattern (or schema picks them)
        elif kind == "avro":
            _check_avro(infer, schema_text, registry)
        elif not infer and not schema_text:
            raise ValueError(
                f"classification {kind} needs option schema (DDL, e.g. "
                '"`column1` INT, `column2` STRING") or inferSchema=true'
            )
        sep = DEFAULT_DELIMITER if delimiter is None else delimiter
        if kind == "csv" and (len(sep) != 1 or sep in '"\r\n'):
            raise ValueError(
                f"option delimiter={delimiter!r} must be one character (not a quote or a "
                "line break)"
            )
        return cls(kind, sep, None if infer else schema_text, infer, grok, registry)

    def payload_ddl(self) -> Optional[str]:
        """The payload columns' DDL when known without data (None with inferSchema)."""
        if self.classification == "avro":
            return payload_types.struct_ddl(self.avro_struct())
        if self.grok is not None and not self.schema_text:
            return payload_types.struct_ddl(self.grok.struct)
        return self.schema_text

    def avro_text(self) -> str:
        """The reader's Avro schema: the registry's resolved version, or option schema."""
        if self.registry is not None:
            if self.registry.reader is None:
                raise ValueError(f"{self.registry.describe()} is not resolved yet")
            return self.registry.reader.definition
        assert self.schema_text is not None, "classification avro has a schema"
        return self.schema_text

    def avro_struct(self) -> StructType:
        """The payload columns of classification avro (from the Avro schema)."""
        schema = payload_avro.parse_avro_schema(self.avro_text())
        return payload_avro.payload_struct(schema)

    def resolved(self, region_name: str, credentials: Any = None) -> PayloadFormat:
        """With a registry schema: its reader version looked up (once, on the driver)."""
        if self.registry is None:
            return self
        return replace(self, registry=self.registry.resolve(region_name, credentials))


def _check_avro(infer: bool, schema_text: Optional[str], registry: Any) -> None:
    if infer:
        raise ValueError(
            "option inferSchema=true is not supported for classification avro: give the "
            "writer's Avro schema in option schema, or the registry's schema"
        )
    if registry is not None:
        return
    if not schema_text:
        raise ValueError(
            "classification avro needs option schema (an Avro schema), or registryName and "
            "schemaName (a Glue Schema Registry schema)"
        )
    try:
        payload_avro.parse_avro_schema(schema_text)
    except ValueError as e:
        raise ValueError(f"option schema: {e}") from e


def _parse_bool(option: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text not in ("true", "false"):
        raise ValueError(f"option {option}={value!r} must be true or false")
    return text == "true"
