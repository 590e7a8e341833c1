"""Where this layer writes: the connection types and S3 formats it provides, and the one
line that refuses the others, at a write (:mod:`.writers`, :mod:`.file_target`) and
before the job starts (:mod:`~kinesis_dstream.glue.job.script_check`).

Glue writes many more (AWS's "Connection types and options for ETL" page); a streaming
job commonly writes S3, Kinesis, DynamoDB, Kafka, JDBC databases, Redshift and
OpenSearch. Of those the local AWS (moto) serves S3, Kinesis and DynamoDB with their
data; the others' data planes are not AWS APIs moto serves.
"""

from __future__ import annotations

from typing import Any, Optional

from ..errors import NotProvidedError, not_provided

#: The connection types ``write_dynamic_frame`` writes here.
WRITE_CONNECTION_TYPES = ("kinesis", "s3", "dynamodb")
#: The S3 formats written here, and the format each is written as.
S3_FORMATS = {
    "json": "json",
    "csv": "csv",
    "parquet": "parquet",
    "glueparquet": "parquet",
    "avro": "avro",
}
#: Connection types AWS documents for Glue's writers and readers (a script may name them).
GLUE_CONNECTION_TYPES = (
    *WRITE_CONNECTION_TYPES,
    "kafka",
    "documentdb",
    "mongodb",
    "mysql",
    "postgresql",
    "oracle",
    "sqlserver",
    "redshift",
    "opensearch",
    "azurecosmos",
    "azuresql",
    "bigquery",
    "snowflake",
    "teradata",
    "vertica",
    "saphana",
    "orc",
    "custom.jdbc",
    "custom.spark",
    "custom.athena",
    "marketplace.jdbc",
    "marketplace.spark",
    "marketplace.athena",
)


def connection_refusal(
    connection_type: Any, where: str = "write_dynamic_frame.from_options"
) -> Optional[NotProvidedError]:
    """The error for a write to ``connection_type`` this layer does not provide, else
    None."""
    if str(connection_type).strip().lower() in WRITE_CONNECTION_TYPES:
        return None
    return not_provided(
        f"{where}(connection_type={connection_type!r})",
        f"this layer writes connection_type {', '.join(repr(t) for t in WRITE_CONNECTION_TYPES)}",
    )


def s3_format_refusal(fmt: Any) -> Optional[NotProvidedError]:
    """The error for S3 output in a format this layer does not write, else None."""
    if str(fmt or "").strip().lower() in S3_FORMATS:
        return None
    return not_provided(
        f"write_dynamic_frame to s3 in format {fmt!r}", f"formats: {', '.join(S3_FORMATS)}"
    )
