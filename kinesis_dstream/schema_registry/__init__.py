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

from .framing import (
    COMPRESSION_NONE,
    COMPRESSION_ZLIB,
    HEADER_BYTES,
    HEADER_VERSION,
    MAX_INFLATED_BYTES,
    RegistryPayloadError,
    SchemaVersionNotFoundError,
    frame,
    unframe,
)
from .serializer import DEFAULT_REGISTRY, GlueSchemaRegistrySerializer
from .versions import (
    NOT_FOUND,
    REGISTRY_BACKOFF,
    GlueSchemaRegistryDeserializer,
    SchemaVersion,
    SchemaVersionCache,
    decode,
    get_schema_version,
    parse_avro_schema,
    registry_client,
    shared_cache,
)

__all__ = [
    "COMPRESSION_NONE",
    "COMPRESSION_ZLIB",
    "DEFAULT_REGISTRY",
    "HEADER_BYTES",
    "HEADER_VERSION",
    "MAX_INFLATED_BYTES",
    "NOT_FOUND",
    "REGISTRY_BACKOFF",
    "GlueSchemaRegistryDeserializer",
    "GlueSchemaRegistrySerializer",
    "RegistryPayloadError",
    "SchemaVersion",
    "SchemaVersionCache",
    "SchemaVersionNotFoundError",
    "decode",
    "frame",
    "get_schema_version",
    "parse_avro_schema",
    "registry_client",
    "shared_cache",
    "unframe",
]
